"""The default evolutionary propagator (the paper's tuned operator chain)."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from propulate.plugins.facts import RunFacts
from propulate.propagators.base import Compose, Conditional, Propagator
from propulate.propagators.branches import BranchMemory, BranchPool
from propulate.propagators.ga import (
    CrossoverUniform,
    InitUniform,
    IntervalMutationNormal,
    PointMutation,
)
from propulate.propagators.pareto_selection import ParetoPool, RankTournament
from propulate.propagators.pruned_pool import PrunedPool
from propulate.propagators.registry import GAOptions
from propulate.propagators.selection import SelectMin, SelectUniform
from propulate.runs.declared_objectives import Objectives
from propulate.space import SearchSpace

_D = GAOptions()


def get_default_propagator(
    pop_size: int,
    limits: Mapping[str, Any] | SearchSpace,
    crossover_prob: float = _D.crossover_prob,
    mutation_prob: float = _D.mutation_prob,
    random_init_prob: float = _D.random_init_prob,
    sigma_factor: float = _D.sigma_factor,
    rng: random.Random | None = None,
    objectives: Objectives | None = None,
) -> Propagator:
    """Propulate's default breeding chain.

    While the island has fewer than ``pop_size`` active individuals, random individuals are
    drawn. Then: the ``pop_size`` best active individuals form the pool; two parents are drawn
    uniformly from it; uniform crossover (with probability ``crossover_prob``); point mutation
    (``mutation_prob``); Gaussian interval mutation of continuous genes (``sigma_factor`` times
    the range); with probability ``random_init_prob`` the child is replaced by a random one.
    In a conditional space a parameter that becomes active in a child and that neither parent
    carries takes the value it had in the best evaluated individual that had it active
    (:class:`~propulate.propagators.branches.BranchMemory`), a random one before there is any;
    and the pool is :class:`~propulate.propagators.branches.BranchPool` (the best, where each of
    the best branches keeps two places), so a branch that lost the early race keeps breeding.

    With several ``objectives`` the pool is Pareto-aware: the ``pop_size`` best by
    non-dominated front and crowding distance of the individuals the worker holds
    (:class:`~propulate.propagators.pareto_selection.ParetoPool`), and the two parents are drawn by binary
    tournament on that order (:class:`~propulate.propagators.pareto_selection.RankTournament`).

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
    objectives : Objectives, optional
        The run's declared objectives; several make the selection Pareto-aware.

    Returns
    -------
    Propagator
        The composed propagator.
    """
    if pop_size < 2:
        raise ValueError(f"pop_size must be at least 2 to draw two parents, got {pop_size}")
    space = SearchSpace.from_limits(limits)
    rng = rng if rng is not None else random.Random()
    several = objectives is not None and objectives.several
    stages = [
        ParetoPool(pop_size, objectives) if several else SelectMin(pop_size),  # type: ignore[arg-type]
        RankTournament(offspring=2, rng=rng) if several else SelectUniform(offspring=2, rng=rng),
        CrossoverUniform(probability=crossover_prob, rng=rng),
        PointMutation(space, probability=mutation_prob, rng=rng),
        IntervalMutationNormal(space, sigma_factor=sigma_factor, probability=1.0, rng=rng),
        InitUniform(space, parents=1, probability=random_init_prob, rng=rng),
    ]
    if space.conditions:  # a branch switched to gets the best known genes of that branch
        memory = BranchMemory(space)
        if not several:  # the runner-up branches keep places in the pool
            stages[0] = BranchPool(pop_size, space)
        stages[3].memory = stages[4].memory = memory  # type: ignore[attr-defined]
        stages.insert(0, memory)
    breed = Compose(stages)
    return Conditional(pop_size, breed, InitUniform(space, rng=rng))


def ga_propagator(
    space: SearchSpace, options: GAOptions, rng: random.Random, run: RunFacts
) -> Propagator:
    """The registry's ``ga``: :func:`get_default_propagator` with the entry's options.

    Under a pruner (``run.pruned``) with one objective, the chain's pool is topped up with
    the best pruned evaluations while the island holds fewer than ``pop_size`` finished ones
    (:class:`~propulate.propagators.pruned_pool.PrunedPool`), and a bred child is replaced by a
    random one with probability ``pruned_random_init_prob`` instead of ``random_init_prob``
    (exploring is cheap there: most random children stop at the first rung). Without a pruner
    the chain is exactly :func:`get_default_propagator`'s with the options.
    """
    objectives = run.objectives
    pruned = run.pruned and not (objectives is not None and objectives.several)
    chain = get_default_propagator(
        options.pop_size,
        space,
        options.crossover_prob,
        options.mutation_prob,
        options.pruned_random_init_prob if pruned else options.random_init_prob,
        options.sigma_factor,
        rng=rng,
        objectives=objectives,
    )
    return PrunedPool(options.pop_size, chain) if pruned else chain
