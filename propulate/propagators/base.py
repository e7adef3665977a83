"""Propagator base classes and composition.

A propagator maps a list of individuals (parents) to one or a list of new individuals
(offspring): ``propagator(inds) -> Individual | list[Individual]``. Propagators compose with
:class:`Compose`, apply with a probability with :class:`Stochastic`, and branch on the pool size
with :class:`Conditional`, as in Propulate 1.2.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from propulate.population import Individual

Offspring = Individual | list[Individual]


def _as_list(out: Offspring | Sequence[Individual]) -> list[Individual]:
    if isinstance(out, Individual):
        return [out]
    return list(out)


class Propagator:
    """Base class: turns ``parents`` individuals into ``offspring`` individuals.

    Parameters
    ----------
    parents : int
        Number of input individuals it uses; ``-1`` for any number.
    offspring : int
        Number of individuals it returns; ``-1`` for any number.
    rng : random.Random, optional
        Random number generator (a fresh unseeded one by default).
    """

    def __init__(self, parents: int = 0, offspring: int = 0, rng: random.Random | None = None):
        if offspring == 0:
            raise ValueError("a propagator must produce offspring (offspring != 0)")
        self.parents = parents
        self.offspring = offspring
        self.rng = rng if rng is not None else random.Random()

    def __call__(self, inds: Sequence[Individual]) -> Offspring:
        raise NotImplementedError


class Stochastic(Propagator):
    """A propagator applied with a probability; otherwise its first parents pass through.

    Parameters
    ----------
    parents, offspring : int
        As for :class:`Propagator`.
    probability : float
        Probability of applying the operation, in ``[0, 1]``.
    rng : random.Random, optional
        Random number generator.
    """

    def __init__(
        self,
        parents: int = 0,
        offspring: int = 0,
        probability: float = 1.0,
        rng: random.Random | None = None,
    ) -> None:
        super().__init__(parents, offspring, rng)
        if not 0.0 <= probability <= 1.0:
            raise ValueError(f"probability must be in [0, 1], got {probability}")
        self.probability = probability


class Conditional(Propagator):
    """Apply ``true_prop`` once the pool holds at least ``pop_size`` individuals, else ``false_prop``.

    Parameters
    ----------
    pop_size : int
        Breeding population size needed before breeding starts.
    true_prop, false_prop : Propagator
        What to apply with a full / not yet full pool (typically breeding / random init).
    parents : int
        Accepted for Propulate 1.2 compatibility.
    """

    def __init__(
        self,
        pop_size: int,
        true_prop: Propagator,
        false_prop: Propagator,
        parents: int = -1,
        offspring: int = -1,
        rng: random.Random | None = None,
    ) -> None:
        super().__init__(parents, offspring, rng)
        self.pop_size = pop_size
        self.true_prop = true_prop
        self.false_prop = false_prop

    def __call__(self, inds: Sequence[Individual]) -> Offspring:
        if len(inds) >= self.pop_size:
            return self.true_prop(inds)
        return self.false_prop(inds)


class Compose(Propagator):
    """Apply propagators in sequence, each to the output of the previous.

    Parameters
    ----------
    propagators : list of Propagator
        The stages; each stage's ``offspring`` must match the next one's ``parents`` (``-1``
        matches anything).
    """

    def __init__(self, propagators: Sequence[Propagator], rng: random.Random | None = None):
        if not propagators:
            raise ValueError("Compose needs at least one propagator")
        for a, b in zip(propagators, propagators[1:], strict=False):
            if a.offspring != -1 and b.parents != -1 and a.offspring != b.parents:
                raise ValueError(
                    f"{type(a).__name__} produces {a.offspring} offspring but "
                    f"{type(b).__name__} takes {b.parents} parents"
                )
        super().__init__(propagators[0].parents, propagators[-1].offspring, rng)
        self.propagators = list(propagators)

    def __call__(self, inds: Sequence[Individual]) -> Offspring:
        out: Any = inds
        for prop in self.propagators:
            out = prop(out)
        return out


class FunctionPropagator(Propagator):
    """Wrap a plain function ``fn(inds) -> offspring`` as a propagator."""

    def __init__(
        self, fn: Callable[[Sequence[Individual]], Offspring], parents: int = -1, offspring: int = 1
    ) -> None:
        super().__init__(parents, offspring)
        self.fn = fn

    def __call__(self, inds: Sequence[Individual]) -> Offspring:
        return self.fn(inds)
