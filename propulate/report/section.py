"""The report's section protocol: a section is one object with a name and a ``build`` method.

A :class:`Section` reads what it needs from :class:`ReportInputs` (the campaign's runs, the
aggregated table, the model file, the tuning database, ...) and returns a
:class:`SectionContent` (its HTML, its figures, text files for the report job's log), or
``None`` when it has nothing to show. The page (:mod:`propulate.report.html`) lists the
sections of :data:`propulate.report.sections.SECTIONS` in order, so a new section is one class
and one line there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import pandas as pd

    from propulate.report.collect import Campaign
    from propulate.report.interactive import Plot


@dataclass
class ReportInputs:
    """Everything a section may read.

    Attributes
    ----------
    title : str
        The campaign name.
    table : DataFrame
        The aggregated summary (:func:`propulate.report.tables.aggregate`).
    campaign : ~propulate.report.collect.Campaign
        The runs by role (:func:`propulate.report.collect.collect`).
    model : Path or None
        The LCM model file.
    suite : sequence of str or None
        A benchmark-suite campaign's functions, in order.
    tuning_db : Path or None
        The campaign's tuning database (file or directory).
    benchmarks : sequence of Path
        Measured benchmark tables (JSON files) to show.
    paired : list of mapping
        Paired re-measurement rows (:func:`propulate.remeasure.paired.read_paired`).
    """

    title: str
    table: pd.DataFrame
    campaign: Campaign
    model: Path | None = None
    suite: Sequence[str] | None = None
    tuning_db: Path | None = None
    benchmarks: Sequence[Path] = ()
    paired: list[Mapping[str, Any]] = field(default_factory=list)


@dataclass
class Figure:
    """One static figure: its file name (without ``.png``) and the PNG bytes.

    ``shown`` is False for a figure the page replaces by an interactive plot: it is then only
    written to the report's figures folder.
    """

    name: str
    png: bytes
    shown: bool = True


@dataclass
class SectionContent:
    """What a section shows.

    Attributes
    ----------
    html : str
        The section's HTML before its figures (its heading, text, tables).
    figures : list of Figure
        Shown after ``html`` (and its plots) unless replaced by a plot, and written as
        ``<name>.png`` into the report's figures folder.
    after : str
        HTML after the figures (notes).
    texts : dict of str to str
        Plain-text files (name to content) written beside the figures and printed into the
        report job's log (e.g. a comparison table).
    plots : list of Plot
        Interactive figures (:mod:`propulate.report.interactive`), shown after ``html``.
    """

    html: str
    figures: list[Figure] = field(default_factory=list)
    after: str = ""
    texts: dict[str, str] = field(default_factory=dict)
    plots: list[Plot] = field(default_factory=list)


class Section(Protocol):
    """One section of the report.

    Attributes
    ----------
    name : str
        A short identifier (``"convergence"``, ``"model"``, ...).
    text_files : tuple of str
        The text files it may write: a report that no longer produces one removes the stale
        file of an earlier report.
    """

    name: str
    text_files: tuple[str, ...]

    def build(self, inputs: ReportInputs) -> SectionContent | None:
        """The section's content, or ``None`` when it has nothing to show."""
        ...
