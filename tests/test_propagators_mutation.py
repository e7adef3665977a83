"""Mutation in :mod:`propulate.propagators`: point and random-point mutation (how many genes,
every choice reached, integers stay integers) and interval mutation (floats only, spread as a
fraction of the range, multiplicative on log scales, clipped to the bounds).
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from propulate.propagators import (
    CrossoverSigmoid,
    CrossoverUniform,
    IntervalMutationNormal,
    PointMutation,
    Propagator,
    RandomPointMutation,
)
from propulate.space import Categorical, Float, Integer, SearchSpace
from tests.propagator_utils import CHOICES, SPACE, _ind, _parents


# --------------------------------------------------------------------------- point mutation
def _changed(a: dict[str, Any], b: dict[str, Any]) -> set[str]:
    return {k for k in a if a[k] != b[k]}


@pytest.mark.parametrize("points", [1, 2, 3, 5])
def test_point_mutation_changes_exactly_points_genes(points: int) -> None:
    prop = PointMutation(SPACE, points=points, rng=random.Random(points))
    seen: Counter[str] = Counter()
    for seed in range(200):
        parent = _parents(seed, 1)[0]
        child = prop(parent)
        diff = _changed(parent, child)
        assert len(diff) == points
        seen.update(diff)
    assert set(seen) == set(SPACE.names)  # every gene gets picked


def test_point_mutation_of_categorical_always_changes_and_reaches_every_choice() -> None:
    space = SearchSpace({"act": Categorical(CHOICES)})
    prop = PointMutation(space, rng=random.Random(0))
    for old in CHOICES:
        parent = _ind({"act": old})
        new = Counter(prop(parent)["act"] for _ in range(600))
        assert old not in new
        assert set(new) == set(CHOICES) - {old}
        assert min(new.values()) > 150  # roughly uniform over the other three


def test_point_mutation_of_integer_changes_and_stays_int() -> None:
    space = SearchSpace({"n": Integer(0, 2), "k": Integer(1, 1000, log=True)})
    prop = PointMutation(space, points=2, rng=random.Random(0))
    values: Counter[int] = Counter()
    for _ in range(300):
        child = prop(_ind({"n": 1, "k": 10}))
        assert child["n"] in (0, 2) and child["k"] != 10
        assert type(child["n"]) is int and type(child["k"]) is int
        values[child["n"]] += 1
    assert set(values) == {0, 2}


def test_point_mutation_of_singleton_dimensions_keeps_the_value() -> None:
    space = SearchSpace({"c": Categorical(("only",)), "n": Integer(7, 7)})
    prop = PointMutation(space, points=2, rng=random.Random(0))
    for _ in range(20):
        assert dict(prop(_ind({"c": "only", "n": 7}))) == {"c": "only", "n": 7}


def test_random_point_mutation_changes_between_min_and_max_genes() -> None:
    prop = RandomPointMutation(SPACE, min_points=2, max_points=4, rng=random.Random(3))
    counts: Counter[int] = Counter()
    for seed in range(300):
        parent = _parents(seed, 1)[0]
        counts[len(_changed(parent, prop(parent)))] += 1
    assert set(counts) == {2, 3, 4}
    assert min(counts.values()) > 60


@pytest.mark.parametrize(
    "make",
    [
        lambda: PointMutation(SPACE, points=0),
        lambda: PointMutation(SPACE, points=6),
        lambda: RandomPointMutation(SPACE, 3, 2),
        lambda: RandomPointMutation(SPACE, 1, 6),
        lambda: RandomPointMutation(SPACE, 0, 2),
        lambda: IntervalMutationNormal(SPACE, sigma_factor=0.0),
        lambda: CrossoverUniform(1.5),
        lambda: CrossoverSigmoid(temperature=0.0),
    ],
)
def test_invalid_operator_arguments(make: Callable[[], Propagator]) -> None:
    with pytest.raises(ValueError):
        make()


# --------------------------------------------------------------------------- interval mutation
def test_interval_mutation_touches_only_floats() -> None:
    prop = IntervalMutationNormal(SPACE, sigma_factor=0.2, points=5, rng=random.Random(0))
    for seed in range(100):
        parent = _parents(seed, 1)[0]
        child = prop(parent)
        assert _changed(parent, child) <= {"x", "lr"}
        assert child["x"] != parent["x"] and child["lr"] != parent["lr"]  # points capped at 2


def test_interval_mutation_points_limits_genes() -> None:
    prop = IntervalMutationNormal(SPACE, sigma_factor=0.2, points=1, rng=random.Random(0))
    touched: Counter[str] = Counter()
    for seed in range(200):
        parent = _parents(seed, 1)[0]
        diff = _changed(parent, prop(parent))
        assert len(diff) == 1
        touched.update(diff)
    assert set(touched) == {"x", "lr"} and min(touched.values()) > 60


def test_interval_mutation_without_floats_is_a_copy() -> None:
    space = SearchSpace({"n": (1, 9), "c": ("a", "b")})
    parent = _ind({"n": 3, "c": "a"})
    child = IntervalMutationNormal(space, rng=random.Random(0))(parent)
    assert dict(child) == dict(parent) and child is not parent


@pytest.mark.parametrize("sigma", [0.01, 0.03])
def test_interval_mutation_sigma_is_a_fraction_of_the_range(sigma: float) -> None:
    space = SearchSpace({"x": Float(-5.0, 5.0)})
    prop = IntervalMutationNormal(space, sigma_factor=sigma, rng=random.Random(1))
    parent = _ind({"x": 0.5})
    steps = np.array([prop(parent)["x"] - 0.5 for _ in range(3000)])
    assert abs(steps.mean()) < 0.1 * sigma * 10
    assert steps.std() == pytest.approx(sigma * 10.0, rel=0.1)


def test_interval_mutation_of_log_float_is_multiplicative() -> None:
    space = SearchSpace({"lr": Float(1e-6, 1.0, log=True)})
    sigma = 0.05
    prop = IntervalMutationNormal(space, sigma_factor=sigma, rng=random.Random(2))
    spreads = []
    for centre in (1e-4, 1e-2):
        values = np.array([prop(_ind({"lr": centre}))["lr"] for _ in range(2000)])
        assert (values > 0).all()
        log_ratio = np.log(values / centre)
        # Steps are Gaussian on log(v): std = sigma * log(high / low), symmetric around 0.
        assert log_ratio.std() == pytest.approx(sigma * math.log(1e6), rel=0.1)
        assert abs(np.median(log_ratio)) < 0.1
        spreads.append(values.std() / centre)
    # The same relative spread at both scales (a linear mutation would be ~100x wider at 1e-4).
    assert spreads[0] == pytest.approx(spreads[1], rel=0.25)


def test_interval_mutation_clips_to_bounds() -> None:
    space = SearchSpace({"x": Float(0.0, 1.0), "lr": Float(1e-3, 1.0, log=True)})
    prop = IntervalMutationNormal(space, sigma_factor=5.0, points=2, rng=random.Random(0))
    values = [prop(_ind({"x": 0.99, "lr": 0.9})) for _ in range(300)]
    assert all(space.in_bounds(v) for v in values)
    assert any(v["x"] == 1.0 for v in values) and any(v["x"] == 0.0 for v in values)
