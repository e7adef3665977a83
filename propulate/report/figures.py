"""The report's figures, as PNG bytes: convergence, LCM task correlation, transfer."""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from propulate.report.collect import Run, Tla1, transfer_points
from propulate.report.model import model_predictions
from propulate.runs.table import best_so_far


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the file-only Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def png(fig: Any) -> bytes:
    """A matplotlib figure as PNG bytes (100 dpi); the figure is closed."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def convergence_figure(task: str, histories: Mapping[str, pd.DataFrame]) -> bytes:
    """Best loss so far over evaluations and over wall time, one line per run of a task.

    Parameters
    ----------
    task : str
        The task id (the title).
    histories : mapping of str to DataFrame
        Run label (e.g. ``"propulate seed1"``) to its
        :func:`~propulate.compat.history.read_history` frame.

    Returns
    -------
    bytes
        The PNG image.
    """
    plt = pyplot()
    fig, (ax_n, ax_t) = plt.subplots(1, 2, figsize=(10, 3.6))
    for label, df in histories.items():
        curve = best_so_far(df)
        if not curve["best_loss"].notna().any():
            continue
        ax_n.step(curve["evaluation"], curve["best_loss"], where="post", label=label)
        ax_t.step(curve["elapsed"], curve["best_loss"], where="post", label=label)
    ax_n.set_xlabel("evaluations")
    ax_t.set_xlabel("wall time (s)")
    for ax in (ax_n, ax_t):
        ax.set_ylabel("best loss")
        ax.grid(alpha=0.3)
    ax_n.legend(fontsize="small")
    fig.suptitle(f"task {task}: convergence")
    return png(fig)


def correlation_figure(corr: np.ndarray, tasks: Sequence[str]) -> bytes:
    """Heatmap of the LCM's task correlations (PNG bytes).

    Parameters
    ----------
    corr : ndarray (tasks, tasks)
        The correlation matrix (:func:`propulate.report.model.task_correlation`).
    tasks : sequence of str
        The task ids, in the matrix's order.
    """
    plt = pyplot()
    k = len(tasks)
    fig, ax = plt.subplots(figsize=(1.0 + 0.7 * k, 0.6 + 0.6 * k))
    im = ax.imshow(corr, vmin=-1, vmax=1, cmap="RdBu_r")
    ax.set_xticks(range(k), tasks, rotation=45, ha="right")
    ax.set_yticks(range(k), tasks)
    for i in range(k):
        for j in range(k):
            ax.text(j, i, f"{corr[i, j]:.2f}", ha="center", va="center", fontsize=8)
    fig.colorbar(im, ax=ax, label="correlation")
    ax.set_title("LCM task correlation")
    return png(fig)


def _prediction_panel(
    ax: Any, task: str, points: list[tuple[str, Mapping[str, Any], float]], model: Path | None
) -> None:
    """Predicted (mean, one-sigma band) against measured loss, TLA1 and TLA2 points."""
    pred = model_predictions(model, [p for _, p, _ in points], task) if model else None
    if pred is not None and points:
        mean, low, high = pred
        measured = np.array([m for _, _, m in points])
        for label, marker in (("TLA1", "*"), ("TLA2", "o")):
            sel = np.array([lab == label for lab, _, _ in points])
            if sel.any():
                ax.errorbar(
                    measured[sel],
                    mean[sel],
                    yerr=[mean[sel] - low[sel], high[sel] - mean[sel]],
                    fmt=marker,
                    markersize=10 if label == "TLA1" else 5,
                    label=label,
                )
        lo = float(min(measured.min(), low.min()))
        hi = float(max(measured.max(), high.max()))
        ax.plot([lo, hi], [lo, hi], "k:", linewidth=1, label="predicted = measured")
        ax.legend(fontsize="small")
    else:
        ax.text(0.5, 0.5, "no model predictions", ha="center", va="center")
    ax.set_xlabel("measured loss")
    ax.set_ylabel("predicted loss (LCM)")
    ax.grid(alpha=0.3)


def transfer_figure(
    task: str,
    tla1: Tla1 | None,
    tla2: Run | None,
    model_file: str | Path | None,
) -> bytes:
    """Predicted against measured loss on one new task (PNG bytes).

    Left: the model's prediction (mean and one-sigma band, from the extended LCM that
    ``transfer tla2`` writes) against the measured loss of the TLA1 configuration and of every
    TLA2 evaluation, with the diagonal of perfect prediction. Right: TLA2's measured losses and
    its best so far per evaluation, with the measured loss of the TLA1 prediction as reference.

    Parameters
    ----------
    task : str
        The new task's id.
    tla1 : (prediction, measured loss) or None
        The TLA1 ``prediction.json`` content and the measured loss of its configuration.
    tla2 : Run or None
        The TLA2 run.
    model_file : path or None
        The model to predict with.
    """
    plt = pyplot()
    fig, (ax_p, ax_c) = plt.subplots(1, 2, figsize=(10, 3.6))
    points = transfer_points(tla1, tla2)
    tla1_loss = tla1[1] if tla1 else None
    _prediction_panel(ax_p, task, points, Path(model_file) if model_file else None)
    if tla2 is not None and len(tla2.history):
        curve = best_so_far(tla2.history)
        ax_c.plot(curve["evaluation"], curve["loss"], "o", label="TLA2 measured")
        ax_c.step(curve["evaluation"], curve["best_loss"], where="post", label="TLA2 best so far")
    if tla1_loss is not None and math.isfinite(tla1_loss):
        ax_c.axhline(tla1_loss, color="k", linestyle="--", label="TLA1 prediction, measured")
    ax_c.set_xlabel("TLA2 evaluation")
    ax_c.set_ylabel("loss")
    ax_c.grid(alpha=0.3)
    ax_c.legend(fontsize="small")
    fig.suptitle(f"new task {task}: transfer")
    return png(fig)
