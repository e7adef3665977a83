"""What a run knows before it starts: the facts a plug-in's factory (and ``auto``) is given.

:class:`RunFacts` gathers the space's shape (dimension, how many continuous, integer and
categorical parameters, whether some are conditional), the budget (evaluations, generations,
wall-clock limit), the workers and islands, the objectives and whether a pruner stops
evaluations early. A propagator's factory gets them with its options, so it need not read the
run's whole settings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RunFacts:
    """The facts of one run.

    Attributes
    ----------
    dim : int
        Parameters of the space.
    continuous, integer, categorical : int
        How many of them are floats, integers, categoricals.
    conditional : int
        How many are active only under a condition.
    max_evaluations : int or None
        The evaluation budget over all workers (``None``: no budget).
    generations : int or None
        Generations per worker (``None``: not limited that way).
    time_limit : float or None
        Wall-clock seconds of a start (``None``: unlimited).
    workers : int
        Workers of the run (its ranks divided by ``ranks_per_worker``; 1 when unknown).
    islands : int
        Islands of the run.
    objectives : Any
        The declared :class:`~propulate.runs.declared_objectives.Objectives` (``None``: one loss).
    pruned : bool
        Whether a pruner stops evaluations early.
    ranks_per_worker : int
        MPI ranks of one evaluation.
    seed : int
        The run's seed (what every worker shares, e.g. the design of ``auto``'s landscape probe).
    """

    dim: int = 0
    continuous: int = 0
    integer: int = 0
    categorical: int = 0
    conditional: int = 0
    max_evaluations: int | None = None
    generations: int | None = None
    time_limit: float | None = None
    workers: int = 1
    islands: int = 1
    objectives: Any = None
    pruned: bool = False
    ranks_per_worker: int = 1
    seed: int = 0

    @property
    def several_objectives(self) -> bool:
        """Whether the run searches several objectives at once (no weights to sum them)."""
        return self.objectives is not None and not self.objectives.scalar

    @property
    def budget(self) -> int | None:
        """Evaluations the run may spend, if it knows: ``max_evaluations``, else
        ``generations x workers``."""
        if self.max_evaluations is not None:
            return self.max_evaluations
        if self.generations is not None:
            return self.generations * self.workers
        return None

    @property
    def budget_per_parameter(self) -> float | None:
        """The budget over the number of parameters (at least one), if the run knows it."""
        budget = self.budget
        return None if budget is None else budget / max(self.dim, 1)

    @classmethod
    def of(cls, settings: Any = None, space: Any = None, ranks: int | None = None) -> RunFacts:
        """The facts of a run with ``settings`` (an
        :class:`~propulate.settings.EvolveSettings`), ``space`` and ``ranks`` MPI ranks (each
        may be ``None``: what it would tell stays at its default)."""
        values: dict[str, Any] = {}
        if space is not None:
            from propulate.space.dimensions import Categorical, Integer

            dims = list(space.dimensions.values())
            values.update(
                dim=len(dims),
                integer=sum(isinstance(d, Integer) for d in dims),
                categorical=sum(isinstance(d, Categorical) for d in dims),
                conditional=len(getattr(space, "conditions", {}) or {}),
            )
            values["continuous"] = values["dim"] - values["integer"] - values["categorical"]
        if settings is not None:
            from propulate.runs.declared_objectives import Objectives

            per = max(int(getattr(settings, "ranks_per_worker", 1) or 1), 1)
            values.update(
                max_evaluations=getattr(settings, "max_evaluations", None),
                generations=getattr(settings, "generations", None),
                time_limit=getattr(settings, "time_limit", None),
                islands=int(getattr(settings, "islands", 1) or 1),
                objectives=Objectives.maybe(getattr(settings, "objectives", None)),
                pruned=bool(getattr(settings, "pruner", None)),
                ranks_per_worker=per,
                seed=int(getattr(settings, "seed", 0) or 0),
            )
            if ranks is not None:
                values["workers"] = max(ranks // per, 1)
        elif ranks is not None:
            values["workers"] = max(ranks, 1)
        return cls(**values)

    def describe(self) -> str:
        """The facts in words, e.g. ``10 continuous parameters, 10,000 evaluations, 2 workers``."""
        kinds = [
            f"{n} {what}"
            for n, what in (
                (self.continuous, "continuous"),
                (self.integer, "integer"),
                (self.categorical, "categorical"),
            )
            if n
        ]
        parts = [f"{' + '.join(kinds) or '0'} parameter{'s' if self.dim != 1 else ''}"]
        if self.conditional:
            parts.append(f"{self.conditional} conditional")
        budget = self.budget
        parts.append(f"{budget:,} evaluations" if budget is not None else "no evaluation budget")
        parts.append(f"{self.workers} worker{'s' if self.workers != 1 else ''}")
        if self.objectives is not None and self.objectives.several:
            parts.append(f"{len(self.objectives)} objectives")
        if self.pruned:
            parts.append("a pruner")
        return ", ".join(parts)
