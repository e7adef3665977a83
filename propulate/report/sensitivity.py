"""The report's sensitivity section: which parameters drive the model's prediction, per task.

Sobol indices of the campaign's LCM (:mod:`propulate.sensitivity.model`) for every training
task and for the transfer stage's new tasks (the model's prediction for them), from the stored
model's posterior mean with the default :class:`~propulate.settings.SensitivitySettings`; no
model is refitted. One figure of bar charts (S1 with its confidence interval and ST per
parameter, one panel per task), a heat map of ST over tasks x parameters, and the table as
``sensitivity.txt`` in the report job's log.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from propulate.report.figures import png, pyplot
from propulate.report.interactive import Plot, make_plot
from propulate.report.section import Figure, ReportInputs, SectionContent
from propulate.runs.files import read_json

if TYPE_CHECKING:
    from propulate.sensitivity.model import TaskSensitivity

#: Panels per row of the bar-chart figure.
PANELS_PER_ROW = 4

_TEXT = (
    "<h2>Which parameters matter</h2>\n<p>Sobol indices of the fitted LCM's posterior mean per "
    "task (output: {output}), sampled with SALib (Saltelli's N = {n}). S1 (with its {level} % "
    "bootstrap interval) is the share of the prediction's variance over the parameter space a "
    "parameter explains alone, ST the share it takes part in, interactions included: a "
    "parameter with ST near 0 can be fixed. Tasks marked <em>predicted</em> are the new tasks, "
    "which the model was not trained on: their indices are those of the model's prediction for "
    "them (the LCM extended by the task, as TLA2 starts). Integer and categorical parameters "
    "take their values with equal shares; a constraint is not applied. Each index is an "
    "estimate from the samples and is shown with its interval's half-width (ST ± h): an "
    "estimate a little above 1 or below 0 is sampling error, which its interval covers. "
    "<code>python -m propulate sensitivity</code> computes the same from the command line, and "
    "from a run's records without a model.</p>"
)


def new_task_values(inputs: ReportInputs) -> list[tuple[str, dict[str, Any]]]:
    """The transfer stage's new tasks and their values (from their runs' ``task.json``)."""
    campaign = inputs.campaign
    out = []
    for task in campaign.new_tasks():
        dirs = [r.directory for r in campaign.runs if r.task == task]
        for d in dirs:
            spec = read_json(d / "task.json") or {}
            if isinstance(spec.get("task"), dict):
                out.append((task, dict(spec["task"])))
                break
    return out


def _label(r: TaskSensitivity) -> str:
    return r.id if r.trained else f"{r.id} (predicted)"


def _ticks(set_ticks: Any, positions: Any, names: Sequence[str]) -> None:
    """Parameter names as tick labels, slanted when there are many or long ones."""
    slant = len(names) > 4 or max(len(n) for n in names) > 8
    set_ticks(positions, names, rotation=40 if slant else 0, ha="right" if slant else "center")


def bars_figure(results: Sequence[TaskSensitivity]) -> bytes:
    """One panel per task: S1 (with its confidence interval) and ST per parameter."""
    plt = pyplot()
    n = len(results)
    cols = min(PANELS_PER_ROW, n)
    rows = -(-n // cols)
    names = results[0].indices.names
    width = max(2.6, 0.55 * len(names) + 1.2)
    fig, axes = plt.subplots(
        rows, cols, figsize=(width * cols, 2.6 * rows), squeeze=False, sharey=True
    )
    x = np.arange(len(names))
    for ax, r in zip(axes.flat, results, strict=False):
        ind = r.indices
        ax.bar(x - 0.2, ind.ST, 0.4, yerr=ind.ST_conf, label="ST (total)", color="#4c72b0")
        ax.bar(x + 0.2, ind.S1, 0.4, yerr=ind.S1_conf, label="S1 (alone)", color="#dd8452")
        _ticks(ax.set_xticks, x, names)
        ax.set_title(_label(r), fontsize="medium")
        ax.set_ylim(0, 1.05)
        ax.grid(axis="y", alpha=0.3)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    axes[0, 0].set_ylabel("Sobol index")
    axes[0, 0].legend(fontsize="small")
    fig.tight_layout()
    return png(fig)


def st_label(st: float, conf: float, sep: str = " ") -> str:
    """A total index as the estimate it is: ``"1.01 ± 0.04"`` (the interval's half-width)."""
    return f"{st:.2f}{sep}± {conf:.2f}"


def heatmap_figure(results: Sequence[TaskSensitivity]) -> bytes:
    """Total indices ST over tasks (rows) x parameters (columns), values written in the cells."""
    plt = pyplot()
    names = results[0].indices.names
    data = np.array([r.indices.ST for r in results])
    conf = np.array([r.indices.ST_conf for r in results])
    fig, ax = plt.subplots(figsize=(max(5.0, 2.5 + 0.8 * len(names)), 1.2 + 0.42 * len(results)))
    image = ax.imshow(data, vmin=0.0, vmax=1.0, cmap="viridis", aspect="auto")
    _ticks(ax.set_xticks, range(len(names)), names)
    ax.set_yticks(range(len(results)), [_label(r) for r in results])
    for i in range(data.shape[0]):
        for j in range(data.shape[1]):
            ax.text(
                j, i, st_label(data[i, j], conf[i, j], "\n"), ha="center", va="center",
                fontsize="small",
                color="black" if data[i, j] > 0.6 else "white",
            )  # fmt: skip
    fig.colorbar(image, ax=ax, label="total index ST")
    ax.set_title("total Sobol index per task and parameter")
    fig.tight_layout()
    return png(fig)


def heatmap_plot(results: Sequence[TaskSensitivity]) -> Plot:
    """:func:`heatmap_figure` as an interactive plot; hovering a cell shows S1 and ST with the
    half-widths of their intervals."""
    import plotly.graph_objects as go

    names = list(results[0].indices.names)
    labels = [_label(r) for r in results]
    data = np.array([r.indices.ST for r in results])
    cells = [
        [st_label(st, conf) for st, conf in zip(r.indices.ST, r.indices.ST_conf, strict=True)]
        for r in results
    ]
    hover = [
        [
            f"{html.escape(label)}, {html.escape(name)}<br>"
            f"S1 {r.indices.S1[j]:.3f} ± {r.indices.S1_conf[j]:.3f}<br>"
            f"ST {r.indices.ST[j]:.3f} ± {r.indices.ST_conf[j]:.3f}"
            for j, name in enumerate(names)
        ]
        for r, label in zip(results, labels, strict=True)
    ]
    fig = go.Figure(
        go.Heatmap(
            z=np.round(data, 3),
            x=names,
            y=labels,
            zmin=0.0,
            zmax=1.0,
            colorscale="Viridis",
            texttemplate="%{text}",
            text=cells,
            customdata=hover,
            hovertemplate="%{customdata}<extra></extra>",
            colorbar={"title": {"text": "total index ST"}},
        )
    )
    fig.update_yaxes(autorange="reversed")
    fig.update_layout(title="total Sobol index per task and parameter")
    return make_plot("plot-sensitivity", fig, height=min(200 + 40 * len(results), 800))


@dataclass
class Sensitivity:
    """Sobol indices of the campaign's model per task (training and new tasks)."""

    name: str = "sensitivity"
    text_files: tuple[str, ...] = ("sensitivity.txt",)

    def build(self, inputs: ReportInputs) -> SectionContent | None:
        if inputs.model is None or not inputs.model.is_file():
            return None
        from propulate.report.model import load_model

        model = load_model(inputs.model)
        if model is None or not model.info.get("space"):
            return None
        try:
            import SALib  # noqa: F401 - only to tell whether the extra is installed
        except ImportError:
            return SectionContent(
                '<h2>Which parameters matter</h2>\n<p class="note">Not computed: SALib is '
                "not installed (pip install 'propulate[sensitivity]').</p>"
            )
        from propulate.sensitivity.model import model_sensitivity
        from propulate.sensitivity.tables import sobol_table

        results = model_sensitivity(model)
        new = new_task_values(inputs)
        if new and model.info.get("task_space"):
            results += model_sensitivity(model, [v for _, v in new], ids=[t for t, _ in new])
        first = results[0]
        text = _TEXT.format(
            output=html.escape(first.output),
            n=first.indices.samples,
            level=round(100 * first.indices.conf_level),
        )
        figures = [
            Figure("sensitivity_tasks", bars_figure(results)),
            Figure("sensitivity_heatmap", heatmap_figure(results), shown=False),
        ]
        return SectionContent(
            text,
            figures,
            texts={"sensitivity.txt": sobol_table(results)},
            plots=[heatmap_plot(results)],
        )
