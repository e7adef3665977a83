"""The tuned results against an untuned default, and a runtime landscape over two parameters.

A campaign with a ``default`` configuration measures it on every task (a run of method
``default``, :mod:`propulate.cli.measure`); with a ``landscape`` it also measures a grid over two
parameters on one task (method ``grid``). The report then shows per task and method the
speedup ``default loss / best loss`` (above 1: the tuned configuration is better), and the grid
as a heatmap.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from propulate.remeasure.paired import REFERENCE_METHODS
from propulate.report.collect import Run
from propulate.report.figures import png, pyplot

#: Columns of :func:`speedup_table`.
SPEEDUP_COLUMNS = ("task", "method", "default_loss", "best_loss", "speedup", "evaluations")
#: Columns it adds with paired re-measurements (:mod:`propulate.remeasure.paired`).
PAIRED_COLUMNS = ("paired_speedup", "paired_low", "paired_high", "pairs")


def speedup_table(table: pd.DataFrame, paired: Sequence[Mapping[str, Any]] = ()) -> pd.DataFrame:
    """Per task with a measured default and per tuning method: the speedup over the default.

    Parameters
    ----------
    table : DataFrame
        The aggregated summary (columns ``task``, ``method``, ``best_loss``, ``evaluations``).
    paired : sequence of mapping, optional
        Rows of paired re-measurements (:func:`propulate.remeasure.paired.read_paired`); of several runs
        of one method on a task, the one with the best loss during tuning is shown.

    Returns
    -------
    DataFrame
        Columns :data:`SPEEDUP_COLUMNS`: ``speedup = default_loss / best_loss`` (NaN when either
        is missing or not positive), and with ``paired`` rows :data:`PAIRED_COLUMNS` (the
        median of the per-round ratios, the smallest and largest, the number of rounds); empty
        when no task has a default.
    """
    defaults = {
        str(r.task): float(r.best_loss)
        for r in table.itertuples()
        if r.method == "default" and _positive(r.best_loss)
    }
    best_paired = _best_paired(paired)
    rows = []
    for r in table.itertuples():
        task = str(r.task)
        if task not in defaults or r.method in REFERENCE_METHODS:
            continue
        best = float(r.best_loss) if _positive(r.best_loss) else math.nan
        rows.append(
            {
                "task": task,
                "method": r.method,
                "default_loss": defaults[task],
                "best_loss": best,
                "speedup": defaults[task] / best if _positive(best) else math.nan,
                "evaluations": int(r.evaluations),
                **_paired_columns(best_paired.get((task, str(r.method)))),
            }
        )
    columns = list(SPEEDUP_COLUMNS) + (list(PAIRED_COLUMNS) + ["note"] if paired else [])
    return pd.DataFrame(rows, columns=columns)


def _best_paired(paired: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], Mapping[str, Any]]:
    best: dict[tuple[str, str], Mapping[str, Any]] = {}
    for row in paired:
        key = (str(row["task"]), str(row["method"]))
        if key not in best or row["tuning_loss"] < best[key]["tuning_loss"]:
            best[key] = row
    return best


def _paired_columns(row: Mapping[str, Any] | None) -> dict[str, Any]:
    if row is None:
        return {}
    low, high = float(row["low"]), float(row["high"])
    note = ""
    if low <= 1.0 <= high:  # some rounds favour the default, others the tuned configuration
        note = (
            "no measurable difference: repeated measurements scatter more (ratios "
            f"{low:.3g} to {high:.3g}) than default and tuned differ"
        )
    return {
        "paired_speedup": row["speedup"],
        "paired_low": low,
        "paired_high": high,
        "pairs": int(row["pairs"]),
        "note": note,
    }


def _positive(value: object) -> bool:
    return isinstance(value, int | float) and math.isfinite(value) and value > 0


def speedup_text(speedups: pd.DataFrame) -> str:
    """The speedup table as aligned plain text (the report log and ``speedup.txt``), one row
    per task and method; the notes on measurement spread are in the HTML report only."""
    if speedups.empty:
        return ""
    table = speedups.drop(columns=["note"], errors="ignore")  # a sentence: the HTML has it
    return table.to_string(index=False, float_format=lambda v: f"{v:.3g}") + "\n"


def grid_axes(run: Run) -> tuple[str, str] | None:
    """The two parameters a grid run varies (in the space's order), None unless exactly two."""
    evaluated = [r["params"] for r in run.records]
    names = run.summary.parameters or (list(evaluated[0]) if evaluated else [])
    varying = [n for n in names if len({str(p.get(n)) for p in evaluated}) > 1]
    return (varying[0], varying[1]) if len(varying) == 2 else None


def landscape_figure(run: Run, axes: Sequence[str]) -> bytes:
    """Heatmap of a grid run's loss over two parameters; cells not measured stay blank.

    Parameters
    ----------
    run : Run
        A run of method ``grid`` (its successful evaluations are drawn).
    axes : (str, str)
        The parameters on the x and y axes.

    Returns
    -------
    bytes
        The PNG image.
    """
    x_name, y_name = axes
    points = run.evaluated()
    xs = sorted({r["params"][x_name] for r in run.records})
    ys = sorted({r["params"][y_name] for r in run.records})
    grid = np.full((len(ys), len(xs)), np.nan)
    for params, loss in points:
        grid[ys.index(params[y_name]), xs.index(params[x_name])] = loss
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(1.0 + 0.8 * len(xs), 0.8 + 0.6 * len(ys)))
    image = ax.imshow(grid, origin="lower", cmap="viridis_r", aspect="auto")
    ax.set_xticks(range(len(xs)), [str(v) for v in xs])
    ax.set_yticks(range(len(ys)), [str(v) for v in ys])
    ax.set_xlabel(x_name)
    ax.set_ylabel(y_name)
    low, high = np.nanmin(grid), np.nanmax(grid)
    for (i, j), value in np.ndenumerate(grid):
        if math.isfinite(value):  # dark text on the light (low-loss) end of the colour map
            light = high > low and (value - low) / (high - low) < 0.5
            ax.text(
                j,
                i,
                f"{value:.3g}",
                ha="center",
                va="center",
                fontsize=7,
                color="k" if light else "w",
            )
    fixed = {k: v for k, v in (points[0][0] if points else {}).items() if k not in axes}
    ax.set_title(f"{run.task}: loss over {x_name} x {y_name}" + (f" ({fixed})" if fixed else ""))
    fig.colorbar(image, ax=ax, label="loss")
    return png(fig)


def baseline_section(
    table: pd.DataFrame, runs: Sequence[Run], paired: Sequence[Mapping[str, Any]] = ()
) -> tuple[str, str, list]:
    """The report's "Tuned against the default" section.

    Parameters
    ----------
    table : DataFrame
        The aggregated summary.
    runs : sequence of Run
        Every run of the campaign (grid runs become landscape figures).
    paired : sequence of mapping, optional
        Paired re-measurement rows (:func:`propulate.remeasure.paired.read_paired`).

    Returns
    -------
    (str, str, list of (str, bytes))
        The section's HTML text before the table and figures (empty without a default), its
        plain-text speedup table, and the ``(name, png)`` landscape figures.
    """
    from propulate.report.tables import html_table

    speedups = speedup_table(table, paired)
    figures = []
    for run in runs:
        axes = grid_axes(run) if run.method == "grid" else None
        if axes is not None:
            figures.append((f"landscape_{run.task}", landscape_figure(run, axes)))
    if speedups.empty and not figures:
        return "", "", []
    html = (
        "<h2>Tuned against the default</h2>"
        "<p>Per task and method: the untuned default configuration's measured loss, the best "
        "loss found and the speedup <code>default / best</code> (above 1: better than the "
        "default). On new tasks TLA1 is one measurement of the prediction, TLA2 and random "
        "search spend the budget in the evaluations column.</p>"
    )
    if paired:
        html += (
            "<p>Measurements minutes apart differ by the machine's drift as well, and a best "
            "loss is the minimum of noisy measurements. So the default and each method's best "
            "configuration were measured again in one job, in rounds, back to back in an order "
            "that rotates per round: <code>paired_speedup</code> is the median over the "
            "rounds (<code>pairs</code>) of <code>default / tuned</code>, between "
            "<code>paired_low</code> and <code>paired_high</code>. Read the speedup from it.</p>"
        )
    html += html_table(speedups)
    if figures:
        html += "<p>The measured landscape: every cell is one evaluation; configurations that "
        html += "violate the constraint are never launched and stay blank or off the axes.</p>"
    return html, speedup_text(speedups), figures
