"""Genetic operators: mutation, crossover and random initialization.

Every operator works on all three gene types of :mod:`propulate.space`: a point mutation of a
categorical gene always picks a *different* choice, crossovers copy categorical genes whole,
and log-scaled floats are mutated on their log scale (through the space's unit-cube encoding).
Operators never modify their inputs: they return new individuals.

In a conditional space (:attr:`SearchSpace.conditions`) every operator that knows the space
returns a condition-consistent child (:func:`repair`): a crossover child carries the genes of
both parents where they differ in which parameters are active; a child whose branch switched
keeps the new branch's genes it inherited and gets fresh random values for the others, and
genes of inactive parameters are dropped. Only active genes are mutated. Unconditional spaces
take the same code path, and random draws, as before conditions existed.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from typing import Any

from propulate.population import Individual
from propulate.propagators.base import Stochastic
from propulate.propagators.branches import BranchMemory, random_value, repair
from propulate.space import Categorical, Float, Integer, SearchSpace


def _different_value(dim: Float | Integer | Categorical, old: Any, rng: random.Random) -> Any:
    """A random value of ``dim`` other than ``old`` where the dimension allows one."""
    if isinstance(dim, Categorical):
        if len(dim.choices) == 1:
            return old
        i = rng.randrange(len(dim.choices) - 1)
        new = dim.choices[i]
        return dim.choices[-1] if new == old else new
    if isinstance(dim, Integer):
        if dim.low == dim.high:
            return old
        for _ in range(16):
            new = random_value(dim, rng)
            if new != old:
                return new
        return int(dim.low) if old != dim.low else int(dim.high)
    return random_value(dim, rng)


def _merge(a: Individual, b: Individual, pick: Any) -> Individual:
    """A child with each gene of both parents from ``a`` when ``pick()`` is true (or only
    ``a`` has it), else from ``b`` (conditional spaces: the parents' genes differ)."""
    child = Individual({k: (v if k not in b or pick() else b[k]) for k, v in a.items()})
    for k, v in b.items():
        child.setdefault(k, v)
    return child


class _SpaceOperator(Stochastic):
    """A stochastic operator that knows the search space."""

    def __init__(
        self,
        limits: Mapping[str, Any] | SearchSpace,
        parents: int,
        offspring: int,
        probability: float,
        rng: random.Random | None,
    ) -> None:
        super().__init__(parents, offspring, probability, rng)
        self.space = SearchSpace.from_limits(limits)
        self.limits = limits
        #: Where a conditional space's operators fill genes that become active (optional).
        self.memory: BranchMemory | None = None
        self._floats = [n for n, d in self.space.dimensions.items() if isinstance(d, Float)]


class PointMutation(_SpaceOperator):
    """Give ``points`` randomly chosen genes new random values, with a probability.

    Parameters
    ----------
    limits : limits or SearchSpace
        The search space.
    points : int
        Number of genes to mutate (at most the number of parameters).
    probability : float
        Probability of mutating at all.
    rng : random.Random, optional
        Random number generator.
    """

    def __init__(
        self,
        limits: Mapping[str, Any] | SearchSpace,
        points: int = 1,
        probability: float = 1.0,
        rng: random.Random | None = None,
    ) -> None:
        super().__init__(limits, 1, 1, probability, rng)
        if not 1 <= points <= len(self.space):
            raise ValueError(f"points must be in [1, {len(self.space)}], got {points}")
        self.points = points

    fresh = True

    def _mutate(self, child: Individual, points: int) -> Individual:
        """Mutate ``points`` genes of ``child`` in place."""
        dims = self.space.dimensions
        if self.space.conditions:  # active genes only, then the branch's genes follow
            repair(self.space, child, self.rng, self.memory)
            names = [n for n in self.space.names if n in child]
            for name in self.rng.sample(names, min(points, len(names))):
                if name in child:  # an earlier switch may have dropped it
                    child[name] = _different_value(dims[name], child[name], self.rng)
                    repair(self.space, child, self.rng, self.memory)
            return child
        names = self.space.names
        # one point: the draw of rng.sample(names, 1), without its set-up
        picks = [names[self.rng.randrange(len(names))]] if points == 1 else None
        for name in picks or self.rng.sample(names, points):
            child[name] = _different_value(dims[name], child[name], self.rng)
        return child

    def in_place(self, child: Individual) -> Individual:  # type: ignore[override]
        """:meth:`__call__` on ``child`` itself."""
        if self.rng.random() < self.probability:
            return self._mutate(child, self.points)
        return repair(self.space, child, self.rng, self.memory)

    def __call__(self, inds: Sequence[Individual] | Individual) -> Individual:
        return self.in_place((inds if isinstance(inds, Individual) else inds[0]).copy())


class RandomPointMutation(PointMutation):
    """Point mutation of a random number of genes in ``[min_points, max_points]``."""

    def __init__(
        self,
        limits: Mapping[str, Any] | SearchSpace,
        min_points: int = 1,
        max_points: int = 1,
        probability: float = 1.0,
        rng: random.Random | None = None,
    ) -> None:
        super().__init__(limits, max(1, min_points), probability, rng)
        if not 1 <= min_points <= max_points <= len(self.space):
            raise ValueError(
                f"need 1 <= min_points <= max_points <= {len(self.space)}, "
                f"got {min_points}, {max_points}"
            )
        self.min_points, self.max_points = min_points, max_points

    def in_place(self, child: Individual) -> Individual:  # type: ignore[override]
        """:meth:`__call__` on ``child`` itself."""
        if self.rng.random() < self.probability:
            return self._mutate(child, self.rng.randint(self.min_points, self.max_points))
        return repair(self.space, child, self.rng, self.memory)


class IntervalMutationNormal(_SpaceOperator):
    """Gaussian mutation of ``points`` continuous genes, clipped to their bounds.

    The standard deviation is ``sigma_factor`` times the parameter's range (on the log scale for
    log-scaled floats). Integer and categorical genes are left to :class:`PointMutation`.

    Parameters
    ----------
    limits : limits or SearchSpace
        The search space.
    sigma_factor : float
        Standard deviation as a fraction of each range.
    points : int
        Number of continuous genes to mutate (capped at how many there are).
    probability : float
        Probability of mutating at all.
    rng : random.Random, optional
        Random number generator.
    """

    def __init__(
        self,
        limits: Mapping[str, Any] | SearchSpace,
        sigma_factor: float = 0.1,
        points: int = 1,
        probability: float = 1.0,
        rng: random.Random | None = None,
    ) -> None:
        super().__init__(limits, 1, 1, probability, rng)
        if sigma_factor <= 0:
            raise ValueError(f"sigma_factor must be positive, got {sigma_factor}")
        self.sigma_factor = sigma_factor
        self.points = points

    fresh = True

    def in_place(self, child: Individual) -> Individual:  # type: ignore[override]
        """:meth:`__call__` on ``child`` itself."""
        if self.space.conditions:
            repair(self.space, child, self.rng, self.memory)
        if not self._floats or self.rng.random() >= self.probability:
            return child
        dims = self.space.dimensions
        floats = self._floats
        if self.space.conditions:  # the active ones
            floats = [n for n in floats if n in child]
            if not floats:
                return child
        points = min(self.points, len(floats))
        # one point: the draw of rng.sample(floats, 1), without its set-up
        picks = [floats[self.rng.randrange(len(floats))]] if points == 1 else None
        for name in picks or self.rng.sample(floats, points):
            dim = dims[name]
            u = dim.encode(child[name]) + self.rng.gauss(0.0, self.sigma_factor)
            child[name] = dim.decode(u)
        return child

    def __call__(self, inds: Sequence[Individual] | Individual) -> Individual:
        return self.in_place((inds if isinstance(inds, Individual) else inds[0]).copy())


class CrossoverUniform(Stochastic):
    """Uniform crossover of two parents: each gene from the first parent with probability
    ``relative_parent_contribution``, else from the second.

    Parameters
    ----------
    relative_parent_contribution : float
        Share of genes taken from the first parent, in ``[0, 1]``.
    probability : float
        Probability of crossing over; otherwise the child copies the first parent.
    rng : random.Random, optional
        Random number generator.
    """

    fresh = True

    def __init__(
        self,
        relative_parent_contribution: float = 0.5,
        probability: float = 1.0,
        rng: random.Random | None = None,
    ) -> None:
        super().__init__(2, 1, probability, rng)
        if not 0.0 <= relative_parent_contribution <= 1.0:
            raise ValueError("relative_parent_contribution must be in [0, 1]")
        self.relative_parent_contribution = relative_parent_contribution

    def __call__(self, inds: Sequence[Individual]) -> Individual:
        a, b = inds[0], inds[1]
        if self.rng.random() >= self.probability:
            return a.copy()
        p, r = self.relative_parent_contribution, self.rng.random
        if a.keys() != b.keys():  # a conditional space's parents on different branches
            return _merge(a, b, lambda: r() < p)
        # a copy of the first parent (one block copy) with the second one's genes where the
        # draw says so: the draws of building the child gene by gene, in the same order
        child = a.copy()
        for k in [k for k in a if r() >= p]:
            child[k] = b[k]
        return child


class CrossoverMultiple(Stochastic):
    """Crossover of any number of parents: each gene from a parent chosen uniformly."""

    fresh = True

    def __init__(
        self, parents: int = -1, probability: float = 1.0, rng: random.Random | None = None
    ) -> None:
        super().__init__(parents, 1, probability, rng)

    def __call__(self, inds: Sequence[Individual]) -> Individual:
        if self.rng.random() >= self.probability:
            return inds[0].copy()
        choice = self.rng.choice
        if any(ind.keys() != inds[0].keys() for ind in inds):  # conditional: differing genes
            keys = dict.fromkeys(k for ind in inds for k in ind)
            return Individual({k: choice([ind for ind in inds if k in ind])[k] for k in keys})
        return Individual({k: choice(inds)[k] for k in inds[0]})


class CrossoverSigmoid(Stochastic):
    """Two-parent crossover favouring the better parent.

    Each gene comes from the first parent with probability
    ``1 / (1 + exp((loss_1 - loss_2) / temperature))``, so a lower-loss first parent contributes
    more genes.

    Parameters
    ----------
    temperature : float
        Loss scale of the preference; large values approach uniform crossover.
    probability : float
        Probability of crossing over; otherwise the child copies the first parent.
    rng : random.Random, optional
        Random number generator.
    """

    fresh = True

    def __init__(
        self, temperature: float = 1.0, probability: float = 1.0, rng: random.Random | None = None
    ) -> None:
        super().__init__(2, 1, probability, rng)
        if temperature <= 0:
            raise ValueError(f"temperature must be positive, got {temperature}")
        self.temperature = temperature

    def __call__(self, inds: Sequence[Individual]) -> Individual:
        a, b = inds[0], inds[1]
        if self.rng.random() >= self.probability:
            return a.copy()
        la = a.loss if a.loss is not None else math.inf
        lb = b.loss if b.loss is not None else math.inf
        if la == lb:  # includes two unevaluated parents (inf - inf is NaN): no preference
            diff = 0.0
        else:
            diff = (
                (la - lb) / self.temperature
                if math.isfinite(la - lb)
                else (-math.inf if la < lb else math.inf)
            )
        p = 1.0 / (1.0 + math.exp(min(max(diff, -700.0), 700.0)))
        r = self.rng.random
        if a.keys() != b.keys():  # a conditional space's parents on different branches
            return _merge(a, b, lambda: r() < p)
        return Individual({k: (v if r() < p else b[k]) for k, v in a.items()})


class InitUniform(_SpaceOperator):
    """A fresh individual drawn uniformly from the space (per gene, on log scale where set).

    With ``parents=1`` it replaces its input with the given probability and otherwise passes a
    copy of it on (the "random initialization probability" of the default propagator).

    Parameters
    ----------
    limits : limits or SearchSpace
        The search space.
    parents : int
        ``0`` to always create a random individual, ``1`` to replace the input stochastically.
    probability : float
        Probability of drawing a random individual when ``parents=1``.
    rng : random.Random, optional
        Random number generator.
    """

    fresh = True

    def __init__(
        self,
        limits: Mapping[str, Any] | SearchSpace,
        parents: int = 0,
        probability: float = 1.0,
        rng: random.Random | None = None,
    ) -> None:
        super().__init__(limits, parents, 1, probability, rng)

    def random_individual(self) -> Individual:
        """A uniformly drawn individual (constraints are the engine's business)."""
        rng = self.rng
        genes = {n: random_value(d, rng) for n, d in self.space.dimensions.items()}
        return Individual(self.space.active(genes) if self.space.conditions else genes)

    def in_place(self, child: Individual) -> Individual:  # type: ignore[override]
        """:meth:`__call__` on ``child`` itself (a random individual replaces it, or it passes)."""
        if self.parents == 0 or self.rng.random() < self.probability:
            return self.random_individual()
        return child

    def __call__(self, inds: Sequence[Individual] | Individual = ()) -> Individual:
        if self.parents == 0:
            return self.random_individual()
        return self.in_place((inds if isinstance(inds, Individual) else inds[0]).copy())
