"""Uniform random search as a propagator: the one implementation of the method ``random``.

``evolve --method random`` runs it in the engine (so the records, budget, failures and resume
are those of every other method, and no configuration is drawn twice); ``measure --random N``
draws its ``N`` configurations with :meth:`RandomSearch.draw`.
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from propulate.plugins.facts import RunFacts
from propulate.plugins.registry import NoOptions
from propulate.population import Individual
from propulate.propagators.base import Propagator
from propulate.space import SearchSpace


class RandomSearch(Propagator):
    """A configuration drawn uniformly from the space, ignoring any parents.

    Each parameter is drawn uniformly on its encoded scale (log-scaled parameters uniformly in
    the logarithm, integers and categoricals uniformly among their values).

    Parameters
    ----------
    space : SearchSpace or limits
        The search space.
    rng : random.Random, optional
        Random number generator.
    """

    def __init__(
        self, space: SearchSpace | Mapping[str, Any], rng: random.Random | None = None
    ) -> None:
        super().__init__(-1, 1, rng)
        self.space = SearchSpace.from_limits(space)

    def __call__(self, inds: Sequence[Individual] = ()) -> Individual:
        rng = self.rng.random
        return Individual(self.space.decode([rng() for _ in range(self.space.dim)]))  # active

    def draw(
        self, n: int, task: Mapping[str, Any] | None = None, tries_per_point: int = 100
    ) -> list[dict[str, Any]]:
        """``n`` distinct feasible configurations (fewer when the space does not have them or
        ``tries_per_point * n`` draws do not find them)."""
        out: dict[Hashable, dict[str, Any]] = {}
        for _ in range(tries_per_point * n):
            if len(out) == n:
                break
            params = dict(self())
            if self.space.satisfies(params, task):
                out.setdefault(self.space.key(params), params)
        return list(out.values())


def random_propagator(
    space: SearchSpace, options: NoOptions, rng: random.Random, run: RunFacts
) -> Propagator:
    """The registry's ``random``."""
    return RandomSearch(space, rng)
