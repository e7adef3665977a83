"""A mixed search space, individuals, parents and populations shared by the tests of
:mod:`propulate.propagators`, and the check that an individual is a valid point of a space.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Any

from propulate.population import Individual, Population
from propulate.propagators import InitUniform
from propulate.space import Categorical, Float, Integer, SearchSpace

SPACE = SearchSpace(
    {
        "x": Float(-5.0, 5.0),
        "lr": Float(1e-5, 1e-1, log=True),
        "n": Integer(1, 64),
        "k": Integer(1, 1024, log=True),
        "act": Categorical(("relu", "tanh", "gelu", "silu")),
    }
)
CHOICES = SPACE["act"].choices  # type: ignore[union-attr]


def _ind(params: dict[str, Any], loss: float | None = None, uid: str | None = None) -> Individual:
    """An individual of island 0, generation 3, rank 1 with ``params``, ``loss`` and ``uid``."""
    ind = Individual(params, generation=3, rank=1)
    ind.loss = loss
    ind.uid = uid
    ind.island = 0
    return ind


def _random_ind(rng: random.Random, loss: float | None = None) -> Individual:
    """A uniformly drawn individual of :data:`SPACE` with ``loss``."""
    return _ind(InitUniform(SPACE, rng=rng)(), loss)


def _assert_valid(ind: Individual, space: SearchSpace = SPACE) -> None:
    """Fail unless ``ind`` is an individual in ``space``'s order and bounds, with the value types
    of its dimensions (int, str from the choices, finite float)."""
    assert isinstance(ind, Individual)
    assert list(ind) == list(space.names)
    assert space.in_bounds(ind), ind
    for name, dim in space.dimensions.items():
        v = ind[name]
        if isinstance(dim, Integer):
            assert type(v) is int, (name, v)
        elif isinstance(dim, Categorical):
            assert type(v) is str and v in dim.choices
        else:
            assert isinstance(v, float) and math.isfinite(v)


def _parents(seed: int, k: int = 2) -> list[Individual]:
    """``k`` seeded random individuals with losses 0, 1, ..."""
    rng = random.Random(seed)
    return [_random_ind(rng, loss=float(i)) for i in range(k)]


def _population(
    losses: Sequence[float], shuffle_seed: int = 0
) -> tuple[Population, list[Individual]]:
    """A population of one individual per loss (x = its index, uid = str(index)), added in an
    order shuffled by ``shuffle_seed``, and the individuals in the order of ``losses``."""
    pop = Population()
    inds = [_ind({"x": float(i)}, loss=loss, uid=str(i)) for i, loss in enumerate(losses)]
    order = list(inds)
    random.Random(shuffle_seed).shuffle(order)
    for ind in order:
        pop.add(ind)
    return pop, inds
