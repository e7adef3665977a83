"""Selection propagators: pick individuals by loss or at random.

Given a :class:`~propulate.population.SortedView` (what the engine passes: an island's active
individuals ordered by loss) they pick in ``O(k)``; any other sequence is sorted first.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from propulate.population import Individual, SortedView
from propulate.propagators.base import Propagator

#: Pools up to this size ``random.sample`` draws from a list (beyond, from a set); the
#: two-parent draw of :class:`SelectUniform` repeats its draws there.
SMALL_POOL = 21


def _loss(ind: Individual) -> float:
    return float("inf") if ind.loss is None else ind.loss


def _check(inds: Sequence[Individual], k: int, who: str) -> None:
    if len(inds) < k:
        raise ValueError(f"{who} selects {k} individuals from a pool of {len(inds)}")


class SelectMin(Propagator):
    """The ``offspring`` individuals with the lowest loss (best first)."""

    def __init__(self, offspring: int, rng: random.Random | None = None) -> None:
        super().__init__(-1, offspring, rng)

    def __call__(self, inds: Sequence[Individual]) -> list[Individual]:
        _check(inds, self.offspring, "SelectMin")
        if isinstance(inds, SortedView) and self.offspring > 0:
            return inds.head(self.offspring)
        return sorted(inds, key=_loss)[: self.offspring]


class SelectMax(Propagator):
    """The ``offspring`` individuals with the highest loss (worst first)."""

    def __init__(self, offspring: int, rng: random.Random | None = None) -> None:
        super().__init__(-1, offspring, rng)

    def __call__(self, inds: Sequence[Individual]) -> list[Individual]:
        _check(inds, self.offspring, "SelectMax")
        if isinstance(inds, SortedView):
            return inds[len(inds) - self.offspring :][::-1]
        return sorted(inds, key=_loss, reverse=True)[: self.offspring]


class SelectUniform(Propagator):
    """``offspring`` distinct individuals drawn uniformly at random."""

    def __init__(self, offspring: int, rng: random.Random | None = None) -> None:
        super().__init__(-1, offspring, rng)

    def __call__(self, inds: Sequence[Individual]) -> list[Individual]:
        _check(inds, self.offspring, "SelectUniform")
        n = len(inds)
        if self.offspring == 2 and n <= SMALL_POOL:
            # rng.sample(range(n), 2) of a small pool, draw for draw: the first index, then
            # one of the others, where the first one's place holds the last index
            i, j = self.rng.randrange(n), self.rng.randrange(n - 1)
            return [inds[i], inds[n - 1 if j == i else j]]
        idx = self.rng.sample(range(n), self.offspring)
        return [inds[i] for i in idx]
