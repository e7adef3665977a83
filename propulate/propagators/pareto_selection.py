"""Pareto-aware selection for several objectives (NSGA-II's ranking, kept asynchronous).

Each worker ranks the island population it holds: :class:`ParetoPool` observes every evaluated
individual the worker learns about (its own, its peers', immigrants, resumed ones) and keeps
the island's best ``pop_size`` of them by non-dominated front and crowding distance
(:func:`propulate.runs.dominance.rank_and_crowd`), ranked again as each newcomer joins: the worst of
the ``pop_size + 1`` leaves -- NSGA-II's environmental selection, one individual at a time, as a
steady-state, asynchronous run evaluates them. Breeding reads the pool best first;
:class:`RankTournament` draws parents by binary tournament on that order (the lower front, on a
tie the larger crowding distance, wins).

Workers of one island see the same individuals in different orders, so their pools may differ
slightly; no worker waits for another.

:class:`ParetoSelect` picks emigrants by the same order over the individuals it is given
(:mod:`propulate.engine.migration`), instead of by the first objective alone.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np

from propulate.population import Individual
from propulate.propagators.base import Propagator
from propulate.runs.declared_objectives import Objectives
from propulate.runs.dominance import best_ranked, rank_and_crowd


class ParetoPool(Propagator):
    """The island's ``pop_size`` best individuals by front and crowding, best first.

    Parameters
    ----------
    pop_size : int
        Size of the pool (NSGA-II's population size).
    objectives : Objectives
        The declared objectives (their directions sign the values for minimisation).
    """

    def __init__(self, pop_size: int, objectives: Objectives) -> None:
        super().__init__(-1, -1)
        self.pop_size = pop_size
        self.objectives = objectives
        self.members: list[Individual] = []
        self._points: list[tuple[float, ...]] = []

    def observe(self, individual: Individual) -> None:
        """Take a successful individual in; past ``pop_size`` the worst leaves."""
        values = individual.objectives
        if individual.failed or values is None:
            return
        try:
            point = self.objectives.oriented(values)
        except KeyError:  # a record of another declaration: not comparable
            return
        self.members.append(individual)
        self._points.append(point)
        self._rank()

    def _rank(self) -> None:
        """Order the members best first, past ``pop_size`` without the worst; members that
        left the island (real migration) are dropped."""
        keep = [i for i, m in enumerate(self.members) if m.active]
        order = [keep[i] for i in rank_and_crowd(np.asarray([self._points[i] for i in keep]))]
        order = order[: self.pop_size]
        self.members = [self.members[i] for i in order]
        self._points = [self._points[i] for i in order]

    def __call__(self, inds: Sequence[Individual]) -> list[Individual]:
        """The pool's active members best first (the island's best by loss while fewer than
        two are in the pool)."""
        ranked = [m for m in self.members if m.active]
        if len(ranked) > 1:
            return ranked
        return list(inds[: self.pop_size])


class RankTournament(Propagator):
    """``offspring`` individuals, each the better of two drawn from a pool ordered best first.

    Parameters
    ----------
    offspring : int
        How many to draw.
    rng : random.Random, optional
        Random number generator.
    """

    def __init__(self, offspring: int = 2, rng: random.Random | None = None) -> None:
        super().__init__(-1, offspring, rng)

    def __call__(self, inds: Sequence[Individual]) -> list[Individual]:
        n = len(inds)
        if n < 1:
            raise ValueError("RankTournament selects from an empty pool")
        out = []
        for _ in range(self.offspring):
            a, b = self.rng.randrange(n), self.rng.randrange(n)
            out.append(inds[min(a, b)])
        return out


class ParetoSelect(Propagator):
    """The ``offspring`` individuals best by non-dominated front, then crowding distance
    (:func:`propulate.runs.dominance.best_ranked`), of the declared objectives' values; ties (the
    extremes of a front all have an infinite distance) are broken at random, so one emigrant
    is either end of the front, not always the best in the first objective. Individuals
    without those values (records of another declaration) come after, in the given order.

    Parameters
    ----------
    offspring : int
        How many to pick.
    objectives : Objectives
        The declared objectives (their directions sign the values for minimisation).
    rng : random.Random, optional
        Breaks the ties.
    """

    def __init__(
        self, offspring: int, objectives: Objectives, rng: random.Random | None = None
    ) -> None:
        super().__init__(-1, offspring, rng)
        self.objectives = objectives

    def __call__(self, inds: Sequence[Individual]) -> list[Individual]:
        if len(inds) < self.offspring:
            raise ValueError(
                f"ParetoSelect selects {self.offspring} individuals from a pool of {len(inds)}"
            )
        ranked, points, rest = [], [], []
        for ind in inds:
            try:
                points.append(self.objectives.oriented(ind.objectives or {}))
                ranked.append(ind)
            except KeyError:
                rest.append(ind)
        order = list(range(len(ranked)))
        self.rng.shuffle(order)  # best_ranked keeps the given order among ties
        shuffled = np.asarray([points[i] for i in order], float).reshape(len(order), -1)
        best = [ranked[order[i]] for i in best_ranked(shuffled, self.offspring)]
        return (best + rest)[: self.offspring]


def pareto_pool(propagator: Propagator) -> ParetoPool | None:
    """The first :class:`ParetoPool` in ``propagator`` or its stages (``None`` without one)."""
    todo = [propagator]
    while todo:
        prop = todo.pop(0)
        if isinstance(prop, ParetoPool):
            return prop
        stages = getattr(prop, "stages", None)
        todo.extend(stages() if callable(stages) else [])
    return None
