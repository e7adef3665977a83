"""The LAPACK QR objective (``propulate.problems.lapack_qr``): its constraint, runtimes, BLAS
threads (capped by an override, the cores, shared among local ranks) and the cached matrices.
"""

from __future__ import annotations

import numpy as np
import pytest
import threadpoolctl

from propulate.problems import lapack_qr

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
