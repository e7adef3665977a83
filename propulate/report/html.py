"""The self-contained HTML report of a campaign.

Tables are inline HTML and figures are matplotlib PNGs embedded as base64 ``data:`` URIs, so
the page needs no other file to be read, mailed or archived.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from propulate.paired import read_paired
from propulate.report.baseline import baseline_section
from propulate.report.benchmarks import benchmark_section
from propulate.report.collect import Campaign, collect
from propulate.report.figures import convergence_figure, correlation_figure, transfer_figure
from propulate.report.model import task_correlation
from propulate.report.suite import load_runs, suite_section, suite_text, target_checks
from propulate.report.tables import html_table, summary_html, transfer_table
from propulate.report.tuningdb import tuningdb_section

_CSS = """
body { font-family: sans-serif; max-width: 1100px; margin: 2em auto; color: #222; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
th, td { border-bottom: 1px solid #ccc; padding: 0.3em 0.7em; text-align: left; }
th { background: #f0f0f0; }
img { max-width: 100%; display: block; margin: 0.5em 0 1.5em; }
.note { color: #666; font-size: 0.9em; }
"""

_TRANSFER_TEXT = (
    "<p>TLA1 predicts the optimum of a new task from the training tasks' optima "
    "(zero tuning evaluations, one measurement); TLA2 tunes it with a small budget "
    "on the LCM extended by the new task, starting from the TLA1 prediction. The "
    "figures put the extended model's predictions (mean, one-sigma band) against the "
    "measured losses; TLA2's own evaluations are in the model's training data.</p>"
)


@dataclass
class Sections:
    """The report's content before it becomes HTML.

    Attributes
    ----------
    figures : list of (str, str, bytes)
        ``(name, section, png)``; section is ``convergence``, ``model``, ``transfer``,
        ``baseline`` or ``suite``.
    model_note : str
        A note under the model section (e.g. the model file could not be read).
    suite_html : str
        The suite section's text and table (empty without a suite).
    suite_text : str
        The suite table and target checks as plain text (empty without a suite).
    baseline_html : str
        The tuned-against-default section (empty without a measured default or landscape).
    baseline_text : str
        Its speedup table as plain text.
    tuningdb_html : str
        The tuning-database section (empty without a database).
    benchmark_html : str
        The benchmark files' sections (:mod:`propulate.report.benchmarks`; empty without).
    """

    figures: list[tuple[str, str, bytes]] = field(default_factory=list)
    model_note: str = ""
    suite_html: str = ""
    suite_text: str = ""
    baseline_html: str = ""
    baseline_text: str = ""
    tuningdb_html: str = ""
    benchmark_html: str = ""

    def images(self, section: str) -> list[str]:
        """The ``<img>`` elements of one section's figures."""
        return [_img(png, name) for name, sec, png in self.figures if sec == section]


def _img(png: bytes, alt: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'


def make_sections(
    campaign: Campaign,
    model: str | Path | None,
    suite: Sequence[str] | None,
    table: pd.DataFrame | None = None,
    paired: Sequence[Mapping[str, Any]] = (),
) -> Sections:
    """Draw the figures and the suite comparison of a campaign.

    Parameters
    ----------
    campaign : Campaign
        The runs (:func:`propulate.report.collect.collect`).
    model : path, optional
        The LCM model file (its task correlations become a heatmap).
    suite : sequence of str, optional
        A benchmark suite's functions, in order.
    table : DataFrame, optional
        The aggregated summary; with a measured default it gives the speedup table.
    paired : sequence of mapping, optional
        Paired re-measurement rows for the speedup table (:func:`propulate.paired.read_paired`).
    """
    out = Sections()
    if table is not None:
        out.baseline_html, out.baseline_text, figs = baseline_section(table, campaign.runs, paired)
        out.figures += [(name, "baseline", png) for name, png in figs]
    histories = campaign.histories()
    for task in sorted(histories):
        png = convergence_figure(task, histories[task])
        out.figures.append((f"convergence_{task}", "convergence", png))
    if model is not None and Path(model).is_file():
        corr = task_correlation(model)
        if corr is not None:
            out.figures.append(("task_correlation", "model", correlation_figure(*corr)))
        else:
            out.model_note = "The model file holds no task coefficients."
    for task in campaign.new_tasks():
        png = transfer_figure(
            task, campaign.tla1.get(task), campaign.tla2.get(task), campaign.tla2_model(task)
        )
        out.figures.append((f"transfer_{task}", "transfer", png))
    if suite is not None:
        out.suite_html, table, figs = suite_section(load_runs(campaign.searches), suite)
        out.figures += [(name, "suite", png) for name, png in figs]
        out.suite_text = suite_text(table, target_checks(table))
    return out


def write_figures(folder: str | Path, sections: Sections) -> None:
    """Write every figure to ``folder/<name>.png``, the suite's text to ``suite.txt`` and the
    speedups over the default to ``speedup.txt``."""
    path = Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    for name, _, png in sections.figures:
        (path / f"{name}.png").write_bytes(png)
    if sections.suite_text:
        (path / "suite.txt").write_text(sections.suite_text, encoding="utf-8")
    if sections.baseline_text:
        (path / "speedup.txt").write_text(sections.baseline_text, encoding="utf-8")
    else:
        (path / "speedup.txt").unlink(missing_ok=True)  # none from an earlier report


def render_page(
    title: str,
    table: pd.DataFrame,
    campaign: Campaign,
    sections: Sections,
    *,
    model: bool,
    suite: bool,
) -> str:
    """The HTML page.

    Parameters
    ----------
    title : str
        The campaign name.
    table : DataFrame
        The aggregated summary (:func:`propulate.report.tables.aggregate`).
    campaign : Campaign
        The runs.
    sections : Sections
        The figures and the suite section.
    model, suite : bool
        Whether the page has a model section and a suite section.
    """
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}: propulate campaign report</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>Campaign {html.escape(title)}</h1>",
        f'<p class="note">{len(campaign.runs)} runs, {int(table["evaluations"].sum())} '
        f"evaluations, {table['wall_time'].sum():.1f} s of run wall time.</p>",
        "<h2>Best configurations</h2>",
        "<p>Per task and method: the best configuration over all runs, its loss, the "
        "evaluations spent and the wall time in seconds (summed over the runs).</p>",
        summary_html(table),
    ]
    if sections.baseline_html:
        parts.append(sections.baseline_html)
        parts += sections.images("baseline")
    if suite:
        parts.append(sections.suite_html)
        parts += sections.images("suite")
    parts += [
        "<h2>Convergence</h2>",
        "<p>Best loss so far over evaluations (left) and over wall time (right), per run.</p>",
        *sections.images("convergence"),
    ]
    if model:
        parts.append("<h2>Multitask model (LCM)</h2>")
        parts.append("<p>Correlation between the training tasks in the fitted LCM.</p>")
        parts += sections.images("model")
        if sections.model_note:
            parts.append(f'<p class="note">{html.escape(sections.model_note)}</p>')
    new_tasks = campaign.new_tasks()
    if new_tasks:
        parts += ["<h2>Transfer to new tasks</h2>", _TRANSFER_TEXT]
        parts.append(html_table(transfer_table(new_tasks, campaign.tla1, campaign.tla2)))
        parts += sections.images("transfer")
    if sections.tuningdb_html:
        parts.append(sections.tuningdb_html)
    if sections.benchmark_html:
        parts.append(sections.benchmark_html)
    parts.append("</body></html>")
    return "\n".join(parts)


def build_report(
    summary: str | Path,
    runs: Iterable[str | Path],
    out: str | Path,
    *,
    model: str | Path | None = None,
    figures: str | Path | None = None,
    title: str = "campaign",
    suite: Sequence[str] | None = None,
    tuning_db: str | Path | None = None,
    benchmarks: Sequence[str | Path] = (),
    paired: Sequence[str | Path] = (),
) -> Path:
    """Write the self-contained HTML report of a campaign.

    Parameters
    ----------
    summary : path
        The aggregated ``summary.csv`` (:func:`propulate.report.tables.aggregate`).
    runs : iterable of path
        Run directories (or folders of them): evolutionary runs, MLA, TLA1, TLA2.
    out : path
        The HTML file to write.
    model : path, optional
        The LCM model file; its task correlations become a heatmap.
    figures : path, optional
        A folder to also write every figure to as ``<name>.png``.
    title : str
        The campaign name.
    suite : sequence of str, optional
        For a benchmark-suite campaign, its functions (in order): adds the methods' comparison
        (:mod:`propulate.report.suite`) and writes it as text to ``<figures>/suite.txt``.
    tuning_db : path, optional
        The campaign's tuning database (file or directory): adds its current rows, machines
        and drift table (:mod:`propulate.report.tuningdb`).
    benchmarks : sequence of path
        Benchmark files (JSON tables, :mod:`propulate.report.benchmarks`), one section each.
    paired : sequence of path
        Paired re-measurement files (:mod:`propulate.paired`): their speedups join the table.

    Returns
    -------
    Path
        ``out``.
    """
    table = pd.read_csv(summary)
    campaign = collect(runs)
    rows = [row for path in paired for row in read_paired(path)]
    sections = make_sections(campaign, model, suite, table, rows)
    if tuning_db is not None:
        sections.tuningdb_html = tuningdb_section(tuning_db)
    sections.benchmark_html = benchmark_section(benchmarks)
    if figures is not None:
        write_figures(figures, sections)
    page = render_page(
        title, table, campaign, sections, model=model is not None, suite=suite is not None
    )
    out_path = Path(out)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(page, encoding="utf-8")
    return out_path
