"""The report's section on several objectives: the Pareto fronts and the hypervolume over
evaluations of every search run that declared two or more objectives.

Per task, one figure (interactive on the page, :mod:`propulate.report.pareto_plot`; a PNG in
the figures folder): every successful evaluation of each run as a scatter with the task's
front over all its runs as a line (two objectives; three or more: the first pairs side by
side), and each run's hypervolume over its evaluations. The hypervolume is taken after
normalising each objective (signed for minimisation) by the best and worst value any run of
the task reached, with the reference point 1.1 in every objective; ``pareto.txt`` lists per
run its algorithm (:meth:`propulate.methods.Method.label_for`: the Optuna baseline runs NSGA-II
for several objectives), its Pareto set's size and final hypervolume.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import numpy as np

from propulate.methods import METHODS
from propulate.report.collect import Run
from propulate.report.pareto_plot import axis_label, objective_pairs, pareto_plot
from propulate.report.section import Figure, ReportInputs, SectionContent
from propulate.runs.declared_objectives import Objectives
from propulate.runs.dominance import hypervolume, pareto_mask
from propulate.runs.summary import record_loss

#: The reference point of the normalised hypervolume, in every objective.
REFERENCE = 1.1
#: Points of each hypervolume curve.
CHECKPOINTS = 40


def run_evaluations(run: Run, objectives: Objectives) -> tuple[np.ndarray, list[dict]]:
    """A run's successful evaluations in start order: their values signed for minimisation
    (rows) and their configurations."""
    recs = [
        r
        for r in run.records
        if record_loss(r) is not None
        and isinstance(r.get("objectives"), dict)
        and all(n in r["objectives"] for n in objectives.names)
    ]
    recs.sort(key=lambda r: float(r.get("start") or 0.0))
    points = [objectives.oriented(r["objectives"]) for r in recs]
    params = [dict(r.get("params") or {}) for r in recs]
    return np.array(points, dtype=float).reshape(-1, len(objectives)), params


def run_points(run: Run, objectives: Objectives) -> np.ndarray:
    """A run's successful evaluations in start order, signed for minimisation (rows)."""
    return run_evaluations(run, objectives)[0]


def hypervolume_curve(
    points: np.ndarray, low: np.ndarray, high: np.ndarray
) -> list[tuple[int, float]]:
    """``(evaluations, hypervolume)`` at up to :data:`CHECKPOINTS` prefixes of ``points``,
    normalised by ``low`` (0) and ``high`` (1), reference point :data:`REFERENCE`."""
    n = len(points)
    if n == 0:
        return []
    span = np.where(high > low, high - low, 1.0)
    scaled = (points - low) / span
    ref = np.full(points.shape[1], REFERENCE)
    stops = sorted({int(k) for k in np.linspace(1, n, min(CHECKPOINTS, n))})
    return [(k, hypervolume(scaled[:k], ref)) for k in stops]


def task_figure(
    task: str,
    objectives: Objectives,
    runs: dict[str, np.ndarray],
    curves: dict[str, list[tuple[int, float]]],
    front: np.ndarray,
) -> bytes:
    """Every run's evaluations with the task's ``front`` (its Pareto-optimal values, signed
    for minimisation; drawn in natural units), then the hypervolume curves."""
    from propulate.report.figures import png, pyplot

    plt = pyplot()
    signs = np.asarray(objectives.signs)
    pairs = objective_pairs(objectives)
    fig, axes = plt.subplots(1, len(pairs) + 1, figsize=(4.5 * (len(pairs) + 1), 3.8))
    for ax, (i, j) in zip(axes, pairs, strict=False):
        for label, pts in runs.items():
            ax.scatter(pts[:, i] * signs[i], pts[:, j] * signs[j], s=6, alpha=0.4, label=label)
        if len(objectives) == 2:
            order = np.lexsort((front[:, j], front[:, i]))
            ax.step(
                front[order, i] * signs[i],
                front[order, j] * signs[j],
                where="post",
                color="black",
                linewidth=1.2,
                label="Pareto front",
            )
        else:
            ax.scatter(
                front[:, i] * signs[i],
                front[:, j] * signs[j],
                s=16,
                facecolors="none",
                edgecolors="black",
                label="Pareto set",
            )
        ax.set_xlabel(axis_label(objectives, i))
        ax.set_ylabel(axis_label(objectives, j))
    axes[0].legend(fontsize=7)
    ax = axes[-1]
    for label, curve in curves.items():
        ax.plot([k for k, _ in curve], [v for _, v in curve], label=label)
    ax.set_xlabel("evaluations")
    ax.set_ylabel(f"hypervolume (normalised, reference {REFERENCE})")
    fig.suptitle(task)
    fig.tight_layout()
    return png(fig)


@dataclass
class ParetoFronts:
    """Runs with several objectives: their fronts and hypervolume over evaluations."""

    name: str = "objectives"
    text_files: tuple[str, ...] = ("pareto.txt",)

    def build(self, inputs: ReportInputs) -> SectionContent | None:
        by_task: dict[str, list[Run]] = {}
        for run in inputs.campaign.searches:
            if run.summary.objectives and len(run.summary.objectives) >= 2:
                by_task.setdefault(run.task, []).append(run)
        figures, rows, plots = [], [], []
        for task in sorted(by_task):
            objectives = Objectives.parse(by_task[task][0].summary.objectives or {})
            same = [r for r in by_task[task] if r.summary.objectives == objectives.as_dict()]
            evaluated = {r.label: run_evaluations(r, objectives) for r in same}
            runs = {label: pts for label, (pts, _) in evaluated.items() if len(pts)}
            if not runs:
                continue
            every = np.vstack(list(runs.values()))
            on_front = pareto_mask(every)
            low, high = every.min(axis=0), every.max(axis=0)
            curves = {label: hypervolume_curve(p, low, high) for label, p in runs.items()}
            png = task_figure(task, objectives, runs, curves, every[on_front])
            figures.append(Figure(f"pareto_{task}", png, shown=False))
            params = {label: evaluated[label][1] for label in runs}
            plots.append(pareto_plot(task, objectives, runs, params, curves, on_front, REFERENCE))
            for run in same:
                if run.label in curves:
                    size = len(run.summary.pareto or [])
                    known = METHODS.get(run.method)
                    algorithm = known.label_for(objectives) if known else run.method
                    hv = curves[run.label][-1][1]
                    rows.append((task, run.label, algorithm, objectives.text(), size, hv))
        if not figures:
            return None
        text = "\n".join(
            f"{task:<16} {label:<24} {algorithm:<16} {declared:<28} pareto {size:>4}  "
            f"hypervolume {hv:.4f}"
            for task, label, algorithm, declared, size, hv in rows
        )
        return SectionContent(
            "<h2>Several objectives</h2>\n<p>Per task: every successful evaluation of each "
            "run with the Pareto front over all its runs (black), and each run's hypervolume "
            "over its evaluations: objectives signed for minimisation, normalised by the best "
            "and worst value any run of the task reached, reference point "
            f"{REFERENCE} in each. The summaries hold the Pareto sets.</p>\n"
            f"<pre>{html.escape(text)}</pre>",
            figures,
            texts={"pareto.txt": text + "\n"},
            plots=plots,
        )
