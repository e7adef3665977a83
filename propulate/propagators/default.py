"""The default evolutionary propagator (the paper's tuned operator chain)."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from propulate.propagators.base import Compose, Conditional, Propagator
from propulate.propagators.ga import (
    CrossoverUniform,
    InitUniform,
    IntervalMutationNormal,
    PointMutation,
)
from propulate.propagators.selection import SelectMin, SelectUniform
from propulate.space import SearchSpace


def get_default_propagator(
    pop_size: int,
    limits: Mapping[str, Any] | SearchSpace,
    crossover_prob: float = 0.7,
    mutation_prob: float = 0.4,
    random_init_prob: float = 0.1,
    sigma_factor: float = 0.05,
    rng: random.Random | None = None,
) -> Propagator:
    """Propulate's default breeding chain.

    While the island has fewer than ``pop_size`` active individuals, random individuals are
    drawn. Then: the ``pop_size`` best active individuals form the pool; two parents are drawn
    uniformly from it; uniform crossover (with probability ``crossover_prob``); point mutation
    (``mutation_prob``); Gaussian interval mutation of continuous genes (``sigma_factor`` times
    the range); with probability ``random_init_prob`` the child is replaced by a random one.

    Parameters
    ----------
    pop_size : int
        Breeding-pool size.
    limits : limits or SearchSpace
        The search space.
    crossover_prob, mutation_prob, random_init_prob : float
        Probabilities of the operators, in ``[0, 1]``.
    sigma_factor : float
        Interval-mutation standard deviation as a fraction of the range.
    rng : random.Random, optional
        Random number generator shared by the operators.

    Returns
    -------
    Propagator
        The composed propagator.
    """
    if pop_size < 2:
        raise ValueError(f"pop_size must be at least 2 to draw two parents, got {pop_size}")
    space = SearchSpace.from_limits(limits)
    rng = rng if rng is not None else random.Random()
    breed = Compose(
        [
            SelectMin(pop_size),
            SelectUniform(offspring=2, rng=rng),
            CrossoverUniform(probability=crossover_prob, rng=rng),
            PointMutation(space, probability=mutation_prob, rng=rng),
            IntervalMutationNormal(space, sigma_factor=sigma_factor, probability=1.0, rng=rng),
            InitUniform(space, parents=1, probability=random_init_prob, rng=rng),
        ]
    )
    return Conditional(pop_size, breed, InitUniform(space, rng=rng))
