"""The GA's stages for conditional spaces: where a branch's genes come from, and which
branches keep a place in the breeding pool.

A *branch* of a conditional space is a set of active parameters (``optimizer: sgd`` with its
``momentum``, ``optimizer: adam`` with its betas). :class:`BranchMemory` remembers the best
known genes of every conditional parameter, so a child that switches to a branch starts from
the best that branch has shown (:func:`repair`). :class:`BranchPool` is the breeding pool of a
conditional space: the best individuals, where the best branches each keep a few places, so a
branch that lost the early race (a deceptive one, good at first, with a worse optimum) does not
take the whole pool and the search leaves it.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Sequence
from typing import Any

from propulate.population import Individual, SortedView
from propulate.propagators.base import Propagator
from propulate.space import Categorical, Float, Integer, SearchSpace


def random_value(dim: Float | Integer | Categorical, rng: random.Random) -> Any:
    """A uniformly drawn value of ``dim`` (on its log scale where set)."""
    if isinstance(dim, Categorical):
        return rng.choice(dim.choices)
    if isinstance(dim, Integer) and not dim.log:
        return rng.randint(int(dim.low), int(dim.high))
    return dim.decode(rng.random())


class BranchMemory(Propagator):
    """The best known value of every conditional parameter: from the lowest-loss evaluated
    individual in which it was active (observed, own and received, resumed ones included).

    A pass-through stage of a conditional space's breeding chain; the operators fill a gene
    that becomes active, and that no parent carries, from it (a random value before any
    individual had the parameter active).
    """

    def __init__(self, space: SearchSpace) -> None:
        super().__init__(-1, -1)
        self.space = space
        self.best: dict[str, tuple[float, Any]] = {}

    def __call__(self, inds: Sequence[Individual]) -> Sequence[Individual]:
        return inds

    def observe(self, individual: Individual) -> None:
        """Remember the individual's conditional genes where its loss beats the best known."""
        loss = individual.loss
        if loss is None or individual.failed or not math.isfinite(loss):
            return
        best = self.best
        for name in self.space.conditions:
            if name in individual and (name not in best or loss < best[name][0]):
                best[name] = (loss, individual[name])


def repair(
    space: SearchSpace,
    child: Individual,
    rng: random.Random,
    memory: BranchMemory | None = None,
) -> Individual:
    """Make ``child`` condition-consistent in place: inactive genes dropped, missing active
    ones from ``memory`` where it knows them, else drawn uniformly."""
    if space.conditions:
        known = memory.best if memory is not None else {}
        genes = space.complete(
            child, lambda n, d: known[n][1] if n in known else random_value(d, rng)
        )
        if genes != child or list(genes) != list(child):
            child.clear()
            child.update(genes)
    return child


#: How deep (times the pool size) :class:`BranchPool` looks for the best of each branch.
DEPTH = 64


def _loss(ind: Individual) -> float:
    return math.inf if ind.loss is None else ind.loss


class BranchPool(Propagator):
    """The breeding pool of a conditional space: the ``pop_size`` lowest-loss individuals,
    except that each of the ``pop_size // (2 * places)`` best branches keeps ``places`` of
    them (all it has, when fewer).

    Branches (sets of active conditional parameters) are ranked by their best individual
    (among the ``depth * pop_size`` best individuals); a reserved place goes to the branch's
    next best individual and replaces the worst pool member of a branch that holds more than
    its reserved places. At least half of the pool stays the plain best,
    and a space with a single branch gets the plain best. Parents drawn from the pool then
    breed in a branch that fell behind too (crossover and mutation within it, and with the
    leading branch), so the runner-up branch keeps improving instead of being frozen at the
    level where it lost the early race.

    Parameters
    ----------
    pop_size : int
        Pool size.
    space : SearchSpace
        The conditional space (its conditional parameters define the branches).
    places : int
        Places reserved per branch.
    depth : int
        Only the ``depth * pop_size`` best individuals are looked at: a branch whose best fell
        further behind has had its chance and gets no reserved place.
    """

    def __init__(
        self, pop_size: int, space: SearchSpace, places: int = 2, depth: int = DEPTH
    ) -> None:
        super().__init__(-1, pop_size)
        if places < 1:
            raise ValueError(f"places must be at least 1, got {places}")
        self.space = space
        self.places = places
        self.branches = max(1, pop_size // (2 * places))
        self.depth = depth * pop_size
        self._conditional = frozenset(space.conditions)
        self._memo: dict[tuple[str, ...], frozenset[str]] = {}  # gene names -> branch

    def branch(self, ind: Individual) -> frozenset[str]:
        """The individual's branch: the conditional parameters it holds."""
        names = tuple(ind)
        out = self._memo.get(names)
        if out is None:
            out = self._memo[names] = frozenset(self._conditional.intersection(names))
        return out

    def __call__(self, inds: Sequence[Individual]) -> list[Individual]:
        k = self.offspring
        if len(inds) < k:
            raise ValueError(f"BranchPool selects {k} individuals from a pool of {len(inds)}")
        ordered = inds if isinstance(inds, SortedView) else sorted(inds, key=_loss)
        branch, places, wanted = self.branch, self.places, self.branches
        reserved: dict[frozenset[str], list[int]] = {}
        full = 0  # branches whose places are taken
        for i, ind in enumerate(itertools.islice(ordered, self.depth)):  # ascending loss
            if i >= k and full == wanted:
                break
            b = branch(ind)
            got = reserved.get(b)
            if got is None:
                if len(reserved) == wanted:
                    continue
                got = reserved[b] = []
            if len(got) < places:
                got.append(i)
                full += len(got) == places
        extra = sorted(i for g in reserved.values() for i in g if i >= k)
        pool = list(ordered[:k])
        if not extra:
            return pool
        keep = {i for g in reserved.values() for i in g}
        drop = [i for i in range(k - 1, -1, -1) if i not in keep][: len(extra)]
        chosen = sorted(set(range(k)) - set(drop)) + extra
        return [ordered[i] for i in chosen]
