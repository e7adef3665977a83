"""The self-contained HTML report of a campaign.

The page is the campaign's header (what was tuned: :mod:`propulate.report.header`) followed by
the sections of :data:`propulate.report.sections.SECTIONS`, each built from the same
:class:`~propulate.report.section.ReportInputs`. Tables are inline HTML (sorted by a click on a
column's header), interactive figures are Plotly figures drawn by plotly.js, inlined once in
the page (:mod:`propulate.report.interactive`), and static figures are matplotlib PNGs
embedded as base64 ``data:`` URIs, so the page needs no other file to be read, mailed or
archived, and opens offline.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Iterable, Sequence
from pathlib import Path

import pandas as pd

from propulate.remeasure.paired import read_paired
from propulate.report.collect import collect
from propulate.report.header import header_html
from propulate.report.interactive import DRAW_SCRIPT, plot_html, plotly_js
from propulate.report.paired_flag import flag_html
from propulate.report.section import ReportInputs, Section, SectionContent
from propulate.report.sections import SECTIONS

_CSS = """
body { font-family: sans-serif; max-width: 1100px; margin: 2em auto; color: #222; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
th, td { border-bottom: 1px solid #ccc; padding: 0.3em 0.7em; text-align: left; }
th { background: #f0f0f0; }
img { max-width: 100%; display: block; margin: 0.5em 0 1.5em; }
img.plot-still { margin: 0; }
.note { color: #666; font-size: 0.9em; }
figure.plot { margin: 0.5em 0 1.5em; }
figcaption { color: #555; font-size: 0.85em; }
th.sortable { cursor: pointer; }
th.sortable::after { content: " \\2195"; color: #aaa; }
dl.tuned { display: grid; grid-template-columns: max-content auto; gap: 0.2em 1em; }
dl.tuned dt { font-weight: bold; }
dl.tuned dd { margin: 0; }
.flag { border: 2px solid #c33; background: #fff4f4; padding: 0.2em 1em; margin: 1em 0; }
"""

#: Sorts a table by the column whose header is clicked (numbers as numbers, ``-`` last);
#: a second click reverses the order.
SORT_SCRIPT = """
document.querySelectorAll("table").forEach(function (table) {
  var body = table.tBodies[0];
  if (!body || !table.tHead) return;
  Array.from(table.tHead.rows[0].cells).forEach(function (th, col) {
    th.classList.add("sortable");
    th.addEventListener("click", function () {
      var up = th.dataset.order !== "up";
      th.dataset.order = up ? "up" : "down";
      var key = function (row) {
        var text = row.cells[col] ? row.cells[col].textContent.trim() : "";
        var num = Number(text);
        return text === "" || text === "-" ? null : (isNaN(num) ? text : num);
      };
      var rows = Array.from(body.rows);
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        if (x === null || y === null) return (x === null) - (y === null);
        var c = typeof x === typeof y ? (x < y ? -1 : x > y ? 1 : 0)
                                      : (typeof x === "number" ? -1 : 1);
        return up ? c : -c;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
"""


def _img(png: bytes, alt: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'


def build_sections(
    inputs: ReportInputs, sections: Sequence[Section] | None = None
) -> list[tuple[Section, SectionContent]]:
    """Every section (default :data:`SECTIONS`) with something to show, with its content, in
    page order."""
    out = []
    for section in SECTIONS if sections is None else sections:
        content = section.build(inputs)
        if content is not None:
            out.append((section, content))
    return out


def write_figures(
    folder: str | Path,
    built: Sequence[tuple[Section, SectionContent]],
    sections: Sequence[Section] | None = None,
) -> list[Path]:
    """Write every figure to ``folder/<name>.png`` and every section's text files; remove
    text files a section writes that this report did not produce (left by an earlier one).
    Returns the text files written."""
    path = Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    written = []
    for _, content in built:
        for figure in content.figures:
            (path / f"{figure.name}.png").write_bytes(figure.png)
        for name, text in content.texts.items():
            (path / name).write_text(text, encoding="utf-8")
            written.append(path / name)
    for section in SECTIONS if sections is None else sections:
        for name in section.text_files:
            if path / name not in written:
                (path / name).unlink(missing_ok=True)
    return written


def render_page(inputs: ReportInputs, built: Sequence[tuple[Section, SectionContent]]) -> str:
    """The HTML page: the campaign's header, then every built section."""
    table, campaign = inputs.table, inputs.campaign
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(inputs.title)}: propulate campaign report</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>Campaign {html.escape(inputs.title)}</h1>",
        header_html(campaign),  # what was tuned: objective, space, budget, methods, machine
        f'<p class="note">{len(campaign.runs)} runs, {int(table["evaluations"].sum())} '
        f"evaluations, {table['wall_time'].sum():.1f} s of run wall time.</p>",
        flag_html(inputs.paired),  # the paired rounds overruling the tuning, first
    ]
    plots = [plot for _, content in built for plot in content.plots]
    if plots:  # before the plots' scripts: the page opens without any other file
        parts.append(f"<script>{plotly_js()}</script>")
    for _, content in built:
        parts.append(content.html)
        parts += [plot_html(p) for p in content.plots]
        parts += [_img(f.png, f.name) for f in content.figures if f.shown]
        if content.after:
            parts.append(content.after)
    parts.append(f"<script>{SORT_SCRIPT}</script>")
    if plots:
        parts.append(f"<script>{DRAW_SCRIPT}</script>")
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
        A folder to also write every figure to as ``<name>.png`` and the sections' text files
        (``suite.txt``, ``speedup.txt``).
    title : str
        The campaign name.
    suite : sequence of str, optional
        For a benchmark-suite campaign, its functions (in order): adds the methods' comparison
        (:mod:`propulate.report.suite`).
    tuning_db : path, optional
        The campaign's tuning database (file or directory): adds its current rows, machines
        and drift table (:mod:`propulate.report.tuningdb`).
    benchmarks : sequence of path
        Benchmark files (JSON tables, :mod:`propulate.report.benchmarks`), one section each.
    paired : sequence of path
        Paired re-measurement files (:mod:`propulate.remeasure.paired`): their speedups join the table.

    Returns
    -------
    Path
        ``out``.
    """
    inputs = ReportInputs(
        title=title,
        table=pd.read_csv(summary),
        campaign=collect(runs),
        model=None if model is None else Path(model),
        suite=suite,
        tuning_db=None if tuning_db is None else Path(tuning_db),
        benchmarks=[Path(b) for b in benchmarks],
        paired=[row for path in paired for row in read_paired(path)],
    )
    built = build_sections(inputs)
    if figures is not None:
        write_figures(figures, built)
    out_path = Path(out)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(render_page(inputs, built), encoding="utf-8")
    return out_path
