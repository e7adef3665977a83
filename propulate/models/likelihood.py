"""The LCM's log marginal likelihood and its gradient, in numpy on the dense kernel matrix.

One Cholesky factor (computed by the caller) and one inverse per evaluation: GPy's generic
gradient path through ``Prod``/``Add``/``Coregionalize`` kernels is several times slower at the
sizes the pipeline fits (about 1000 points). The kernel's pieces come from
:mod:`propulate.models.kernel`; :meth:`propulate.models.lcm.LCM.objective` packs the gradient
into the optimizer's vector.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.linalg import lapack

from propulate.models.hyperparameters import Hyper
from propulate.models.linalg import task_block_sums


def log_likelihood_and_gradient(
    z: np.ndarray,
    L: np.ndarray,
    Kx: list[np.ndarray],
    blocks: list[np.ndarray],
    D2: np.ndarray,
    task_index: np.ndarray,
    hyper: Hyper,
) -> tuple[float, Hyper]:
    """Log marginal likelihood of ``z`` and its gradient by hyperparameter block.

    Parameters
    ----------
    z : array (n,)
        Standardized outputs.
    L : array (n, n)
        Lower Cholesky factor of the kernel matrix.
    Kx : list of array (n, n)
        Input kernel matrices (:func:`propulate.models.kernel.input_kernels`).
    blocks : list of array (n, n)
        Each ``B_q`` spread over the points (filled by
        :func:`propulate.models.kernel.covariance`).
    D2 : array (d, n, n)
        Squared differences of the points.
    task_index : array (n,) of int
        Task of each point.
    hyper : Hyper
        The hyperparameter blocks (values, not logs).

    Returns
    -------
    tuple[float, Hyper]
        The log likelihood and its gradient with respect to ``W`` and to the logs of
        ``lengthscale``, ``kappa`` and ``noise`` (the optimizer's units).
    """
    lengthscale, W, kappa, noise = (hyper[n] for n in ("lengthscale", "W", "kappa", "noise"))
    alpha = lapack.dpotrs(L, z, lower=1)[0]
    Kinv = lapack.dpotri(L, lower=1)[0]
    Kinv = np.tril(Kinv) + np.tril(Kinv, -1).T
    n = len(z)
    loglik = -0.5 * z @ alpha - np.log(np.diag(L)).sum() - 0.5 * n * math.log(2 * math.pi)
    G = np.outer(alpha, alpha)
    G -= Kinv  # d loglik / dK = G / 2
    del Kinv
    t, T = task_index, len(noise)
    task_sum = task_block_sums(t, T)
    g_ls = np.empty_like(lengthscale)
    g_W = np.empty_like(W)
    g_kappa = np.empty_like(kappa)
    for q in range(len(Kx)):
        GK = G * Kx[q]
        S = task_sum(GK)
        g_W[q] = S @ W[q]
        g_kappa[q] = 0.5 * np.diag(S) * kappa[q]
        GK *= blocks[q]
        g_ls[q] = 0.5 * np.tensordot(D2, GK, axes=([1, 2], [0, 1])) / lengthscale[q] ** 2
    g_noise = 0.5 * np.bincount(t, weights=np.diag(G), minlength=T) * noise
    return float(loglik), {"lengthscale": g_ls, "W": g_W, "kappa": g_kappa, "noise": g_noise}
