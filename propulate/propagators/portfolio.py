"""A portfolio of islands: each island runs its own propagator, and they migrate individuals.

``Portfolio(space, plan, settings, rng)`` holds one propagator per entry of ``plan`` (names of
the registry, e.g. ``("cma", "ga")``); the engine tells it its island
(:meth:`~propulate.propagators.base.Propagator.bind`) and island ``i`` runs
``plan[i % len(plan)]``. With a single island the plan is spread over the workers instead
(the worker of rank ``r`` runs ``plan[r % len(plan)]``), which then share one population. Migration carries individuals between the islands as usual, so a
method that is trapped on one island receives what another found: CMA-ES injects immigrants
into its distribution, the genetic algorithm breeds from them, a swarm may take one as its best.

The registry's ``portfolio`` reads the plan from its option ``plan`` (``portfolio:plan=cma+ga``;
the older setting ``portfolio``, comma-separated, still sets it). A member that cannot search the space
(CMA-ES on categorical parameters only) gives its islands to the first member that can; a
space none of them can search is refused with the first member's error.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Sequence
from typing import TYPE_CHECKING

from propulate.plugins.facts import RunFacts
from propulate.population import Individual
from propulate.propagators.base import Offspring, Propagator
from propulate.propagators.registry import parse_plan
from propulate.space import SearchSpace

if TYPE_CHECKING:
    from propulate.propagators.registry import PortfolioOptions

__all__ = ["Portfolio", "parse_plan", "portfolio_islands", "portfolio_propagator"]

log = logging.getLogger("propulate")


def portfolio_islands(name: str, workers: int, plan: str | None = None) -> int:
    """The number of islands a benchmark runs propagator ``name`` on: one per entry of the
    portfolio's plan (at most one per worker), else 1."""
    if name != "portfolio":
        return 1
    from propulate.propagators.registry import PortfolioOptions

    return max(1, min(workers, len(parse_plan(plan or PortfolioOptions().plan))))


class Portfolio(Propagator):
    """The propagator of this worker's island, chosen from ``plan`` (module docstring).

    Parameters
    ----------
    space : SearchSpace
        The search space (every member must be able to search it).
    plan : sequence of str
        Registered propagator names; island ``i`` runs ``plan[i % len(plan)]``.
    run : RunFacts
        The run's facts, handed to the members' factories (each member with its default
        options).
    rng : random.Random
        This worker's random stream (shared by the members).
    by : str
        ``"island"``: island ``i`` runs ``plan[i % len(plan)]``; ``"rank"``: the worker of
        rank ``r`` runs ``plan[r % len(plan)]`` (one island).
    """

    def __init__(
        self,
        space: SearchSpace,
        plan: Sequence[str],
        run: RunFacts,
        rng: random.Random,
        by: str = "island",
    ) -> None:
        from propulate.propagators.registry import build_propagator

        super().__init__(-1, 1, rng)
        self.space = space
        plan = list(parse_plan(plan))
        # Every member is built here, on every rank alike. One that cannot search the space
        # hands its islands to the first member that can (logged once); none: the first error.
        members: list[Propagator | None] = []
        errors: list[ValueError] = []
        for name in plan:
            try:
                members.append(build_propagator(name, space, rng, run))
            except ValueError as err:
                members.append(None)
                errors.append(err)
        able = [i for i, m in enumerate(members) if m is not None]
        if not able:
            raise errors[0]
        for i, m in enumerate(members):
            if m is None:
                log.info("portfolio: %s; its islands run %s", errors.pop(0), plan[able[0]])
                plan[i], members[i] = plan[able[0]], members[able[0]]
        self.plan = tuple(plan)
        self.members: list[Propagator] = members  # type: ignore[assignment]
        if by not in ("island", "rank"):
            raise ValueError(f"by must be 'island' or 'rank', got {by!r}")
        self.by = by
        self.index = 0
        self.active = self.members[0]

    def bind(self, island: int, rank: int) -> None:
        """Choose this worker's member and tell it where it runs."""
        self.index = int(island if self.by == "island" else rank) % len(self.members)
        self.active = self.members[self.index]
        bind = getattr(self.active, "bind", None)
        if bind is not None:
            bind(island, rank)

    @property
    def member(self) -> str:
        """The name of the propagator this worker runs."""
        return self.plan[self.index]

    def __call__(self, inds: Sequence[Individual]) -> Offspring:
        return self.active(inds)

    @property
    def shares_design(self) -> bool:
        """Whether the island's member does."""
        return bool(getattr(self.active, "shares_design", False))

    def observe(self, individual: Individual) -> None:
        """Forward to the island's member."""
        if getattr(self.active, "observes", False):
            self.active.observe(individual)


def portfolio_propagator(
    space: SearchSpace, options: PortfolioOptions, rng: random.Random, run: RunFacts
) -> Propagator:
    """The registry's ``portfolio``: the entries of ``options.plan``, one per island (per
    worker with a single island)."""
    by = "island" if run.islands > 1 else "rank"
    return Portfolio(space, parse_plan(options.plan), run, rng, by)
