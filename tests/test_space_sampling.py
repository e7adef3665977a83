"""Sampling from :mod:`propulate.space`: seeded feasible draws and Latin hypercube designs
(stratified, reproducible, within the task's constraint).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from propulate.space import Float, SearchSpace, SpaceError
from tests.space_utils import SETTINGS, _nb_fits, float_dims, spaces


# --------------------------------------------------------------------------- sampling
def test_sample_is_seeded_feasible_and_in_bounds() -> None:
    space = SearchSpace(
        {"nb": (1, 512), "x": Float(1e-3, 1.0, log=True), "c": ("a", "b")}, _nb_fits
    )
    task = {"m": 30, "n": 50}
    draws = [space.sample(np.random.default_rng(7), task) for _ in range(2)]
    assert draws[0] == draws[1]
    rng = np.random.default_rng(0)
    samples = [space.sample(rng, task) for _ in range(200)]
    assert all(space.is_valid(s, task) for s in samples)
    assert len({s["nb"] for s in samples}) > 15
    assert {s["c"] for s in samples} == {"a", "b"}


def test_sample_gives_up_on_infeasible_constraint() -> None:
    space = SearchSpace({"x": (0.0, 1.0)}, lambda p: False)
    with pytest.raises(SpaceError, match="no feasible"):
        space.sample(np.random.default_rng(0), max_tries=50)


@st.composite
def continuous_spaces(draw: st.DrawFn) -> SearchSpace:
    dims = draw(st.lists(float_dims(), min_size=1, max_size=4))
    return SearchSpace({f"f{i}": d for i, d in enumerate(dims)})


@SETTINGS
@given(space=continuous_spaces(), n=st.integers(1, 40), seed=st.integers(0, 2**32 - 1))
def test_latin_hypercube_is_stratified(space: SearchSpace, n: int, seed: int) -> None:
    points = space.latin_hypercube(n, seed=seed)
    assert len(points) == n
    assert all(space.in_bounds(p) for p in points)
    u = space.encode_many(points)
    bins = np.clip(np.floor(u * n).astype(int), 0, n - 1)
    for j in range(space.dim):
        assert sorted(bins[:, j]) == list(range(n)), f"dimension {space.names[j]} not stratified"


@SETTINGS
@given(space=spaces(), n=st.integers(1, 12), seed=st.integers(0, 2**32 - 1))
def test_latin_hypercube_is_reproducible_and_valid(space: SearchSpace, n: int, seed: int) -> None:
    a = space.latin_hypercube(n, seed=seed)
    assert a == space.latin_hypercube(n, seed=seed)
    assert a == space.latin_hypercube(n, seed=np.random.default_rng(seed))
    assert 1 <= len(a) <= n
    assert all(space.in_bounds(p) for p in a)
    keys = [space.key(p) for p in a]
    assert len(set(keys)) == len(keys)  # no duplicate configurations


@SETTINGS
@given(seeds=st.lists(st.integers(0, 2**32 - 1), min_size=2, max_size=2, unique=True))
def test_latin_hypercube_differs_across_seeds(seeds: list[int]) -> None:
    space = SearchSpace({"x": (0.0, 1.0), "y": Float(1e-3, 1.0, log=True)})
    a, b = (space.latin_hypercube(10, seed=s) for s in seeds)
    assert a != b
    assert all(p != q for p, q in zip(a, b, strict=True))


@SETTINGS
@given(
    m=st.integers(1, 600),
    n_=st.integers(1, 600),
    n=st.integers(1, 30),
    seed=st.integers(0, 2**32 - 1),
)
def test_latin_hypercube_respects_task_constraint(m: int, n_: int, n: int, seed: int) -> None:
    space = SearchSpace({"nb": (1, 512), "x": (0.0, 1.0)}, _nb_fits)
    task = {"m": m, "n": n_}
    assume(min(m, n_) >= 2)  # down to 2 of 512 values feasible
    points = space.latin_hypercube(n, seed=seed, task=task)
    assert len(points) == n
    assert all(p["nb"] <= min(m, n_) for p in points)
    assert all(space.is_valid(p, task) for p in points)
    assert points == space.latin_hypercube(n, seed=seed, task=task)


def test_latin_hypercube_with_a_tight_constraint_fills_the_design() -> None:
    space = SearchSpace({"nb": (1, 512), "x": (0.0, 1.0)}, _nb_fits)
    for n in (1, 2, 10):
        points = space.latin_hypercube(n, seed=0, task={"m": 1, "n": 700})
        assert len(points) == n
        assert all(p["nb"] == 1 for p in points)


def test_latin_hypercube_task_changes_the_design() -> None:
    space = SearchSpace({"nb": (1, 512), "x": (0.0, 1.0)}, _nb_fits)
    loose = space.latin_hypercube(20, seed=1, task={"m": 512, "n": 512})
    tight = space.latin_hypercube(20, seed=1, task={"m": 16, "n": 512})
    assert max(p["nb"] for p in loose) > 16
    assert max(p["nb"] for p in tight) <= 16


def test_latin_hypercube_edge_cases() -> None:
    space = SearchSpace({"c": ("a", "b"), "n": (1, 2)})
    assert space.latin_hypercube(0, seed=0) == []
    assert space.latin_hypercube(-3, seed=0) == []
    small = space.latin_hypercube(10, seed=0, max_rounds=20)
    # Only four distinct configurations exist.
    assert sorted(space.key(p) for p in small) == [("a", 1), ("a", 2), ("b", 1), ("b", 2)]
    with pytest.raises(SpaceError, match="no feasible"):
        SearchSpace({"x": (0.0, 1.0)}, lambda p: False).latin_hypercube(3, seed=0, max_rounds=5)
