"""The interactive figure of the several-objectives section: per task, every run's evaluations
with the task's Pareto front (hover a front point for its configuration), and each run's
hypervolume over its evaluations. One point budget per plot, as the other interactive figures
(:func:`propulate.report.interactive.sample_note`); the front is always drawn whole.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

import numpy as np

from propulate.report.interactive import (
    MAX_POINTS,
    Plot,
    make_plot,
    params_text,
    run_colour,
    short,
)
from propulate.runs.declared_objectives import Objectives

#: Objective pairs drawn for three or more objectives (here and in the static figure).
MAX_PAIRS = 3


def _sample(n: int, limit: int, seed: int) -> np.ndarray:
    """Indices of at most ``limit`` of ``n`` rows, uniformly at random, in order."""
    if n <= limit:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size=limit, replace=False))


def pareto_plot(
    task: str,
    objectives: Objectives,
    runs: Mapping[str, np.ndarray],
    params: Mapping[str, Sequence[Mapping[str, Any]]],
    curves: Mapping[str, Sequence[tuple[int, float]]],
    on_front: np.ndarray,
    reference: float,
) -> Plot:
    """The task's evaluations and front (natural units), then the hypervolume curves.

    Parameters
    ----------
    task : str
        The task's id.
    objectives : Objectives
        The declared objectives.
    runs : mapping
        Run label to its successful evaluations' values signed for minimisation (rows).
    params : mapping
        Run label to the configurations of those rows.
    curves : mapping
        Run label to ``(evaluations, hypervolume)`` points.
    on_front : numpy.ndarray
        Which rows of the runs' values, stacked in ``runs``' order, are Pareto-optimal.
    reference : float
        The hypervolume's reference point in every normalised objective (for the axis title).
    """
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    signs = np.asarray(objectives.signs)
    pairs = objective_pairs(objectives)
    fig = make_subplots(rows=1, cols=len(pairs) + 1, horizontal_spacing=0.08)
    labels = list(runs)
    every = np.vstack([runs[label] for label in labels])
    configs = [p for label in labels for p in params[label]]
    front = every[on_front]
    front_text = [params_text(c) for c, keep in zip(configs, on_front, strict=True) if keep]
    total = len(every)
    shown = 0
    for col, (i, j) in enumerate(pairs, start=1):
        names = (html.escape(objectives.names[i]), html.escape(objectives.names[j]))
        for k, label in enumerate(labels):
            pts = runs[label]
            keep = _sample(len(pts), max(1, MAX_POINTS * len(pts) // total), seed=k)
            if col == 1:
                shown += len(keep)
            fig.add_trace(
                go.Scatter(
                    x=pts[keep, i] * signs[i],
                    y=pts[keep, j] * signs[j],
                    mode="markers",
                    marker={"size": 5, "opacity": 0.45, "color": run_colour(k)},
                    name=label,
                    legendgroup=label,
                    showlegend=col == 1,
                    hovertemplate=f"{html.escape(label)}<br>{names[0]} = %{{x:.4g}}<br>"
                    f"{names[1]} = %{{y:.4g}}<extra></extra>",
                ),
                row=1,
                col=col,
            )
        order = np.lexsort((front[:, j], front[:, i]))
        two = len(objectives) == 2
        fig.add_trace(
            go.Scatter(
                x=front[order, i] * signs[i],
                y=front[order, j] * signs[j],
                mode="lines+markers" if two else "markers",
                line={"shape": "hv", "color": "black", "width": 1.2},
                marker={
                    "size": 8,
                    "color": "rgba(0,0,0,0)",
                    "line": {"color": "black", "width": 1.5},
                },
                name="Pareto front" if two else "Pareto set",
                legendgroup="front",
                showlegend=col == 1,
                customdata=[front_text[o] for o in order],
                hovertemplate=f"Pareto-optimal<br>{names[0]} = %{{x:.4g}}<br>{names[1]} = "
                "%{y:.4g}<br>%{customdata}<extra></extra>",
            ),
            row=1,
            col=col,
        )
        fig.update_xaxes(title_text=axis_label(objectives, i), row=1, col=col)
        fig.update_yaxes(title_text=axis_label(objectives, j), row=1, col=col)
    last = len(pairs) + 1
    for k, label in enumerate(labels):
        curve = curves.get(label) or []
        fig.add_trace(
            go.Scatter(
                x=[e for e, _ in curve],
                y=[v for _, v in curve],
                mode="lines",
                line={"color": run_colour(k)},
                name=label,
                legendgroup=label,
                showlegend=False,
                hovertemplate=f"{html.escape(label)}: hypervolume %{{y:.4f}} after %{{x}} "
                "evaluations<extra></extra>",
            ),
            row=1,
            col=last,
        )
    fig.update_xaxes(title_text="evaluations", row=1, col=last)
    fig.update_yaxes(
        title_text=f"hypervolume (normalised, ref. {short(reference)})", row=1, col=last
    )
    fig.update_layout(title=f"task {task}: objectives", hovermode="closest")
    caption = (
        "Every successful evaluation of each run, the Pareto front over all the task's runs in "
        "black (hover a front point for its configuration), and each run's hypervolume over "
        "its evaluations."
    )
    if shown < total:
        caption += (
            f" For a readable page {shown:,} of {total:,} evaluations are drawn (a uniform "
            f"sample, at most {MAX_POINTS:,} per plot); the front is drawn whole."
        )
    return make_plot(f"plot-pareto-{task}", fig, caption)


def objective_pairs(objectives: Objectives) -> list[tuple[int, int]]:
    """The objective pairs drawn against each other: the one pair of two objectives, the
    first :data:`MAX_PAIRS` of more."""
    return list(combinations(range(len(objectives)), 2))[:MAX_PAIRS]


def axis_label(objectives: Objectives, i: int) -> str:
    """An objective's axis title: its name and direction."""
    return f"{objectives.names[i]} ({objectives.directions[i]})"
