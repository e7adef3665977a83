"""The shipped benchmark functions (``propulate.problems.benchmark``): Propulate 1.2's
fourteen names, the paper's dimensions and limits, minima, reference formulas, batches, n-D
variants, the Propulate-1.2 search spaces and their speed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import numpy as np
import pytest

from propulate.compat.utils.benchmark_functions import FUNCTION_NAMES, get_function_search_space
from propulate.problems import benchmark
from propulate.problems.benchmark import FUNCTIONS, benchmark_nd, param_names, sphere_nd

PROPULATE_12_NAMES = {
    "bukin",
    "eggcrate",
    "himmelblau",
    "keane",
    "leon",
    "rastrigin",
    "schwefel",
    "sphere",
    "step",
    "rosenbrock",
    "quartic",
    "bisphere",
    "birastrigin",
    "griewank",
}

# ------------------------------------------------------------------------------------------------
# Plain-python reference formulas (written from the paper's table and the textbook definitions).
# ------------------------------------------------------------------------------------------------


def ref_sphere(x: list[float]) -> float:
    return sum(v * v for v in x)


def ref_rosenbrock(x: list[float]) -> float:
    return sum(100 * (x[i] ** 2 - x[i + 1]) ** 2 + (1 - x[i]) ** 2 for i in range(len(x) - 1))


def ref_step(x: list[float]) -> float:
    return float(sum(int(v) for v in x))


def ref_quartic_noise_free(x: list[float]) -> float:
    return sum((i + 1) * v**4 for i, v in enumerate(x))


def ref_rastrigin(x: list[float]) -> float:
    return 10 * len(x) + sum(v * v - 10 * math.cos(2 * math.pi * v) for v in x)


def ref_griewank(x: list[float]) -> float:
    prod = 1.0
    for i, v in enumerate(x):
        prod *= math.cos(v / math.sqrt(i + 1))
    return 1 + sum(v * v for v in x) / 4000 - prod


def ref_schwefel(x: list[float]) -> float:
    return 418.982887 * len(x) - sum(v * math.sin(math.sqrt(abs(v))) for v in x)


def _lunacek(x: list[float]) -> tuple[float, float]:
    n = len(x)
    s = 1 - 1 / math.sqrt(2 * math.sqrt(n + 20) - 8.2)
    mu1 = 2.5
    mu2 = -math.sqrt((mu1**2 - 1) / s)
    sphere_part = min(sum((v - mu1) ** 2 for v in x), n + s * sum((v - mu2) ** 2 for v in x))
    return sphere_part, 10 * sum(1 - math.cos(2 * math.pi * (v - mu1)) for v in x)


def ref_bisphere(x: list[float]) -> float:
    return _lunacek(x)[0]


def ref_birastrigin(x: list[float]) -> float:
    return sum(_lunacek(x))


def ref_bukin(x: list[float]) -> float:
    return 100 * math.sqrt(abs(x[1] - 0.01 * x[0] ** 2)) + 0.01 * abs(x[0] + 10)


def ref_eggcrate(x: list[float]) -> float:
    return x[0] ** 2 + x[1] ** 2 + 25 * (math.sin(x[0]) ** 2 + math.sin(x[1]) ** 2)


def ref_himmelblau(x: list[float]) -> float:
    return (x[0] ** 2 + x[1] - 11) ** 2 + (x[0] + x[1] ** 2 - 7) ** 2


def ref_keane(x: list[float]) -> float:
    a, b = x
    return -(math.sin(a - b) ** 2) * math.sin(a + b) ** 2 / math.hypot(a, b)


def ref_leon(x: list[float]) -> float:
    return 100 * (x[1] - x[0] ** 3) ** 2 + (1 - x[0]) ** 2


REFERENCES: dict[str, Callable[[list[float]], float]] = {
    "sphere": ref_sphere,
    "rosenbrock": ref_rosenbrock,
    "step": ref_step,
    "rastrigin": ref_rastrigin,
    "griewank": ref_griewank,
    "schwefel": ref_schwefel,
    "bisphere": ref_bisphere,
    "birastrigin": ref_birastrigin,
    "bukin": ref_bukin,
    "eggcrate": ref_eggcrate,
    "himmelblau": ref_himmelblau,
    "keane": ref_keane,
    "leon": ref_leon,
}

PAPER_DIMS = {
    "sphere": 2,
    "rosenbrock": 2,
    "step": 5,
    "quartic": 30,
    "rastrigin": 20,
    "griewank": 10,
    "schwefel": 10,
    "bisphere": 30,
    "birastrigin": 30,
}


def _random_point(limits: Mapping[str, tuple[float, float]], rng: np.random.Generator) -> dict:
    return {k: float(rng.uniform(lo, hi)) for k, (lo, hi) in limits.items()}


# ------------------------------------------------------------------------------------------------
# Benchmark functions.
# ------------------------------------------------------------------------------------------------


def test_registry_has_the_fourteen_propulate_names() -> None:
    assert set(FUNCTIONS) == PROPULATE_12_NAMES
    assert set(FUNCTION_NAMES) == PROPULATE_12_NAMES


@pytest.mark.parametrize("name", sorted(PAPER_DIMS))
def test_paper_dimensions_and_limits(name: str) -> None:
    bench = FUNCTIONS[name]
    assert bench.dims == PAPER_DIMS[name]
    assert list(bench.limits) == param_names(bench.dims)
    assert all(lo == -hi for lo, hi in bench.limits.values())


@pytest.mark.parametrize("name", sorted(set(FUNCTIONS) - {"quartic"}))
def test_value_at_minimizer_is_the_minimum(name: str) -> None:
    bench = FUNCTIONS[name]
    assert bench.minimizer is not None
    for key, value in bench.minimizer.items():
        lo, hi = bench.limits[key]
        assert lo <= value <= hi
    # schwefel's rounded constant V leaves about -2.7e-6 at the minimizer.
    assert bench(bench.minimizer) == pytest.approx(bench.minimum, abs=1e-5)
    assert bench.function(bench.minimizer) == bench(bench.minimizer)


def test_value_at_minimizer_is_below_random_points() -> None:
    rng = np.random.default_rng(1)
    for name, bench in FUNCTIONS.items():
        if bench.noisy:
            continue
        x = rng.uniform(*bench.bounds().T, size=(2000, bench.dims))
        assert np.all(bench.evaluate(x) >= bench.minimum - 1e-5), name


def test_quartic_minimum_is_the_noise_mean() -> None:
    bench = FUNCTIONS["quartic"]
    assert bench.noisy and bench.minimum == 0.0
    values = [bench(bench.minimizer) for _ in range(4000)]
    assert len(set(values)) > 1  # noisy
    # Sum of 30 standard normals: std sqrt(30); the mean of 4000 has std 0.087.
    assert abs(np.mean(values)) < 0.5
    assert np.std(values) == pytest.approx(math.sqrt(30), rel=0.1)
    quiet = benchmark_nd("quartic", 30, noise=False)
    assert quiet(quiet.minimizer) == 0.0 and not quiet.noisy


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_values_match_reference_formula(name: str) -> None:
    bench = FUNCTIONS[name]
    rng = np.random.default_rng(sorted(REFERENCES).index(name))
    for _ in range(20):
        params = _random_point(bench.limits, rng)
        expected = REFERENCES[name](list(params.values()))
        assert bench(params) == pytest.approx(expected, rel=1e-10, abs=1e-10)


def test_quartic_matches_reference_when_noise_free() -> None:
    quiet = benchmark_nd("quartic", 30, noise=False)
    rng = np.random.default_rng(2)
    params = _random_point(quiet.limits, rng)
    assert quiet(params) == pytest.approx(ref_quartic_noise_free(list(params.values())))
    a = benchmark_nd("quartic", 30, seed=7)
    b = benchmark_nd("quartic", 30, seed=7)
    assert a(params) == b(params)


def test_parameters_are_read_by_name_not_position() -> None:
    bench = FUNCTIONS["griewank"]
    params = _random_point(bench.limits, np.random.default_rng(3))
    shuffled = dict(reversed(list(params.items())))
    shuffled["extra"] = 99.0
    assert bench(shuffled) == bench(params)
    with pytest.raises(KeyError, match="griewank expects"):
        bench({"a": 1.0})


def test_batch_evaluation_matches_pointwise() -> None:
    for name, bench in FUNCTIONS.items():
        if bench.noisy:
            continue
        x = np.random.default_rng(4).uniform(*bench.bounds().T, size=(5, bench.dims))
        pointwise = [bench(dict(zip(bench.keys, row, strict=True))) for row in x]
        np.testing.assert_allclose(bench.evaluate(x), pointwise, rtol=1e-12, err_msg=name)


def test_keane_is_zero_at_origin() -> None:
    assert FUNCTIONS["keane"]({"a": 0.0, "b": 0.0}) == 0.0


def test_sphere_nd() -> None:
    bench = sphere_nd(20)
    assert bench.dims == 20
    assert set(bench.limits.values()) == {(-5.12, 5.12)}
    assert bench(bench.minimizer) == 0.0
    assert bench(dict.fromkeys(bench.limits, 1.0)) == 20.0


def test_benchmark_nd_variants() -> None:
    step = benchmark_nd("step", 3)
    assert step.minimum == -15.0 and step(step.minimizer) == -15.0
    wide = benchmark_nd("step", 2, bound=7.5)
    assert wide.minimum == -14.0 and wide(wide.minimizer) == -14.0
    for name in ("bisphere", "birastrigin", "rosenbrock", "schwefel", "griewank"):
        b = benchmark_nd(name, 4)
        assert b(b.minimizer) == pytest.approx(b.minimum, abs=1e-5)
    with pytest.raises(ValueError, match="exclude"):
        benchmark_nd("schwefel", 3, bound=100.0)
    with pytest.raises(ValueError):
        benchmark_nd("bisphere", 1)
    with pytest.raises(ValueError, match="choose from"):
        benchmark_nd("keane", 3)


def test_module_level_losses_are_the_registry_losses() -> None:
    assert benchmark.sphere is FUNCTIONS["sphere"].function
    assert benchmark.bukin_n6 is FUNCTIONS["bukin"].function
    assert benchmark.egg_crate.__name__ == "eggcrate"


@pytest.mark.parametrize("name", sorted(PROPULATE_12_NAMES))
def test_get_function_search_space(name: str) -> None:
    function, limits = get_function_search_space(name)
    assert function is FUNCTIONS[name].function
    assert limits == FUNCTIONS[name].limits and limits is not FUNCTIONS[name].limits
    params = {k: (lo + hi) / 2 for k, (lo, hi) in limits.items()}
    assert isinstance(function(params), float)


def test_get_function_search_space_rejects_unknown_name() -> None:
    with pytest.raises(ValueError, match="valid names:.*sphere.*leon"):
        get_function_search_space("spherical")


def test_losses_are_fast() -> None:
    import time

    bench = sphere_nd(20)
    params = dict.fromkeys(bench.limits, 0.3)
    start = time.perf_counter()
    for _ in range(10_000):
        bench.function(params)
    assert time.perf_counter() - start < 1.0  # >= 10,000 evaluations per second
