"""The table of methods: every way a run's records can come about, in one place.

A *method* names what produced a run directory's records (its summary's and records'
``method``). Search methods run under ``python -m propulate evolve --method NAME``; the model
stages (MLA, TLA1, TLA2) and the measurements of given configurations (the untuned default, a
grid) write records under their own names. The command line (``--method`` choices and which
options each method accepts), the campaign's job options, the tuning database's ingestion and the
report read this table, so a new method is one entry here (plus the module that runs it).

This module is imported when the command line is parsed: it imports nothing heavy, and a
method's runner is named as ``"module:function"`` and imported only when the method runs.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from propulate.runs.job import Job
from propulate.settings import EvolveSettings

if TYPE_CHECKING:
    from propulate.engine.result import RunResult


@dataclass(frozen=True)
class Method:
    """One method.

    Attributes
    ----------
    name : str
        The name in records, summaries, ``--method`` and the campaign's ``evolve.methods``.
    label : str
        How tables and figures name it.
    stage : str
        The stage whose results its runs are, for the tuning database: ``evolve`` (a search of
        one task), ``mla``, ``tla1``, ``tla2`` or ``measure`` (given configurations measured,
        no search).
    runner : str or None
        ``"module:function"`` running a search on every rank, ``function(job, comm) ->
        RunResult`` (:class:`Job`); ``None`` for methods ``evolve`` does not run.
    settings : frozenset of str
        The :class:`~propulate.settings.EvolveSettings` fields the runner uses: setting another
        one on the command line is an error, and a campaign passes a run only these.
    initial : bool
        Whether the runner evaluates given initial configurations first (``--initial``).
    starts_from_default : bool
        Whether a campaign with a ``default`` configuration hands it to the method's runs as
        their first evaluation (tuning never does worse than the default).
    several_objectives : bool
        Whether its runs search several objectives at once (``--objectives a:min,b:max``);
        the others refuse them (:func:`check_several_objectives`).
    several_label : str or None
        How tables and figures name its runs of several objectives when it searches them by
        another algorithm (the Optuna baseline's NSGA-II); ``None``: ``label``.
    """

    name: str
    label: str
    stage: str
    runner: str | None = None
    settings: frozenset[str] = frozenset()
    initial: bool = False
    starts_from_default: bool = False
    several_objectives: bool = False
    several_label: str | None = None

    def label_for(self, objectives: Any = None) -> str:
        """How a run declaring ``objectives`` (``None``, a string or mapping as in
        ``--objectives``, or an :class:`~propulate.runs.declared_objectives.Objectives`) is named:
        :attr:`several_label` for two or more objectives, else :attr:`label`."""
        if self.several_label is not None and objectives:
            from propulate.runs.declared_objectives import Objectives

            if Objectives.parse(objectives).several:
                return self.several_label
        return self.label

    @property
    def searches(self) -> bool:
        """Whether its runs search (tune) rather than measure given configurations."""
        return self.stage != "measure"

    def run(self, job: Job, comm: Any) -> RunResult:
        """Run the method on every rank of ``comm`` (collective)."""
        if self.runner is None:
            raise ValueError(f"method {self.name} is not run by evolve")
        module, _, function = self.runner.partition(":")
        runner: Callable[[Job, Any], RunResult] = getattr(importlib.import_module(module), function)
        return runner(job, comm)


#: The settings every search method uses.
COMMON = frozenset(
    {
        "method",
        "seed",
        "max_evaluations",
        "generations",
        "time_limit",
        "failure_limit",
        "progress_interval",
        "pruner",
        "objectives",
        "weights",
    }
)

#: Every method, by name; the search methods first, in the order reports list them.
METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        Method(
            "propulate",
            "island model",
            "evolve",
            "propulate.engine.run:run_islands",
            frozenset(f.name for f in fields(EvolveSettings)),
            initial=True,
            starts_from_default=True,
            several_objectives=True,
        ),
        Method(
            "optuna",
            "Optuna TPE",
            "evolve",
            "propulate.baselines.optuna_worker:run_job",
            COMMON,
            several_objectives=True,
            several_label="Optuna NSGA-II",
        ),
        Method(
            "random",
            "random search",
            "evolve",
            "propulate.engine.run:run_random",
            COMMON | {"eval_timeout", "ranks_per_worker"},
            initial=True,
            several_objectives=True,
        ),
        Method("mla", "MLA", "mla"),
        Method("tla1", "TLA1", "tla1"),
        Method("tla2", "TLA2", "tla2"),
        Method("default", "default", "measure"),
        Method("grid", "grid", "measure"),
    )
}

#: The methods ``evolve --method`` runs, in the table's order.
SEARCH_METHODS: tuple[str, ...] = tuple(n for n, m in METHODS.items() if m.runner is not None)


def method(name: str) -> Method:
    """The method called ``name`` (``ValueError`` listing the known ones)."""
    try:
        return METHODS[name]
    except KeyError:
        raise ValueError(f"unknown method {name!r}; known: {', '.join(METHODS)}") from None


def check_several_objectives(name: str, propagator: str, objectives: Any) -> None:
    """``ValueError`` (one line) unless method ``name`` -- with ``propagator`` for the island
    model -- searches the several declared ``objectives`` (a single-objective propagator
    minimises their weighted sum when they have weights)."""
    from propulate.propagators.registry import PROPAGATORS, check_objectives

    what = f"{len(objectives)} objectives ({', '.join(objectives.names)})"
    if not method(name).several_objectives:
        several = ", ".join(n for n, m in METHODS.items() if m.several_objectives)
        raise ValueError(f"method {name} optimises one objective, not {what}; use {several}")
    if name == "propulate":
        try:
            spec = PROPAGATORS.spec(propagator)
        except ValueError:
            return  # an unknown spec is refused with its own message (plugins.resolve)
        check_objectives(spec.name, objectives)


def is_search(name: str | None) -> bool:
    """Whether runs of method ``name`` search (unknown methods are taken to search)."""
    known = METHODS.get(name or "")
    return known is None or known.searches


def stage_of(name: str | None) -> str | None:
    """The stage of method ``name`` (``None`` for an unknown one)."""
    known = METHODS.get(name or "")
    return None if known is None else known.stage
