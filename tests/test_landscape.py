"""The landscape probe of ``auto``: its design and its verdict on known functions."""

from __future__ import annotations

import math

import pytest

from propulate.problems.benchmark import benchmark_nd
from propulate.propagators.landscape import LandscapeProbe, probe_size
from propulate.space import Categorical, Float, Integer, SearchSpace


def _verdict(name: str, dims: int, seed: int):
    bench = benchmark_nd(name, dims)
    space = SearchSpace({k: Float(lo, hi) for k, (lo, hi) in bench.limits.items()})
    probe = LandscapeProbe(space, seed)
    losses = {j: float(bench.function(probe.params(j))) for j in range(len(probe))}
    return probe, probe.verdict(losses)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(
    ("name", "dims"), [("rastrigin", 20), ("schwefel", 10), ("birastrigin", 30)]
)
def test_separable_functions_with_many_minima_are_found(name: str, dims: int, seed: int) -> None:
    probe, verdict = _verdict(name, dims, seed)
    assert verdict.separable_multimodal, verdict
    assert verdict.measured == len(probe) <= probe_size(dims)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(
    ("name", "dims"),
    [("sphere", 10), ("rosenbrock", 10), ("griewank", 10), ("quartic", 30), ("bisphere", 30)],
)
def test_unimodal_or_interacting_functions_are_not(name: str, dims: int, seed: int) -> None:
    _, verdict = _verdict(name, dims, seed)
    assert not verdict.separable_multimodal, verdict


def test_the_design_is_the_seeds_and_the_verdict_skips_missing_losses() -> None:
    space = SearchSpace({f"x{i}": Float(-5.12, 5.12) for i in range(6)})
    a, b, c = LandscapeProbe(space, 7), LandscapeProbe(space, 7), LandscapeProbe(space, 8)
    points = [a.params(j) for j in range(len(a))]
    assert points == [b.params(j) for j in range(len(b))]
    assert points != [c.params(j) for j in range(len(c))]
    assert len({tuple(p.values()) for p in points}) == len(points), "one index per point"
    rastrigin = benchmark_nd("rastrigin", 6).function
    keys = list(benchmark_nd("rastrigin", 6).limits)

    def loss(j: int) -> float:
        return float(rastrigin(dict(zip(keys, a.params(j).values(), strict=True))))

    full = a.verdict({j: loss(j) for j in range(len(a))})
    assert full.separable_multimodal
    nothing = a.verdict({})
    assert math.isnan(nothing.interaction) and nothing.minima == 0 and nothing.measured == 0
    assert not nothing.separable_multimodal
    failed = {j: (math.inf if j % 7 == 3 else loss(j)) for j in range(len(a))}
    partial = a.verdict(failed)
    assert partial.measured < len(a) and partial.interaction == pytest.approx(0.0, abs=1e-9)


def test_integer_and_categorical_parameters() -> None:
    space = SearchSpace(
        {
            "n": Integer(1, 4),
            "m": Integer(0, 100),
            "x": Float(0.0, 1.0),
            "kind": Categorical(("a", "b")),
        }
    )
    probe = LandscapeProbe(space, 3)
    points = [probe.params(j) for j in range(len(probe))]
    assert len({tuple(p.values()) for p in points}) == len(points) < probe_size(3)
    assert len({p["kind"] for p in points}) == 1, "a categorical parameter stays at the base"
    assert all(1 <= p["n"] <= 4 and 0 <= p["m"] <= 100 for p in points)
    assert len({p["x"] for p in points}) > 20, "the lines run along the float parameter"
    with pytest.raises(ValueError, match="two float or integer"):
        LandscapeProbe(SearchSpace({"x": Float(0.0, 1.0), "k": Categorical(("a", "b"))}), 0)
