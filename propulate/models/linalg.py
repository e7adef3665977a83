"""Dense linear algebra of the Gaussian-process models: BLAS threads, a robust Cholesky and
sums over task blocks."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.linalg import lapack
from threadpoolctl import threadpool_limits


def blas_threads(n: int) -> contextlib.AbstractContextManager[Any]:
    """A context running BLAS on one thread, whatever the problem size ``n`` (points).

    Multithreaded BLAS may split a reduction differently from one call to the next, so the same
    fit could end in a different optimum on a loaded machine; one thread makes every fit, proposal
    and prediction bit-for-bit reproducible. At the sizes the models are fitted on (a few hundred
    to a thousand points) threads gain little, and on shared cores their spinning slows a fit by
    an order of magnitude. ``n`` is kept for the callers' sake and is not used.
    """
    del n
    return threadpool_limits(limits=1, user_api="blas")


def cholesky(K: np.ndarray) -> np.ndarray:
    """Lower Cholesky factor of ``K``, adding diagonal jitter if needed."""
    jitter = 0.0
    for _ in range(6):
        L, info = lapack.dpotrf(K + jitter * np.eye(len(K)) if jitter else K, lower=1, clean=1)
        if info == 0:
            return L
        jitter = 1e-8 if jitter == 0.0 else jitter * 10
    raise np.linalg.LinAlgError("kernel matrix is not positive definite")


def task_block_sums(task_index: np.ndarray, n_tasks: int) -> Callable[[np.ndarray], np.ndarray]:
    """The map ``M -> E^T M E``: sums of a point-by-point matrix over pairs of tasks.

    ``E`` is the ``(points, n_tasks)`` indicator of each point's task. When the points are sorted
    by task (as :func:`propulate.models.sampling.build_lcm` stacks them) two ``reduceat`` passes
    do it in ``O(points^2)``; otherwise two matrix products (``O(points^2 n_tasks)``).

    Parameters
    ----------
    task_index : array (n,) of int
        Task of each point.
    n_tasks : int
        Number of tasks (the size of the result).
    """
    t = np.asarray(task_index)
    if np.all(np.diff(t) >= 0):
        present, starts = np.unique(t, return_index=True)
        cells = np.ix_(present, present)

        def by_blocks(M: np.ndarray) -> np.ndarray:
            S = np.zeros((n_tasks, n_tasks))
            S[cells] = np.add.reduceat(np.add.reduceat(M, starts, axis=0), starts, axis=1)
            return S

        return by_blocks
    E = np.zeros((len(t), n_tasks))
    E[np.arange(len(t)), t] = 1.0
    return lambda M: E.T @ M @ E
