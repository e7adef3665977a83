"""Dense linear algebra of the Gaussian-process models: BLAS threads and a robust Cholesky."""

from __future__ import annotations

import contextlib
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
