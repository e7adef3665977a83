"""The benchmark-suite section of the campaign report: methods compared per function.

A suite campaign (config key ``suite``) runs every benchmark function with every method and
seed, at the same budget and number of ranks. This module turns those runs into

* per function a figure of the best loss over wall time, one colour per method: every seed faint,
  the median over the seeds bold;
* a table function x method: median best loss over the seeds with its min and max, the median
  evaluations, wall time (``summary.json``'s ``wall_time``: the optimization, MPI start-up and
  imports excluded) and evaluations per second;
* the target checks of the paper's comparison: propulate's median best loss at most Optuna
  TPE's on at least 6 of 9 functions (``ceil(2/3 n)`` of ``n``), at most random search's on all,
  and propulate's evaluations per second at least 50 x Optuna's on every function.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from propulate.methods import SEARCH_METHODS
from propulate.report.collect import Run
from propulate.report.figures import png, pyplot
from propulate.report.tables import html_table
from propulate.runs.table import best_so_far

#: Method order of the tables and figures: the search methods in the table's order (others
#: follow by name).
METHOD_ORDER = SEARCH_METHODS
#: Quality target against Optuna: fraction of the functions (6 of the paper's 9).
OPTUNA_FRACTION = 6 / 9
#: Speed target: propulate's evaluations per second over Optuna's.
SPEED_RATIO = 50.0


@dataclass
class SuiteRun:
    """One run of a suite campaign.

    Attributes
    ----------
    function, method, run : str
        The function (the run's task), the method and the run id (``seed<N>``).
    best_loss, wall_time, evaluations_per_second : float
        From the run's summary (NaN when missing).
    evaluations : int
        Evaluations in the run's logs.
    history : pandas.DataFrame
        The run's :func:`~propulate.compat.history.best_so_far` curve.
    """

    function: str
    method: str
    run: str
    best_loss: float
    wall_time: float
    evaluations_per_second: float
    evaluations: int
    history: pd.DataFrame


def _num(value: object) -> float:
    try:
        out = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return float("nan")
    return out


def load_runs(runs: Iterable[Run]) -> list[SuiteRun]:
    """Suite runs of a campaign's runs.

    Parameters
    ----------
    runs : iterable of Run
        The runs (:func:`propulate.report.collect.read_run`).

    Returns
    -------
    list of SuiteRun
        One per run with evaluations; best loss, wall time and evaluations per second from
        its summary.
    """
    out = []
    for run in runs:
        df = run.history
        if not len(df):
            continue
        out.append(
            SuiteRun(
                function=run.task,
                method=run.method,
                run=str(run.summary.run),
                best_loss=_num(run.summary.best_loss),
                wall_time=_num(run.summary.wall_time),
                evaluations_per_second=_num(run.summary.evaluations_per_second),
                evaluations=int(len(df)),
                history=best_so_far(df),
            )
        )
    return out


def _methods(runs: Sequence[SuiteRun]) -> list[str]:
    found = {r.method for r in runs}
    return [m for m in METHOD_ORDER if m in found] + sorted(found - set(METHOD_ORDER))


def _functions(runs: Sequence[SuiteRun], order: Sequence[str] | None) -> list[str]:
    found = {r.function for r in runs}
    first = [f for f in order or () if f in found]
    return first + sorted(found - set(first))


def suite_table(runs: Sequence[SuiteRun], order: Sequence[str] | None = None) -> pd.DataFrame:
    """Function x method: median best loss (min, max over seeds) next to the function's known
    minimum, and the medians over the seeds of evaluations, wall time and evaluations per second.

    Parameters
    ----------
    runs : sequence of SuiteRun
        The runs.
    order : sequence of str, optional
        Function order (e.g. the config's); others follow by name.

    Returns
    -------
    pandas.DataFrame
        One row per function and method.
    """
    from propulate.problems.benchmark import FUNCTIONS

    rows = []
    for function in _functions(runs, order):
        known = FUNCTIONS[function].minimum if function in FUNCTIONS else float("nan")
        for method in _methods(runs):
            group = [r for r in runs if r.function == function and r.method == method]
            if not group:
                continue
            loss = np.array([r.best_loss for r in group], dtype=float)
            rows.append(
                {
                    "function": function,
                    "method": method,
                    "seeds": len(group),
                    "median best loss": float(np.nanmedian(loss)),
                    "min best loss": float(np.nanmin(loss)),
                    "max best loss": float(np.nanmax(loss)),
                    "known minimum": known,
                    "evaluations": float(np.median([r.evaluations for r in group])),
                    "median wall time (s)": float(np.nanmedian([r.wall_time for r in group])),
                    "median evals/s": float(
                        np.nanmedian([r.evaluations_per_second for r in group])
                    ),
                }
            )
    return pd.DataFrame(rows)


def _pivot(table: pd.DataFrame, column: str) -> pd.DataFrame:
    return table.pivot(index="function", columns="method", values=column)


def target_checks(table: pd.DataFrame) -> list[tuple[str, str, bool | None]]:
    """The paper's targets on a :func:`suite_table`.

    Returns
    -------
    list of (str, str, bool or None)
        Per target: its statement, the measured result, and whether it is met (None when a
        method it needs is missing).
    """
    checks: list[tuple[str, str, bool | None]] = []
    if table.empty or "propulate" not in set(table["method"]):
        return checks
    loss = _pivot(table, "median best loss")
    speed = _pivot(table, "median evals/s")
    for other, label, need in (
        ("optuna", "Optuna TPE", OPTUNA_FRACTION),
        ("random", "random search", 1.0),
    ):
        if other not in loss:
            checks.append((f"quality vs {label}", f"no {other} runs", None))
            continue
        both = loss[["propulate", other]].dropna()
        wins = [f for f in both.index if both.loc[f, "propulate"] <= both.loc[f, other]]
        n = len(both)
        if not n:
            checks.append((f"quality vs {label}", "no function with both methods", None))
            continue
        k = math.ceil(need * n - 1e-9)
        lost = sorted(set(both.index) - set(wins))
        detail = f"{len(wins)}/{n} functions" + (f" (not on: {', '.join(lost)})" if lost else "")
        checks.append(
            (
                f"propulate's median best loss <= {label}'s on at least {k} of {n} functions",
                detail,
                len(wins) >= k,
            )
        )
    if "optuna" in speed:
        ratio = (speed["propulate"] / speed["optuna"]).dropna()
        if len(ratio):
            detail = (
                f"propulate / optuna evals/s: min {ratio.min():.1f}x ({ratio.idxmin()}), "
                f"median {ratio.median():.1f}x, max {ratio.max():.1f}x over {len(ratio)} functions"
            )
            checks.append(
                (
                    f"propulate's evaluations per second >= {SPEED_RATIO:g} x Optuna's "
                    "on every function",
                    detail,
                    bool(ratio.min() >= SPEED_RATIO),
                )
            )
    return checks


def _step_values(curve: pd.DataFrame, grid: np.ndarray) -> np.ndarray:
    """A best-so-far curve as a step function of wall time, sampled at ``grid``."""
    ok = curve[curve["best_loss"].notna()]
    t = ok["elapsed"].to_numpy(float)
    y = ok["best_loss"].to_numpy(float)
    idx = np.searchsorted(t, grid, side="right") - 1
    out = np.where(idx >= 0, y[np.clip(idx, 0, None)], np.nan) if len(t) else grid * np.nan
    return np.asarray(out, dtype=float)


def suite_figure(function: str, runs: Sequence[SuiteRun]) -> bytes:
    """Best loss over wall time of one function: each seed faint, the median bold, per method.

    Parameters
    ----------
    function : str
        The function (the title).
    runs : sequence of SuiteRun
        That function's runs.

    Returns
    -------
    bytes
        The PNG image.
    """
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.8))
    values = [r.history["best_loss"].dropna() for r in runs]
    finite = np.concatenate([v.to_numpy(float) for v in values]) if values else np.array([])
    for i, method in enumerate(_methods(runs)):
        colour = f"C{i}"
        group = [r for r in runs if r.method == method]
        for r in group:
            ax.step(
                r.history["elapsed"],
                r.history["best_loss"],
                where="post",
                color=colour,
                alpha=0.25,
                lw=0.8,
            )
        ends = [float(r.history["elapsed"].max()) for r in group]
        starts = [
            float(r.history["elapsed"][r.history["elapsed"] > 0].min())
            for r in group
            if (r.history["elapsed"] > 0).any()
        ]
        if not starts:
            continue
        grid = np.geomspace(min(starts), max(ends), 200)
        curves = np.array([_step_values(r.history, grid) for r in group])
        # The median only where every seed has a best loss: a median over fewer seeds could
        # rise again when a late-starting seed comes in.
        full = np.isfinite(curves).all(axis=0)
        median = np.where(full, np.median(np.where(full, curves, 0.0), axis=0), np.nan)
        ax.step(
            grid,
            median,
            where="post",
            color=colour,
            lw=2,
            label=f"{method} (median of {len(group)})",
        )
    ax.set_xscale("log")
    if len(finite) and finite.min() > 0:
        ax.set_yscale("log")
    else:
        ax.set_yscale("symlog", linthresh=1e-2)
    ax.set_xlabel("wall time (s)")
    ax.set_ylabel("best loss")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    ax.set_title(f"{function}: best loss over wall time")
    return png(fig)


def suite_section(
    runs: Sequence[SuiteRun], order: Sequence[str] | None = None
) -> tuple[str, pd.DataFrame, list[tuple[str, bytes]]]:
    """The report's suite section.

    Parameters
    ----------
    runs : sequence of SuiteRun
        The suite's runs.
    order : sequence of str, optional
        Function order.

    Returns
    -------
    tuple of (str, DataFrame, list of (str, bytes))
        The HTML before the figures (heading, targets, table), the table, and the figures as
        ``(name, png)`` (``suite_<function>``).
    """
    table = suite_table(runs, order)
    checks = target_checks(table)
    items = []
    for statement, detail, met in checks:
        verdict = "n/a" if met is None else ("met" if met else "NOT met")
        items.append(f"<li><b>{verdict}</b>: {html.escape(statement)}: {html.escape(detail)}</li>")
    parts = [
        '<h2 id="suite">Benchmark suite</h2>',
        "<p>Every function with every method at the same budget and number of ranks. Per "
        "function and method over the seeds: the median best loss with its min and max (next "
        "to the function's known minimum), and the medians of the evaluations, the wall time "
        "of the optimization in seconds (MPI start-up and imports excluded) and the "
        "evaluations per second.</p>",
        html_table(table),
        "<h3>Targets</h3>",
        "<ul>" + "".join(items) + "</ul>" if items else "<p>No propulate runs.</p>",
        "<p>Best loss over wall time per function: each seed faint, the median over the seeds "
        "bold.</p>",
    ]
    figs = [
        (f"suite_{f}", suite_figure(f, [r for r in runs if r.function == f]))
        for f in _functions(runs, order)
    ]
    return "\n".join(parts), table, figs


def suite_text(table: pd.DataFrame, checks: Sequence[tuple[str, str, bool | None]]) -> str:
    """The suite table and the target checks as plain text (``suite.txt``, the report log)."""
    lines = [table.to_string(index=False, float_format=lambda v: f"{v:.6g}"), "", "targets:"]
    for statement, detail, met in checks:
        verdict = "n/a" if met is None else ("met" if met else "NOT met")
        lines.append(f"  [{verdict}] {statement}: {detail}")
    return "\n".join(lines) + "\n"
