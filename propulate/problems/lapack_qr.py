"""A real tuning problem: the runtime of LAPACK's blocked QR factorization ``dgeqrt``.

The task is a matrix shape ``{"m": rows, "n": columns}``; the parameters are the block size ``nb``
(``1 <= nb <= min(m, n)``, a task-dependent constraint) and the number of BLAS threads
``threads``. The loss :func:`qr_runtime` factorizes a seeded random ``m x n`` matrix with
``scipy.linalg.lapack.dgeqrt`` and returns the median wall-clock time, in seconds, of a few timed
repeats after one untimed warm-up. The matrix is generated once per shape, seed and process and
copied into a preallocated Fortran-ordered work array (outside the timed region) before each run,
so only the factorization is timed. This is the single-node analogue of ScaLAPACK's PDGEQRF case
in the GPTune paper: real, noisy, and severalfold slower at bad block sizes.

Oversubscription
----------------
The BLAS thread count actually used is ``min(threads, cores_per_rank())``, set with
:mod:`threadpoolctl` for the duration of the measurement. ``cores_per_rank()`` is

* ``PROPULATE_CORES_PER_RANK`` if that environment variable is set (a positive integer; still
  capped by the CPUs this process may run on). Set it when the launcher already pins each rank
  to its own cores, e.g. ``srun --cpus-per-task=4`` -> ``PROPULATE_CORES_PER_RANK=4``;
* otherwise the number of CPUs in this process's affinity mask (``os.sched_getaffinity``)
  divided by the number of MPI ranks on this node, read from ``OMPI_COMM_WORLD_LOCAL_SIZE``
  (Open MPI), ``MPI_LOCALNRANKS`` (MPICH/Hydra), ``PMIX_LOCAL_SIZE`` (PMIx) or Slurm's
  ``SLURM_STEP_TASKS_PER_NODE`` (inside ``srun``), and 1 rank when none is set; at least 1.

This never oversubscribes a node whose ranks share one mask; when the launcher binds each rank to
a disjoint subset it is conservative (use ``PROPULATE_CORES_PER_RANK`` then).

Other environment variables: ``PROPULATE_QR_REPEATS`` overrides the default number of timed
repeats (3).
"""

from __future__ import annotations

import functools
import os
import re
import statistics
import time
from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.linalg import lapack
from threadpoolctl import ThreadpoolController

#: Environment variable: BLAS threads one rank may use (overrides the automatic cap).
CORES_ENV = "PROPULATE_CORES_PER_RANK"
#: Environment variable: default number of timed repeats of :func:`qr_runtime`.
REPEATS_ENV = "PROPULATE_QR_REPEATS"
#: Environment variables holding the number of MPI ranks on this node, in the order consulted.
LOCAL_SIZE_ENVS = ("OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "PMIX_LOCAL_SIZE")
#: Default number of timed repeats (after one warm-up).
DEFAULT_REPEATS = 3
#: Largest block size in the default search space.
NB_MAX = 512

#: The LAPACK routine (looked up at call time, so tests can wrap it).
_dgeqrt = lapack.dgeqrt


# ---------------------------------------------------------------------------------------------
# Thread cap.
# ---------------------------------------------------------------------------------------------


def available_cores() -> int:
    """Number of CPUs this process may run on (its affinity mask; ``os.cpu_count()`` if unknown)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _positive_int_env(name: str) -> int | None:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{name}={raw!r} is not an integer") from None
    if value < 1:
        raise ValueError(f"{name}={raw!r} must be at least 1")
    return value


def _slurm_tasks_on_this_node() -> int | None:
    """Tasks of the current Slurm step on this node, from ``SLURM_STEP_TASKS_PER_NODE``.

    The variable reads like ``"4(x2),3"`` (4 tasks on each of 2 nodes, then 3 on one);
    ``SLURM_NODEID`` says which node of the step this is.
    """
    spec = os.environ.get("SLURM_STEP_TASKS_PER_NODE", "").strip()
    if not spec:
        return None
    counts: list[int] = []
    for part in spec.split(","):
        match = re.fullmatch(r"\s*(\d+)\s*(?:\(x(\d+)\))?\s*", part)
        if match is None:
            return None
        counts.extend([int(match.group(1))] * int(match.group(2) or 1))
    try:
        node = int(os.environ.get("SLURM_NODEID", "0"))
    except ValueError:
        node = 0
    return counts[node] if 0 <= node < len(counts) and counts[node] > 0 else None


def local_rank_count() -> int:
    """Number of MPI ranks on this node according to the launcher's environment (1 if unknown)."""
    for name in LOCAL_SIZE_ENVS:
        try:
            value = _positive_int_env(name)
        except ValueError:
            continue
        if value is not None:
            return value
    return _slurm_tasks_on_this_node() or 1


def cores_per_rank() -> int:
    """The most BLAS threads this process should use (see the module docstring).

    Returns
    -------
    int
        ``PROPULATE_CORES_PER_RANK`` (capped by the affinity mask) if set, else
        ``available_cores() // local_rank_count()``; at least 1.

    Raises
    ------
    ValueError
        If ``PROPULATE_CORES_PER_RANK`` is set but not a positive integer.
    """
    cores = available_cores()
    override = _positive_int_env(CORES_ENV)
    if override is not None:
        return min(override, cores)
    return max(1, cores // local_rank_count())


def effective_threads(threads: int) -> int:
    """The BLAS thread count used for a requested ``threads``: ``min(threads, cores_per_rank())``."""
    return max(1, min(int(threads), cores_per_rank()))


@functools.cache
def _controller() -> ThreadpoolController:
    # Created after scipy.linalg's BLAS is loaded (module import), so it sees that library.
    return ThreadpoolController()


# ---------------------------------------------------------------------------------------------
# Spaces and constraint.
# ---------------------------------------------------------------------------------------------

#: Default task space: matrix rows ``m`` and columns ``n``.
QR_TASK_LIMITS: dict[str, tuple[int, int]] = {"m": (128, 2048), "n": (128, 2048)}
#: Parameter space: block size ``nb`` and BLAS threads (up to the CPUs of this process). The
#: constraint ``nb <= min(m, n)`` comes on top (:func:`qr_constraint`).
QR_PARAM_LIMITS: dict[str, tuple[int, int]] = {"nb": (1, NB_MAX), "threads": (1, available_cores())}


def _as_int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer | float | np.floating):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if isinstance(value, float | np.floating) and not float(value).is_integer():
        raise ValueError(f"{name} must be an integer, got {value!r}")
    return int(value)


def _shape(task: Mapping[str, Any]) -> tuple[int, int]:
    m, n = _as_int(task["m"], "m"), _as_int(task["n"], "n")
    if m < 1 or n < 1:
        raise ValueError(f"matrix shape must be positive, got m={m}, n={n}")
    return m, n


def qr_nb_upper(task: Mapping[str, Any]) -> int:
    """The task-dependent upper bound of the block size: ``min(m, n)``.

    Parameters
    ----------
    task : Mapping[str, int]
        ``{"m": rows, "n": columns}``.

    Returns
    -------
    int
        The largest valid ``nb``.
    """
    m, n = _shape(task)
    return min(m, n)


def qr_param_limits(task: Mapping[str, Any] | None = None) -> dict[str, tuple[int, int]]:
    """The parameter limits, with ``nb``'s upper bound tightened to ``min(NB_MAX, m, n)``.

    Parameters
    ----------
    task : Mapping[str, int], optional
        ``{"m": rows, "n": columns}``; without it, :data:`QR_PARAM_LIMITS`.

    Returns
    -------
    dict[str, tuple[int, int]]
        ``{"nb": (1, upper), "threads": (1, available_cores())}``.
    """
    limits = dict(QR_PARAM_LIMITS)
    if task is not None:
        limits["nb"] = (1, min(NB_MAX, qr_nb_upper(task)))
    return limits


def qr_constraint(params: Mapping[str, Any], task: Mapping[str, Any]) -> bool:
    """Whether ``params`` is valid for ``task``: integer ``1 <= nb <= min(m, n)``, ``threads >= 1``.

    Parameters
    ----------
    params : Mapping[str, int]
        ``{"nb": block size, "threads": BLAS threads}`` (``threads`` optional here).
    task : Mapping[str, int]
        ``{"m": rows, "n": columns}``.

    Returns
    -------
    bool
        True if the configuration may be evaluated.
    """
    try:
        nb = _as_int(params["nb"], "nb")
        threads = _as_int(params.get("threads", 1), "threads")
        return 1 <= nb <= qr_nb_upper(task) and threads >= 1
    except ValueError:
        return False


# ---------------------------------------------------------------------------------------------
# The loss.
# ---------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=4)
def _matrices(m: int, n: int, seed: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The (read-only) random matrix of a task and a work array of the same shape, both Fortran."""
    a = np.asfortranarray(np.random.default_rng(seed).standard_normal((m, n)))
    a.flags.writeable = False
    return a, np.empty_like(a, order="F")


def _default_repeats() -> int:
    return _positive_int_env(REPEATS_ENV) or DEFAULT_REPEATS


def qr_runtime(
    params: Mapping[str, Any],
    task: Mapping[str, Any],
    *,
    repeats: int | None = None,
    seed: int = 0,
) -> float:
    """Median runtime of ``dgeqrt`` on a random ``m x n`` matrix, in seconds.

    Parameters
    ----------
    params : Mapping[str, int]
        ``{"nb": block size, "threads": BLAS threads}``; ``threads`` defaults to 1 and is capped
        at :func:`cores_per_rank`.
    task : Mapping[str, int]
        ``{"m": rows, "n": columns}`` of the matrix.
    repeats : int, optional
        Timed repeats after one untimed warm-up; default ``PROPULATE_QR_REPEATS`` or 3.
    seed : int
        Seed of the random matrix (the matrix is cached per ``(m, n, seed)``).

    Returns
    -------
    float
        The median wall-clock time of the timed factorizations, in seconds.

    Raises
    ------
    ValueError
        If ``nb`` violates ``1 <= nb <= min(m, n)``, a value is not an integer or ``threads`` or
        ``repeats`` is below 1.
    """
    m, n = _shape(task)
    nb = _as_int(params["nb"], "nb")
    threads = _as_int(params.get("threads", 1), "threads")
    if not 1 <= nb <= min(m, n):
        raise ValueError(f"block size nb={nb} violates 1 <= nb <= min(m, n) = {min(m, n)}")
    if threads < 1:
        raise ValueError(f"threads must be at least 1, got {threads}")
    reps = _default_repeats() if repeats is None else int(repeats)
    if reps < 1:
        raise ValueError(f"repeats must be at least 1, got {reps}")
    a, work = _matrices(m, n, int(seed))
    times: list[float] = []
    with _controller().limit(limits=effective_threads(threads), user_api="blas"):
        for k in range(reps + 1):
            np.copyto(work, a)
            start = time.perf_counter()
            _, _, info = _dgeqrt(nb, work, overwrite_a=1)
            elapsed = time.perf_counter() - start
            if info != 0:
                raise RuntimeError(f"dgeqrt failed with info={info} (m={m}, n={n}, nb={nb})")
            if k > 0:
                times.append(elapsed)
    return float(statistics.median(times))


def make_qr_loss(repeats: int = DEFAULT_REPEATS, seed: int = 0) -> functools.partial[float]:
    """:func:`qr_runtime` with a fixed number of repeats and matrix seed.

    Parameters
    ----------
    repeats : int
        Timed repeats after one warm-up.
    seed : int
        Seed of the random matrices.

    Returns
    -------
    functools.partial
        ``loss(params, task) -> float`` (seconds).
    """
    return functools.partial(qr_runtime, repeats=repeats, seed=seed)
