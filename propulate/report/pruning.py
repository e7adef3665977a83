"""The report's early-stopping section: learning curves (pruned ones in grey) and the compute a
pruner saved.

Shown when some search run's records hold curves (objectives that report intermediate values,
:mod:`propulate.engine.steps`). Per task one figure, one panel per method: every evaluation's
curve, those that finished in colour, pruned ones in grey. Per task and method a table:

``evaluations``, ``pruned``
    Evaluations with a curve, and how many of them a pruner stopped.
``steps``
    Steps run over all of them; ``full_steps`` the steps of a full run (the longest finished
    curve).
``steps_saved``
    The steps the pruned evaluations did not run: ``full_steps`` minus the steps each reached.
``seconds``, ``seconds_saved``
    Evaluation time spent, and the time saved, estimated per pruned evaluation as its
    seconds per step times its steps not run.
``saved_share``
    ``seconds_saved / (seconds + seconds_saved)``: the share of the compute an unpruned search
    of the same evaluations would have spent that the pruner saved.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from propulate.report.collect import Run
from propulate.report.interactive import Plot, log_axis, make_plot, params_text, short
from propulate.report.section import Figure, ReportInputs, SectionContent
from propulate.report.tables import html_table
from propulate.runs.log import Record
from propulate.runs.status import PRUNED, has_loss

#: Most learning curves per method in the interactive plot (every point carries its hover text).
MAX_CURVES = 500

COLUMNS = (
    "task",
    "method",
    "evaluations",
    "pruned",
    "steps",
    "full_steps",
    "steps_saved",
    "seconds",
    "seconds_saved",
    "saved_share",
)


def _curves(records: Iterable[Record]) -> list[Record]:
    return [r for r in records if isinstance(r.get("curve"), list) and r["curve"]]


def saved_rows(runs: Sequence[Run]) -> pd.DataFrame:
    """The table of the module docstring, one row per task and method with curves."""
    groups: dict[tuple[str, str], list[Record]] = {}
    for run in runs:
        recs = _curves(run.records)
        if recs:
            groups.setdefault((run.task, run.method), []).extend(recs)
    rows = []
    for (task, method), recs in sorted(groups.items()):
        finished = [len(r["curve"]) for r in recs if has_loss(r.get("status"))]
        full = max(finished or [len(r["curve"]) for r in recs])
        steps = sum(len(r["curve"]) for r in recs)
        seconds = sum(float(r.get("seconds") or 0.0) for r in recs)
        pruned = [r for r in recs if r.get("status") == PRUNED]
        saved_steps = sum(max(full - len(r["curve"]), 0) for r in pruned)
        saved = sum(
            float(r.get("seconds") or 0.0) / len(r["curve"]) * max(full - len(r["curve"]), 0)
            for r in pruned
        )
        total = seconds + saved
        rows.append(
            {
                "task": task,
                "method": method,
                "evaluations": len(recs),
                "pruned": len(pruned),
                "steps": steps,
                "full_steps": full,
                "steps_saved": saved_steps,
                "seconds": seconds,
                "seconds_saved": saved,
                "saved_share": saved / total if total > 0 else 0.0,
            }
        )
    return pd.DataFrame(rows, columns=list(COLUMNS))


def curves_figure(task: str, runs: Sequence[Run], max_curves: int = 2000) -> bytes:
    """Every evaluation's curve of ``task``, one panel per method: finished ones in colour,
    pruned (and failed) ones in grey; at most ``max_curves`` per panel (the first ones)."""
    from propulate.report.figures import png, pyplot

    by_method: dict[str, list[Record]] = {}
    for run in runs:
        by_method.setdefault(run.method, []).extend(_curves(run.records))
    methods = [m for m in sorted(by_method) if by_method[m]]
    plt = pyplot()
    fig, axes = plt.subplots(
        1, len(methods), figsize=(4.2 * len(methods), 3.4), squeeze=False, sharey=True
    )
    positive = all(p[1] > 0 for m in methods for r in by_method[m] for p in r["curve"])
    for ax, method in zip(axes[0], methods, strict=True):
        recs = by_method[method][:max_curves]
        for rec in sorted(recs, key=lambda r: has_loss(r.get("status"))):  # grey below
            xs = [p[0] for p in rec["curve"]]
            ys = [p[1] for p in rec["curve"]]
            if has_loss(rec.get("status")):
                ax.plot(xs, ys, lw=0.9, alpha=0.8)
            else:
                ax.plot(xs, ys, color="0.6", lw=0.6, alpha=0.5)
        ax.set_title(f"{method}: {len(recs)} runs")
        ax.set_xlabel("step")
        if positive:
            ax.set_yscale("log")
    axes[0][0].set_ylabel(f"{task}: intermediate value")
    return png(fig)


def curves_plot(task: str, runs: Sequence[Run], max_curves: int = MAX_CURVES) -> Plot:
    """:func:`curves_figure` as an interactive plot: one line per evaluation (hover: status,
    loss, parameters), finished ones in colour, pruned and failed ones in grey; at most
    ``max_curves`` per method (the first ones)."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    by_method: dict[str, list[Record]] = {}
    for run in runs:
        by_method.setdefault(run.method, []).extend(_curves(run.records))
    methods = [m for m in sorted(by_method) if by_method[m]]
    fig = make_subplots(rows=1, cols=len(methods), shared_yaxes=True, subplot_titles=methods)
    values: list[float] = []
    note = ""
    for col, method in enumerate(methods, start=1):
        recs = by_method[method]
        if len(recs) > max_curves:
            note = f" At most {max_curves:,} curves per method are drawn (the first ones)."
        for finished, colour in ((False, "#999"), (True, "#1f77b4")):
            xs: list[Any] = []
            ys: list[Any] = []
            texts: list[str] = []
            for rec in recs[:max_curves]:
                if has_loss(rec.get("status")) != finished:
                    continue
                label = f"{rec.get('status')}, loss {short(rec.get('loss'), 3)}"
                last = len(rec["curve"]) - 1
                for i, (step, value) in enumerate(rec["curve"]):
                    xs.append(step)
                    ys.append(value)
                    # the parameters once per curve, at its end (not repeated at every step)
                    end = "<br>" + params_text(rec.get("params") or {}) if i == last else ""
                    texts.append(label + end)
                    values.append(float(value))
                xs.append(None)  # a gap between two evaluations' lines
                ys.append(None)
                texts.append("")
            if xs:
                fig.add_trace(
                    go.Scatter(
                        x=xs,
                        y=ys,
                        mode="lines",
                        line={"color": colour, "width": 1 if finished else 0.7},
                        opacity=0.8 if finished else 0.5,
                        name=f"{method}: {'finished' if finished else 'pruned or failed'}",
                        text=texts,
                        hovertemplate="step %{x}: %{y:.4g}<br>%{text}<extra></extra>",
                    ),
                    row=1,
                    col=col,
                )
        fig.update_xaxes(title_text="step", row=1, col=col)
    fig.update_yaxes(title_text=f"{task}: intermediate value", row=1, col=1)
    if log_axis(values):
        fig.update_yaxes(type="log")
    fig.update_layout(title=f"task {task}: learning curves")
    caption = (
        "Every evaluation's intermediate values per step: finished in colour, stopped by the "
        "pruner (or failed) in grey; hover a line for its status and loss, its last point for its "
        "parameters." + note
    )
    return make_plot(f"plot-curves-{task}", fig, caption)


@dataclass
class Pruning:
    """Learning curves and the compute a pruner saved (only for runs whose objective
    reported intermediate values)."""

    name: str = "pruning"
    text_files: tuple[str, ...] = ("pruning.txt",)

    def build(self, inputs: ReportInputs) -> SectionContent | None:
        runs = [r for r in inputs.campaign.searches if _curves(r.records)]
        if not runs:
            return None
        table = saved_rows(runs)
        tasks = sorted({r.task for r in runs})
        figures = [
            Figure(
                f"curves_{task}",
                curves_figure(task, [r for r in runs if r.task == task]),
                shown=False,
            )
            for task in tasks
        ]
        plots = [curves_plot(task, [r for r in runs if r.task == task]) for task in tasks]
        text = (
            "<h2>Early stopping</h2>\n<p>Every evaluation's intermediate values per step "
            "(finished runs in colour, runs a pruner stopped in grey), and per task and method "
            "the compute the pruner saved: the steps the stopped runs did not run up to a full "
            "run's length, and the seconds that saved (each stopped run's seconds per step "
            "times its steps not run).</p>\n" + html_table(table)
        )
        return SectionContent(text, figures, texts={"pruning.txt": _text(table)}, plots=plots)


def _text(table: pd.DataFrame) -> str:
    def fmt(v: Any) -> str:
        return f"{v:.4g}" if isinstance(v, float) else str(v)

    lines = ["  ".join(table.columns)]
    lines += ["  ".join(fmt(v) for v in row) for row in table.itertuples(index=False)]
    return "\n".join(lines) + "\n"
