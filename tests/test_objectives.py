"""Tests of the shipped objectives: benchmark functions, GPTune's demo function, LAPACK QR."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import numpy as np
import pytest
import threadpoolctl

from propulate.objectives import benchmark, demo, lapack_qr
from propulate.objectives.benchmark import FUNCTIONS, benchmark_nd, param_names, sphere_nd
from propulate.utils.benchmark_functions import FUNCTION_NAMES, get_function_search_space

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


# ------------------------------------------------------------------------------------------------
# GPTune's demo function.
# ------------------------------------------------------------------------------------------------


def ref_demo(t: float, x: float) -> float:
    w = 2 * math.pi * x
    waves = sum(math.sin((t + 2) ** k * w) for k in (1, 2, 3))
    return 1 + math.exp(-((x + 1) ** (t + 1))) * math.cos(w) * waves


def test_demo_function_matches_formula_and_broadcasts() -> None:
    rng = np.random.default_rng(5)
    ts, xs = rng.uniform(0, 10, 50), rng.uniform(0, 1, 50)
    values = demo.demo_function(ts, xs)
    assert isinstance(values, np.ndarray) and values.shape == (50,)
    np.testing.assert_allclose(values, [ref_demo(t, x) for t, x in zip(ts, xs, strict=True)])
    assert isinstance(demo.demo_function(1.0, 0.5), float)
    assert demo.demo_function(np.array([[0.0], [1.0]]), np.linspace(0, 1, 7)).shape == (2, 7)
    assert demo.demo_loss({"x": 0.3}, {"t": 2.5}) == pytest.approx(ref_demo(2.5, 0.3))
    assert demo.DEMO_TASK_LIMITS == {"t": (0.0, 10.0)}
    assert demo.DEMO_PARAM_LIMITS == {"x": (0.0, 1.0)}


@pytest.mark.parametrize("t", [0.0, 0.8, 2.0, 4.5, 7.0, 10.0])
def test_demo_true_optimum_beats_random_sample(t: float) -> None:
    x_star, f_star = demo.demo_true_optimum(t)
    assert 0.0 <= x_star <= 1.0
    assert demo.demo_function(t, x_star) == pytest.approx(f_star, abs=1e-12)
    sample = np.random.default_rng(int(t * 10)).uniform(0.0, 1.0, 10_000)
    assert f_star <= np.min(demo.demo_function(t, sample))


def test_demo_true_optimum_refines_a_coarse_grid() -> None:
    # A coarse request is raised to >= 64 points per period of the fastest wave.
    coarse = demo.demo_true_optimum(10.0, grid=11)
    dense = demo.demo_true_optimum(10.0, grid=400_001)
    assert coarse[1] == pytest.approx(dense[1], abs=1e-9)


# ------------------------------------------------------------------------------------------------
# LAPACK QR.
# ------------------------------------------------------------------------------------------------

TASK = {"m": 120, "n": 80}


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """No launcher or override variables, whatever the test runner's environment."""
    for name in (lapack_qr.CORES_ENV, lapack_qr.REPEATS_ENV, *lapack_qr.LOCAL_SIZE_ENVS):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("SLURM_STEP_TASKS_PER_NODE", raising=False)
    monkeypatch.delenv("SLURM_NODEID", raising=False)
    return monkeypatch


def test_qr_constraint() -> None:
    assert lapack_qr.qr_constraint({"nb": 1, "threads": 1}, TASK)
    assert lapack_qr.qr_constraint({"nb": 80, "threads": 2}, TASK)
    assert lapack_qr.qr_constraint({"nb": np.int64(40)}, TASK)
    assert not lapack_qr.qr_constraint({"nb": 81, "threads": 1}, TASK)
    assert not lapack_qr.qr_constraint({"nb": 0, "threads": 1}, TASK)
    assert not lapack_qr.qr_constraint({"nb": 8.5, "threads": 1}, TASK)
    assert not lapack_qr.qr_constraint({"nb": 8, "threads": 0}, TASK)
    assert lapack_qr.qr_nb_upper(TASK) == 80
    assert lapack_qr.qr_param_limits(TASK)["nb"] == (1, 80)
    assert lapack_qr.qr_param_limits({"m": 4000, "n": 3000})["nb"] == (1, lapack_qr.NB_MAX)
    assert lapack_qr.QR_PARAM_LIMITS["threads"] == (1, lapack_qr.available_cores())


def test_qr_runtime_is_a_positive_float(clean_env: pytest.MonkeyPatch) -> None:
    value = lapack_qr.qr_runtime({"nb": 16, "threads": 1}, TASK)
    assert isinstance(value, float) and 0.0 < value < 1.0
    assert lapack_qr.make_qr_loss(repeats=1)({"nb": 80, "threads": 2}, TASK) > 0.0


@pytest.mark.parametrize("nb", [0, 81, 1000, 2.5])
def test_qr_runtime_rejects_invalid_nb(nb: float) -> None:
    with pytest.raises(ValueError, match="nb"):
        lapack_qr.qr_runtime({"nb": nb, "threads": 1}, TASK)


def test_qr_runtime_rejects_invalid_threads_and_repeats() -> None:
    with pytest.raises(ValueError, match="threads"):
        lapack_qr.qr_runtime({"nb": 8, "threads": 0}, TASK)
    with pytest.raises(ValueError, match="repeats"):
        lapack_qr.qr_runtime({"nb": 8, "threads": 1}, TASK, repeats=0)


def _record_blas_threads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Wrap dgeqrt so that each call records the BLAS thread counts in force."""
    seen: list[int] = []
    original = lapack_qr._dgeqrt

    def spy(*args: object, **kwargs: object) -> object:
        seen.extend(
            info["num_threads"]
            for info in threadpoolctl.threadpool_info()
            if info["user_api"] == "blas"
        )
        return original(*args, **kwargs)

    monkeypatch.setattr(lapack_qr, "_dgeqrt", spy)
    return seen


def test_threads_are_capped_by_override(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv(lapack_qr.CORES_ENV, "1")
    assert lapack_qr.cores_per_rank() == 1
    seen = _record_blas_threads(clean_env)
    lapack_qr.qr_runtime({"nb": 8, "threads": 64}, TASK, repeats=2)
    assert len(seen) >= 3 and set(seen) == {1}


def test_threads_are_capped_by_available_cores(clean_env: pytest.MonkeyPatch) -> None:
    cores = lapack_qr.available_cores()
    assert lapack_qr.cores_per_rank() == cores
    assert lapack_qr.effective_threads(10_000) == cores
    assert lapack_qr.effective_threads(1) == 1
    seen = _record_blas_threads(clean_env)
    lapack_qr.qr_runtime({"nb": 8, "threads": 10_000}, TASK, repeats=1)
    assert seen and max(seen) <= cores
    clean_env.setenv(lapack_qr.CORES_ENV, str(cores + 100))
    assert lapack_qr.cores_per_rank() == cores  # the override never exceeds the mask


def test_threads_are_shared_among_local_ranks(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setattr(lapack_qr, "available_cores", lambda: 8)
    clean_env.setenv("MPI_LOCALNRANKS", "3")
    assert lapack_qr.local_rank_count() == 3 and lapack_qr.cores_per_rank() == 2
    clean_env.setenv("MPI_LOCALNRANKS", "16")
    assert lapack_qr.cores_per_rank() == 1
    clean_env.delenv("MPI_LOCALNRANKS")
    clean_env.setenv("SLURM_STEP_TASKS_PER_NODE", "4(x2),3")
    clean_env.setenv("SLURM_NODEID", "2")
    assert lapack_qr.local_rank_count() == 3
    clean_env.setenv("SLURM_NODEID", "1")
    assert lapack_qr.cores_per_rank() == 2
    clean_env.setenv(lapack_qr.CORES_ENV, "5")
    assert lapack_qr.cores_per_rank() == 5
    clean_env.setenv(lapack_qr.CORES_ENV, "zero")
    with pytest.raises(ValueError, match=lapack_qr.CORES_ENV):
        lapack_qr.cores_per_rank()


def test_qr_matrix_is_cached_and_seeded() -> None:
    a1, _ = lapack_qr._matrices(30, 20, 0)
    a2, _ = lapack_qr._matrices(30, 20, 0)
    b, _ = lapack_qr._matrices(30, 20, 1)
    assert a1 is a2 and not np.array_equal(a1, b)
    assert a1.flags.f_contiguous and not a1.flags.writeable
