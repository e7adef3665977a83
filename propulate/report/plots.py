"""The report's interactive figures (Plotly): convergence with every evaluation, parallel
coordinates and the parameter landscape of a task, the LCM task correlation, and TLA
predictions against measurements. Each function returns a :class:`~propulate.report.
interactive.Plot`; the static PNGs of :mod:`propulate.report.figures` remain the files of the
report's figures folder.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from propulate.report.collect import Run, Tla1, transfer_points
from propulate.report.interactive import (
    Plot,
    hover_data,
    importance,
    log_axis,
    log_coordinates,
    make_plot,
    numeric_axis,
    params_text,
    point_budget,
    run_colour,
    sample_note,
    sample_runs,
    short,
)
from propulate.report.model import model_predictions
from propulate.report.runspec import log_parameters
from propulate.runs.table import best_so_far


def _go() -> Any:
    import plotly.graph_objects as go

    return go


def step_rows(curve: pd.DataFrame) -> pd.DataFrame:
    """The rows a best-so-far step line needs: each change of the best loss, and the last."""
    best = curve["best_loss"]
    change = best.ne(best.shift()) & best.notna()
    change.iloc[-1:] = True
    return curve[change]


def _parameters(runs: Sequence[Run]) -> list[str]:
    """The parameters of a task's runs, in the order they first appear."""
    out: list[str] = []
    for run in runs:
        out += [p for p in run.history.attrs.get("parameters", []) if p not in out]
    return out


def convergence_plot(task: str, runs: Sequence[Run]) -> Plot:
    """Best loss so far over evaluations and over wall time, with every evaluation as a point
    (a sample of one budget for the plot, shared by the runs, when there are too many).

    Evaluations without a loss (failed, timed out, pruned) are drawn as grey crosses at the
    best loss so far, so their status can be read by hovering them. The left panel's points
    show their parameters on hover, the right panel's their evaluation number.
    """
    from plotly.subplots import make_subplots

    go = _go()
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.04)
    curves = [(run, best_so_far(run.history)) for run in runs]
    curves = [(run, c) for run, c in curves if c["best_loss"].notna().any()]
    total = sum(len(c) for _, c in curves)
    budget = point_budget(len(_parameters(runs)))
    sampled = sample_runs([c for _, c in curves], budget)
    shown = sum(len(p) for p in sampled)
    losses: list[float] = []
    for i, ((run, curve), points) in enumerate(zip(curves, sampled, strict=True)):
        losses += [float(v) for v in points["loss"].dropna()]
        ok = points["loss"].notna().to_numpy()
        color = run_colour(i)
        steps = step_rows(curve)
        for col, x in ((1, "evaluation"), (2, "elapsed")):
            fig.add_trace(
                go.Scatter(
                    x=steps[x],
                    y=steps["best_loss"],
                    mode="lines",
                    line={"shape": "hv", "color": color},
                    name=run.label,
                    legendgroup=run.label,
                    showlegend=col == 1,
                    hoverinfo="skip",
                ),
                row=1,
                col=col,
            )
            for sel, marker, label in ((ok, "circle", ""), (~ok, "x", " without loss")):
                if not sel.any():
                    continue
                y = points["loss"] if label == "" else points["best_loss"]
                rows = points[sel]
                hovered = run.history.attrs.get("parameters", []) if col == 1 else ["evaluation"]
                custom, template = hover_data(rows, hovered)
                fig.add_trace(
                    go.Scatter(
                        x=rows[x],
                        y=y[sel],
                        mode="markers",
                        marker={
                            "symbol": marker,
                            "size": 5,
                            "opacity": 0.55,
                            "color": color if label == "" else "#888",
                        },
                        name=f"{run.label} evaluations{label}",
                        legendgroup=run.label,
                        showlegend=False,
                        customdata=custom,
                        hovertemplate=template,
                    ),
                    row=1,
                    col=col,
                )
    fig.update_xaxes(title_text="evaluations", row=1, col=1)
    fig.update_xaxes(title_text="wall time (s)", row=1, col=2)
    fig.update_yaxes(title_text="loss", row=1, col=1)
    if log_axis(losses):
        fig.update_yaxes(type="log")
    fig.update_layout(title=f"task {task}: convergence", hovermode="closest")
    caption = (
        "Lines: best loss so far per run; points: the evaluations (hover for status, MPI rank, "
        "island and repeated measurements, and in the left panel the parameters). Crosses: "
        "evaluations without a loss, drawn at the best loss so far." + sample_note(shown, total)
    )
    return make_plot(f"plot-convergence-{task}", fig, caption)


def _task_frame(runs: Sequence[Run]) -> tuple[pd.DataFrame, list[str], int]:
    """The sampled evaluations with a loss of a task's runs (one budget shared by the runs),
    their parameter columns, and the number of evaluations with a loss before sampling."""
    parameters = _parameters(runs)
    curves = []
    for run in runs:
        curve = best_so_far(run.history)
        curves.append(curve[curve["loss"].notna()].assign(run=run.label))
    if not curves:
        return pd.DataFrame(), parameters, 0
    frames = sample_runs(curves, point_budget(len(parameters)))
    return pd.concat(frames, ignore_index=True), parameters, sum(len(c) for c in curves)


def parallel_plot(task: str, runs: Sequence[Run]) -> Plot | None:
    """Every configuration of a task's runs as one line over its parameters, coloured by loss
    (``None`` without evaluations)."""
    frame, parameters, total = _task_frame(runs)
    if frame.empty or not parameters:
        return None
    go = _go()
    loss = frame["loss"].to_numpy(dtype=float)
    log = log_axis(loss)
    logs = log_parameters(runs)
    dims = []
    for p in parameters:
        raw = list(frame[p].astype(object).fillna("-"))  # a float column takes "-" only as objects
        scaled = log_coordinates(raw) if p in logs else None
        values, axis = scaled if scaled is not None else numeric_axis(raw)
        label = f"{p} (log)" if scaled is not None else p
        dims.append({"label": label, "values": np.asarray(values, dtype=np.float32), **axis})
    colour = np.log10(loss) if log else loss
    # single precision, sent as typed arrays: a line's position needs no more
    dims.append({"label": "log10 loss" if log else "loss", "values": colour.astype(np.float32)})
    fig = go.Figure(
        go.Parcoords(
            line={
                "color": colour,
                "colorscale": "Viridis",
                "reversescale": True,
                "showscale": True,
                "colorbar": {"title": {"text": "log10 loss" if log else "loss"}},
            },
            dimensions=dims,
        )
    )
    fig.update_layout(title={"text": f"task {task}: configurations", "y": 0.98})
    caption = (
        "One line per evaluated configuration (all runs of the task), coloured by its loss "
        "(yellow: best). Drag along an axis to select a range." + sample_note(len(frame), total)
    )
    return make_plot(f"plot-parallel-{task}", fig, caption, top=90)


def landscape_plot(task: str, runs: Sequence[Run]) -> Plot | None:
    """Two parameters against each other, loss as colour: the two that go most with the loss
    (:func:`~propulate.report.interactive.importance`); ``None`` with fewer than two."""
    frame, parameters, total = _task_frame(runs)
    if frame.empty or len(parameters) < 2:
        return None
    go = _go()
    scores = importance(frame, parameters)
    first, second = sorted(parameters, key=lambda p: -scores[p])[:2]
    loss = frame["loss"].to_numpy(dtype=float)
    log = log_axis(loss)
    x, x_axis = numeric_axis(list(frame[first]))
    y, y_axis = numeric_axis(list(frame[second]))
    order = np.argsort(-loss, kind="stable")  # the best drawn last, on top
    custom, template = hover_data(frame.iloc[order], parameters)
    fig = go.Figure(
        go.Scatter(
            x=np.asarray(x)[order],
            y=np.asarray(y)[order],
            mode="markers",
            marker={
                "color": (np.log10(loss) if log else loss)[order],
                "colorscale": "Viridis",
                "reversescale": True,
                "showscale": True,
                "size": 7,
                "colorbar": {"title": {"text": "log10 loss" if log else "loss"}},
            },
            customdata=custom,
            hovertemplate=template,
        )
    )
    logs = log_parameters(runs)  # searched on a log scale: shown on one
    for update, name, axis, coords in (
        (fig.update_xaxes, first, x_axis, x),
        (fig.update_yaxes, second, y_axis, y),
    ):
        log = name in logs and not axis and min(coords, default=0.0) > 0
        update(title_text=f"{name} (log)" if log else name, **({"type": "log"} if log else axis))
    fig.update_layout(title=f"task {task}: {first} and {second}")
    ranked = ", ".join(f"{p} {scores[p]:.2f}" for p in sorted(parameters, key=lambda p: -scores[p]))
    caption = (
        f"The two parameters that go most with the loss in these evaluations (absolute rank "
        f"correlation with the loss, correlation ratio for a categorical one: {ranked}); "
        "colour: loss (yellow: best)." + sample_note(len(frame), total)
    )
    return make_plot(f"plot-landscape-{task}", fig, caption)


def correlation_plot(corr: np.ndarray, tasks: Sequence[str]) -> Plot:
    """Heatmap of the LCM's task correlations, values written in the cells."""
    go = _go()
    fig = go.Figure(
        go.Heatmap(
            z=np.round(corr, 3),
            x=list(tasks),
            y=list(tasks),
            zmin=-1,
            zmax=1,
            colorscale="RdBu",
            reversescale=True,
            texttemplate="%{z:.2f}",
            hovertemplate="%{y} and %{x}: %{z:.3f}<extra></extra>",
            colorbar={"title": {"text": "correlation"}},
        )
    )
    fig.update_yaxes(autorange="reversed")
    fig.update_layout(title="LCM task correlation")
    size = 260 + 40 * len(tasks)
    return make_plot("plot-task-correlation", fig, height=min(size, 800))


def transfer_plot(task: str, tla1: Tla1 | None, tla2: Run | None, model: Path | None) -> Plot:
    """TLA predictions (mean, one-sigma band) against the measured losses on a new task, and
    TLA2's measurements over its evaluations with the TLA1 configuration's as reference."""
    from plotly.subplots import make_subplots

    go = _go()
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.08)
    points = transfer_points(tla1, tla2)
    tla1_loss = tla1[1] if tla1 else None
    pred = model_predictions(model, [p for _, p, _ in points], task) if model and points else None
    if pred is not None:
        mean, low, high = pred
        measured = np.array([m for _, _, m in points])
        for label, symbol in (("TLA1", "star"), ("TLA2", "circle")):
            sel = np.array([lab == label for lab, _, _ in points])
            if not sel.any():
                continue
            fig.add_trace(
                go.Scatter(
                    x=measured[sel],
                    y=mean[sel],
                    mode="markers",
                    name=label,
                    marker={"symbol": symbol, "size": 12 if label == "TLA1" else 7},
                    error_y={
                        "type": "data",
                        "symmetric": False,
                        "array": high[sel] - mean[sel],
                        "arrayminus": mean[sel] - low[sel],
                    },
                    hovertemplate=[
                        f"measured {short(m, 3)}<br>predicted {short(p, 3)} "
                        f"({short(lo, 3)}-{short(hi, 3)})<br>{params_text(c)}<extra>{label}</extra>"
                        for (lab, c, m), p, lo, hi in zip(points, mean, low, high, strict=True)
                        if lab == label
                    ],
                ),
                row=1,
                col=1,
            )
        lo = float(min(measured.min(), low.min()))
        hi = float(max(measured.max(), high.max()))
        fig.add_trace(
            go.Scatter(
                x=[lo, hi],
                y=[lo, hi],
                mode="lines",
                line={"dash": "dot", "color": "black", "width": 1},
                name="predicted = measured",
                hoverinfo="skip",
            ),
            row=1,
            col=1,
        )
    if tla2 is not None and len(tla2.history):
        curve = best_so_far(tla2.history)
        custom, template = hover_data(curve, tla2.history.attrs.get("parameters", []))
        fig.add_trace(
            go.Scatter(
                x=curve["evaluation"],
                y=curve["loss"],
                mode="markers",
                name="TLA2 measured",
                customdata=custom,
                hovertemplate=template,
            ),
            row=1,
            col=2,
        )
        fig.add_trace(
            go.Scatter(
                x=curve["evaluation"],
                y=curve["best_loss"],
                mode="lines",
                line={"shape": "hv"},
                name="TLA2 best so far",
                hoverinfo="skip",
            ),
            row=1,
            col=2,
        )
    if tla1_loss is not None and math.isfinite(tla1_loss):
        last = len(tla2.history) if tla2 is not None and len(tla2.history) else 1
        fig.add_trace(
            go.Scatter(
                x=[1, last],
                y=[tla1_loss, tla1_loss],
                mode="lines",
                line={"dash": "dash", "color": "black"},
                name="TLA1 prediction, measured",
                hovertemplate=f"TLA1 prediction, measured: {short(tla1_loss, 3)}<extra></extra>",
            ),
            row=1,
            col=2,
        )
    values = [m for _, _, m in points] + (list(pred[1]) + list(pred[2]) if pred else [])
    if log_axis(values):  # losses over orders of magnitude: both panels on log axes
        fig.update_xaxes(type="log", row=1, col=1)
        fig.update_yaxes(type="log")
    fig.update_xaxes(title_text="measured loss", row=1, col=1)
    fig.update_yaxes(title_text="predicted loss (LCM)", row=1, col=1)
    fig.update_xaxes(title_text="TLA2 evaluation", row=1, col=2)
    fig.update_yaxes(title_text="loss", row=1, col=2)
    fig.update_layout(title=f"new task {task}: transfer")
    caption = (
        "Left: the extended LCM's prediction (mean, bars: one-sigma band) against the measured "
        "loss of the TLA1 configuration and of every TLA2 evaluation; on the dotted diagonal "
        "the prediction is exact."
        if pred is not None
        else "No model predictions (no extended model for this task)."
    )
    return make_plot(f"plot-transfer-{task}", fig, caption)
