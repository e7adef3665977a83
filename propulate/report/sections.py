"""The report's sections, in the order the page shows them (:data:`SECTIONS`).

Each one implements :class:`propulate.report.section.Section`; adding a section is a class here
(or in its own module) and one line in :data:`SECTIONS`.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from propulate.report.baseline import baseline_section
from propulate.report.benchmarks import benchmark_section
from propulate.report.collect import Run
from propulate.report.figures import convergence_figure, correlation_figure, transfer_figure
from propulate.report.model import task_correlation
from propulate.report.pareto_section import ParetoFronts
from propulate.report.plots import (
    convergence_plot,
    correlation_plot,
    landscape_plot,
    parallel_plot,
    transfer_plot,
)
from propulate.report.pruning import Pruning
from propulate.report.section import Figure, ReportInputs, Section, SectionContent
from propulate.report.sensitivity import Sensitivity
from propulate.report.suite import load_runs, suite_section, suite_text, target_checks
from propulate.report.tables import html_table, summary_html, transfer_table
from propulate.report.tuningdb import tuningdb_section

_TRANSFER_TEXT = (
    "<p>TLA1 predicts the optimum of a new task from the training tasks' optima "
    "(zero tuning evaluations, one measurement); TLA2 tunes it with a small budget "
    "on the LCM extended by the new task, starting from the TLA1 prediction. The "
    "figures put the extended model's predictions (mean, one-sigma band) against the "
    "measured losses; TLA2's own evaluations are in the model's training data.</p>"
)


@dataclass
class BestConfigurations:
    """The aggregated summary: per task and method the best configuration."""

    name: str = "best"
    text_files: tuple[str, ...] = ()

    def build(self, inputs: ReportInputs) -> SectionContent:
        return SectionContent(
            "<h2>Best configurations</h2>\n"
            "<p>Per task and method: the best configuration over all runs, its loss, the "
            "evaluations spent and the wall time in seconds (summed over the runs).</p>\n"
            + summary_html(inputs.table)
        )


@dataclass
class Baseline:
    """Tuned against the untuned default, and a measured landscape."""

    name: str = "baseline"
    text_files: tuple[str, ...] = ("speedup.txt",)

    def build(self, inputs: ReportInputs) -> SectionContent | None:
        text, plain, figures = baseline_section(inputs.table, inputs.campaign.runs, inputs.paired)
        if not text:
            return None
        texts = {"speedup.txt": plain} if plain else {}
        return SectionContent(text, [Figure(n, p) for n, p in figures], texts=texts)


@dataclass
class Suite:
    """A benchmark suite's comparison of the methods."""

    name: str = "suite"
    text_files: tuple[str, ...] = ("suite.txt",)

    def build(self, inputs: ReportInputs) -> SectionContent | None:
        if inputs.suite is None:
            return None
        text, table, figures = suite_section(load_runs(inputs.campaign.searches), inputs.suite)
        return SectionContent(
            text,
            [Figure(n, p) for n, p in figures],
            texts={"suite.txt": suite_text(table, target_checks(table))},
        )


@dataclass
class Convergence:
    """Per task: convergence with every evaluation, the configurations in parallel
    coordinates, and the landscape of the two parameters that go most with the loss."""

    name: str = "convergence"
    text_files: tuple[str, ...] = ()

    def build(self, inputs: ReportInputs) -> SectionContent:
        histories = inputs.campaign.histories()
        by_task: dict[str, list[Run]] = {}
        for run in inputs.campaign.searches:
            by_task.setdefault(run.task, []).append(run)
        figures = [
            Figure(f"convergence_{task}", convergence_figure(task, histories[task]), shown=False)
            for task in sorted(histories)
        ]
        plots = []
        for task in sorted(by_task):
            plots.append(convergence_plot(task, by_task[task]))
            plots += [
                p
                for p in (parallel_plot(task, by_task[task]), landscape_plot(task, by_task[task]))
                if p is not None
            ]
        return SectionContent(
            "<h2>Convergence and configurations</h2>\n<p>Per task: the best loss so far over "
            "evaluations and over wall time with every evaluation, every configuration in "
            "parallel coordinates, and the loss over two parameters.</p>",
            figures,
            plots=plots,
        )


@dataclass
class Model:
    """The fitted LCM's task correlation."""

    name: str = "model"
    text_files: tuple[str, ...] = ()

    def build(self, inputs: ReportInputs) -> SectionContent | None:
        if inputs.model is None:
            return None
        figures, note, plots = [], "", []
        if inputs.model.is_file():
            corr = task_correlation(inputs.model)
            if corr is not None:
                figures.append(Figure("task_correlation", correlation_figure(*corr), shown=False))
                plots.append(correlation_plot(*corr))
            else:
                note = "The model file holds no task coefficients."
        return SectionContent(
            "<h2>Multitask model (LCM)</h2>\n"
            "<p>Correlation between the training tasks in the fitted LCM.</p>",
            figures,
            after=f'<p class="note">{html.escape(note)}</p>' if note else "",
            plots=plots,
        )


@dataclass
class Transfer:
    """TLA1 and TLA2 on the new tasks."""

    name: str = "transfer"
    text_files: tuple[str, ...] = ()

    def build(self, inputs: ReportInputs) -> SectionContent | None:
        campaign = inputs.campaign
        new_tasks = campaign.new_tasks()
        if not new_tasks:
            return None
        figures = [
            Figure(
                f"transfer_{task}",
                transfer_figure(
                    task,
                    campaign.tla1.get(task),
                    campaign.tla2.get(task),
                    campaign.tla2_model(task),
                ),
                shown=False,
            )
            for task in new_tasks
        ]
        plots = [
            transfer_plot(
                task, campaign.tla1.get(task), campaign.tla2.get(task), campaign.tla2_model(task)
            )
            for task in new_tasks
        ]
        table = html_table(transfer_table(new_tasks, campaign.tla1, campaign.tla2))
        return SectionContent(
            f"<h2>Transfer to new tasks</h2>\n{_TRANSFER_TEXT}\n{table}", figures, plots=plots
        )


@dataclass
class TuningDatabase:
    """The tuning database's rows, machines and drift."""

    name: str = "tuningdb"
    text_files: tuple[str, ...] = ()

    def build(self, inputs: ReportInputs) -> SectionContent | None:
        if inputs.tuning_db is None:
            return None
        return SectionContent(tuningdb_section(inputs.tuning_db))


@dataclass
class Benchmarks:
    """Measured benchmark tables the campaign config names."""

    name: str = "benchmarks"
    text_files: tuple[str, ...] = ()

    def build(self, inputs: ReportInputs) -> SectionContent | None:
        text = benchmark_section(inputs.benchmarks)
        return SectionContent(text) if text else None


#: The report's sections, in page order.
SECTIONS: list[Section] = [
    BestConfigurations(),
    Baseline(),
    Suite(),
    Convergence(),
    ParetoFronts(),
    Pruning(),
    Model(),
    Sensitivity(),
    Transfer(),
    TuningDatabase(),
    Benchmarks(),
]
