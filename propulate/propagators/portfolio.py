"""A portfolio of islands: each island runs its own propagator, and they migrate individuals.

``Portfolio(space, plan, settings, rng)`` holds one propagator per entry of ``plan`` (names of
the registry, e.g. ``("cma", "ga")``); the engine tells it its island
(:meth:`~propulate.propagators.base.Propagator.bind`) and island ``i`` runs
``plan[i % len(plan)]``. With a single island the plan is spread over the workers instead
(the worker of rank ``r`` runs ``plan[r % len(plan)]``), which then share one population. Migration carries individuals between the islands as usual, so a
method that is trapped on one island receives what another found: CMA-ES injects immigrants
into its distribution, the genetic algorithm breeds from them, a swarm may take one as its best.

The registry's ``portfolio`` reads the plan from the setting ``portfolio``
(``EvolveSettings.portfolio``, comma-separated names). A member that cannot search the space
(CMA-ES on categorical parameters only) gives its islands to the first member that can; a
space none of them can search is refused with the first member's error.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Sequence

from propulate.population import Individual
from propulate.propagators.base import Offspring, Propagator
from propulate.settings import EvolveSettings
from propulate.space import SearchSpace

log = logging.getLogger("propulate")


def parse_plan(text: str | Sequence[str]) -> tuple[str, ...]:
    """``"cma,ga"`` -> ``("cma", "ga")``, each name a registered propagator other than
    ``portfolio`` (``ValueError`` naming the unknown one)."""
    from propulate.propagators.registry import PROPAGATORS

    names = tuple(n.strip() for n in (text.split(",") if isinstance(text, str) else text))
    names = tuple(n for n in names if n)
    if not names:
        raise ValueError("the portfolio plan names no propagator")
    for name in names:
        if name == "portfolio" or name not in PROPAGATORS:
            choices = ", ".join(p for p in PROPAGATORS if p != "portfolio")
            raise ValueError(f"unknown propagator {name!r} in the portfolio; choose from {choices}")
    return names


def portfolio_islands(name: str, workers: int, plan: str | None = None) -> int:
    """The number of islands a benchmark runs propagator ``name`` on: one per entry of the
    portfolio's plan (at most one per worker), else 1."""
    if name != "portfolio":
        return 1
    return max(1, min(workers, len(parse_plan(plan or EvolveSettings().portfolio))))


class Portfolio(Propagator):
    """The propagator of this worker's island, chosen from ``plan`` (module docstring).

    Parameters
    ----------
    space : SearchSpace
        The search space (every member must be able to search it).
    plan : sequence of str
        Registered propagator names; island ``i`` runs ``plan[i % len(plan)]``.
    settings : EvolveSettings
        The run's settings, handed to the members' factories.
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
        settings: EvolveSettings,
        rng: random.Random,
        by: str = "island",
    ) -> None:
        from propulate.propagators.registry import make_propagator

        super().__init__(-1, 1, rng)
        self.space = space
        plan = list(parse_plan(plan))
        # Every member is built here, on every rank alike. One that cannot search the space
        # hands its islands to the first member that can (logged once); none: the first error.
        members: list[Propagator | None] = []
        errors: list[ValueError] = []
        for name in plan:
            try:
                members.append(make_propagator(name, space, settings, rng))
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

    def observe(self, individual: Individual) -> None:
        """Forward to the island's member."""
        if getattr(self.active, "observes", False):
            self.active.observe(individual)


def portfolio_propagator(
    space: SearchSpace, settings: EvolveSettings, rng: random.Random
) -> Propagator:
    """The registry's ``portfolio``: the plan of ``settings.portfolio``, one entry per island
    (per worker with a single island)."""
    by = "island" if settings.islands > 1 else "rank"
    return Portfolio(space, parse_plan(settings.portfolio), settings, rng, by)
