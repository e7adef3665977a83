"""Dense linear algebra of the Gaussian-process models: BLAS threads and a robust Cholesky."""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np
from scipy.linalg import lapack
from threadpoolctl import threadpool_limits

#: Below this many training points BLAS runs single-threaded: threads cost more than they save
#: on small matrices, and on shared cores their spinning slows the fit by an order of magnitude.
SMALL = 800


def blas_threads(n: int) -> contextlib.AbstractContextManager[Any]:
    """A context limiting BLAS to one thread for problems of ``n < SMALL`` points."""
    return threadpool_limits(limits=1, user_api="blas") if n < SMALL else contextlib.nullcontext()


def cholesky(K: np.ndarray) -> np.ndarray:
    """Lower Cholesky factor of ``K``, adding diagonal jitter if needed."""
    jitter = 0.0
    for _ in range(6):
        L, info = lapack.dpotrf(K + jitter * np.eye(len(K)) if jitter else K, lower=1, clean=1)
        if info == 0:
            return L
        jitter = 1e-8 if jitter == 0.0 else jitter * 10
    raise np.linalg.LinAlgError("kernel matrix is not positive definite")
