"""Tables and figures of a campaign, and its self-contained HTML report.

The inputs are the files the pipeline stages write: run directories (``evals/`` logs,
``summary.json``, TLA1's ``prediction.json``), the LCM model file and TLA2's extended model.
The modules, by job:

* :mod:`~propulate.report.collect` -- find run directories, read their summaries and records;
* :mod:`~propulate.report.tables` -- the aggregated summary and the transfer table;
* :mod:`~propulate.report.model` -- task correlations and predictions of the fitted LCM;
* :mod:`~propulate.report.figures` -- convergence, task-correlation and transfer figures (PNG);
* :mod:`~propulate.report.plots` -- the same and more as interactive Plotly figures, with
  :mod:`~propulate.report.interactive` (sampling of large runs, plotly.js inlined once);
* :mod:`~propulate.report.suite` -- the benchmark-suite comparison and its targets;
* :mod:`~propulate.report.tuningdb` -- the tuning database's rows and drift table;
* :mod:`~propulate.report.benchmarks` -- measured benchmark tables shown in the report;
* :mod:`~propulate.report.html` -- the self-contained HTML page.
"""

from propulate.report.collect import (
    Campaign,
    Run,
    collect,
    expand_runs,
    is_run_dir,
    read_run,
    read_runs,
    summary_from_records,
)
from propulate.report.figures import convergence_figure, correlation_figure, transfer_figure
from propulate.report.html import build_report
from propulate.report.model import load_model, model_predictions, task_correlation
from propulate.report.suite import (
    METHOD_ORDER,
    OPTUNA_FRACTION,
    SPEED_RATIO,
    SuiteRun,
    load_runs,
    suite_figure,
    suite_section,
    suite_table,
    suite_text,
    target_checks,
)
from propulate.report.tables import SUMMARY_COLUMNS, aggregate, summary_table, transfer_table

__all__ = [
    "METHOD_ORDER",
    "OPTUNA_FRACTION",
    "SPEED_RATIO",
    "SUMMARY_COLUMNS",
    "Campaign",
    "Run",
    "SuiteRun",
    "aggregate",
    "build_report",
    "collect",
    "convergence_figure",
    "correlation_figure",
    "expand_runs",
    "is_run_dir",
    "load_model",
    "load_runs",
    "model_predictions",
    "read_run",
    "read_runs",
    "suite_figure",
    "suite_section",
    "suite_table",
    "suite_text",
    "summary_from_records",
    "summary_table",
    "target_checks",
    "task_correlation",
    "transfer_figure",
    "transfer_table",
]
