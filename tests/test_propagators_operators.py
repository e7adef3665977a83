"""What every operator of :mod:`propulate.propagators` promises (a valid new individual, inputs
left alone, Propulate limits accepted), the probability of ``Stochastic`` operators, the
``Propagator`` base and ``InitUniform``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from propulate.population import Individual
from propulate.propagators import (
    Conditional,
    CrossoverMultiple,
    CrossoverSigmoid,
    CrossoverUniform,
    InitUniform,
    IntervalMutationNormal,
    PointMutation,
    Propagator,
    RandomPointMutation,
    Stochastic,
    get_default_propagator,
)
from propulate.space import SearchSpace
from tests.propagator_utils import CHOICES, SPACE, _assert_valid, _ind, _parents


def _snapshot(ind: Individual) -> tuple[Any, ...]:
    return (dict(ind), ind.loss, ind.uid, ind.active, ind.island, ind.generation, ind.status)


# --------------------------------------------------------------------------- every operator
OPERATORS: dict[str, tuple[Callable[[random.Random], Propagator], int]] = {
    "point": (lambda r: PointMutation(SPACE, points=2, rng=r), 1),
    "random_point": (lambda r: RandomPointMutation(SPACE, 1, 5, rng=r), 1),
    "interval": (lambda r: IntervalMutationNormal(SPACE, sigma_factor=0.3, points=2, rng=r), 1),
    "crossover_uniform": (lambda r: CrossoverUniform(0.5, rng=r), 2),
    "crossover_multiple": (lambda r: CrossoverMultiple(rng=r), 4),
    "crossover_sigmoid": (lambda r: CrossoverSigmoid(2.0, rng=r), 2),
    "init_replace": (lambda r: InitUniform(SPACE, parents=1, probability=0.5, rng=r), 1),
    "init": (lambda r: InitUniform(SPACE, rng=r), 0),
    "default_chain": (
        lambda r: get_default_propagator(3, SPACE, 0.7, 0.4, 0.1, 0.2, rng=r),
        5,
    ),
}


@pytest.mark.parametrize("name", list(OPERATORS))
def test_operator_outputs_valid_new_individual_and_leaves_inputs_alone(name: str) -> None:
    make, n_parents = OPERATORS[name]
    prop = make(random.Random(1))
    assert prop.offspring == 1 or isinstance(prop, Conditional)
    for seed in range(60):
        parents = _parents(seed, n_parents)
        before = [_snapshot(p) for p in parents]
        child = prop(parents)
        _assert_valid(child)
        assert all(child is not p for p in parents)
        assert child.loss is None and child.uid is None
        assert [_snapshot(p) for p in parents] == before


@pytest.mark.parametrize("name", ["point", "random_point", "interval", "init_replace"])
def test_single_parent_operators_accept_an_individual(name: str) -> None:
    prop = OPERATORS[name][0](random.Random(0))
    parent = _parents(0, 1)[0]
    child = prop(parent)
    _assert_valid(child)
    assert child is not parent


def test_operators_accept_propulate_limits() -> None:
    limits = {"x": (-1.0, 1.0), "n": (0, 3), "c": ("a", "b", "c")}
    space = SearchSpace.from_limits(limits)
    rng = random.Random(0)
    ind = InitUniform(limits, rng=rng)()
    _assert_valid(ind, space)
    for prop in (PointMutation(limits, 3, rng=rng), IntervalMutationNormal(limits, rng=rng)):
        _assert_valid(prop([ind]), space)


# --------------------------------------------------------------------------- Stochastic
@pytest.mark.parametrize(
    "make",
    [
        lambda p, r: PointMutation(SPACE, points=5, probability=p, rng=r),
        lambda p, r: RandomPointMutation(SPACE, 5, 5, probability=p, rng=r),
        lambda p, r: IntervalMutationNormal(SPACE, points=2, probability=p, rng=r),
        lambda p, r: CrossoverUniform(0.0, probability=p, rng=r),
        lambda p, r: CrossoverMultiple(probability=p, rng=r),
        lambda p, r: CrossoverSigmoid(probability=p, rng=r),
        lambda p, r: InitUniform(SPACE, parents=1, probability=p, rng=r),
    ],
)
def test_probability_zero_copies_and_one_always_applies(make: Callable[..., Propagator]) -> None:
    never, always = make(0.0, random.Random(0)), make(1.0, random.Random(0))
    for seed in range(50):
        a, b = _parents(seed, 2)
        # b differs in every gene and is much better; many copies of it make CrossoverMultiple
        # take at least one gene from b with near certainty.
        b = _ind({**b, "act": "gelu" if a["act"] != "gelu" else "relu"}, loss=-100.0)
        copy = never([a] + [b] * 9)
        assert dict(copy) == dict(a) and copy is not a and copy.loss is None
        changed = always([a] + [b] * 9)
        assert dict(changed) != dict(a)


@pytest.mark.parametrize("probability", [-0.1, 1.1])
def test_stochastic_rejects_bad_probability(probability: float) -> None:
    with pytest.raises(ValueError, match="probability"):
        Stochastic(1, 1, probability)
    with pytest.raises(ValueError, match="probability"):
        PointMutation(SPACE, probability=probability)


def test_intermediate_probability_is_respected() -> None:
    prop = PointMutation(SPACE, probability=0.3, rng=random.Random(5))
    parent = _parents(0, 1)[0]
    applied = sum(dict(prop(parent)) != dict(parent) for _ in range(2000))
    assert 0.25 < applied / 2000 < 0.35


def test_propagator_needs_offspring() -> None:
    with pytest.raises(ValueError):
        Propagator(1, 0)
    with pytest.raises(NotImplementedError):
        Propagator(1, 1)([])


# --------------------------------------------------------------------------- init
def test_init_uniform_covers_the_space() -> None:
    prop = InitUniform(SPACE, rng=random.Random(0))
    draws = [prop() for _ in range(1000)]
    for d in draws:
        _assert_valid(d)
    assert {d["act"] for d in draws} == set(CHOICES)
    assert len({d["n"] for d in draws}) == 64
    xs = np.array([d["x"] for d in draws])
    assert xs.min() < -4.5 and xs.max() > 4.5 and abs(xs.mean()) < 0.3
    # Log-scaled float: uniform in log, so about half of the draws are below the geometric mean.
    lrs = np.array([d["lr"] for d in draws])
    assert 0.45 < np.mean(lrs < math.sqrt(1e-5 * 1e-1)) < 0.55
    ks = np.array([d["k"] for d in draws])
    assert 0.4 < np.mean(ks <= 32) < 0.6


def test_init_uniform_is_reproducible_with_seeded_rng() -> None:
    a = [dict(InitUniform(SPACE, rng=random.Random(9))()) for _ in range(3)]
    b = [dict(InitUniform(SPACE, rng=random.Random(9))()) for _ in range(3)]
    assert a == b
    c = InitUniform(SPACE, rng=random.Random(9))
    assert dict(c()) != dict(c())


def test_init_uniform_replacement_probability() -> None:
    prop = InitUniform(SPACE, parents=1, probability=0.25, rng=random.Random(1))
    parent = _parents(0, 1)[0]
    replaced = sum(dict(prop([parent])) != dict(parent) for _ in range(2000))
    assert 0.2 < replaced / 2000 < 0.3
