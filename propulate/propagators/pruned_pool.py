"""The GA's breeding pool under a pruner: finished evaluations first, then pruned ones by how
far they got.

With a pruner most evaluations stop early (with ASHA at ``eta = 3`` and three rungs, most of
the configurations a run tries never finish), and a pruned evaluation has no loss: the island
model never breeds from it as if it were final (its records, the summary and the tuning
database know only finished losses). Left at that, the GA waits for ``pop_size`` *finished*
evaluations before it breeds at all, drawing random configurations meanwhile, and the partial
information of every stopped run is thrown away.

:class:`PrunedPool` wraps the breeding chain and fills the pool, while the island holds fewer
than ``pop_size`` active finished evaluations, with the best pruned ones: ordered by the last
step they reached (later first) and, among those that stopped at the same step, by their value
there (lower first). Finished evaluations always come first, by loss, so once the island holds
``pop_size`` of them the chain sees exactly what it sees without a pruner. Only breeding uses
this order: a pruned individual keeps its status, its infinite loss and its place outside the
island's ranking.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence

from propulate.population import Individual
from propulate.propagators.base import Offspring, Propagator, _Composite
from propulate.runs.status import PRUNED


def pruned_rank(ind: Individual) -> tuple[float, float] | None:
    """The breeding order of a pruned individual, lower is better: ``(-last step, value
    there)``; ``None`` for an individual that was not pruned or reported no finite value."""
    if ind.status != PRUNED or not ind.curve:
        return None
    step, value = ind.curve[-1][0], ind.curve[-1][1]
    if not (math.isfinite(step) and math.isfinite(value)):
        return None
    return (-float(step), float(value))


class PrunedPool(_Composite):
    """A breeding chain whose pool is topped up with the best pruned evaluations.

    Parameters
    ----------
    pop_size : int
        The chain's pool size: with at least that many finished individuals (the ``inds``
        the engine passes, the island's active ones by loss) the chain gets them unchanged;
        with fewer, the best ``pop_size - len(inds)`` pruned individuals the worker has
        observed follow them (:func:`pruned_rank`; ties by arrival).
    inner : Propagator
        The breeding chain (the GA's, :func:`~propulate.propagators.default.
        get_default_propagator`).
    """

    def __init__(self, pop_size: int, inner: Propagator) -> None:
        super().__init__(-1, inner.offspring, inner.rng)
        self.pop_size = pop_size
        self.inner = inner
        #: The best pruned individuals seen, ``(rank, arrival, individual)``, at most pop_size.
        self.pruned: list[tuple[tuple[float, float], int, Individual]] = []
        self._arrivals = 0

    def stages(self) -> list[Propagator]:
        """The wrapped chain."""
        return [self.inner]

    @property
    def observes(self) -> bool:
        """It learns the pruned individuals."""
        return True

    def observe(self, individual: Individual) -> None:
        """Keep the individual if it is among the ``pop_size`` best pruned ones; forward it to
        the chain's stages."""
        super().observe(individual)
        rank = pruned_rank(individual)
        if rank is None:
            return
        self._arrivals += 1
        entry = (rank, self._arrivals, individual)
        if len(self.pruned) >= self.pop_size and entry[:2] >= self.pruned[-1][:2]:
            return
        bisect.insort(self.pruned, entry, key=lambda e: e[:2])
        del self.pruned[self.pop_size :]

    def pool(self, inds: Sequence[Individual]) -> Sequence[Individual]:
        """What the chain breeds from: ``inds`` itself when it holds ``pop_size`` or more (or
        nothing was pruned), else ``inds`` followed by the best pruned individuals."""
        missing = self.pop_size - len(inds)
        if missing <= 0 or not self.pruned:
            return inds
        return [*inds, *(ind for _, _, ind in self.pruned[:missing])]

    def __call__(self, inds: Sequence[Individual]) -> Offspring:
        return self.inner(self.pool(inds))
