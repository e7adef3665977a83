"""The LCM's kernel matrices: coregionalization, input kernels and their combination.

The covariance between configuration ``x`` of task ``i`` and ``x'`` of task ``j`` is

    K = sum_q B_q[i, j] k_q(x, x') + [same point] noise_i,   B_q = W_q W_q^T + diag(kappa_q)

with ``k_q`` a unit-variance ARD squared-exponential kernel over the unit cube. These
functions build its pieces from the hyperparameter blocks of
:mod:`propulate.models.hyperparameters`; :class:`propulate.models.lcm.LCM` holds the values.
"""

from __future__ import annotations

import numpy as np

from propulate.models.hyperparameters import JITTER


def coregionalization(W: np.ndarray, kappa: np.ndarray) -> np.ndarray:
    """The matrices ``B_q = W_q W_q^T + diag(kappa_q)``.

    Parameters
    ----------
    W : array (Q, T, R)
        Coregionalization coefficients.
    kappa : array (Q, T)
        Task-specific variances.

    Returns
    -------
    array (Q, T, T)
        One ``B_q`` per latent function.
    """
    n_tasks = kappa.shape[1]
    return np.einsum("qir,qjr->qij", W, W) + np.einsum("qi,ij->qij", kappa, np.eye(n_tasks))


def squared_differences(X: np.ndarray) -> np.ndarray:
    """Squared differences of the points in each input dimension.

    Parameters
    ----------
    X : array (n, d)
        Points.

    Returns
    -------
    array (d, n, n)
        ``(X[i, k] - X[j, k]) ** 2`` at ``[k, i, j]``.
    """
    return (X.T[:, :, None] - X.T[:, None, :]) ** 2


def input_kernels(D2: np.ndarray, lengthscale: np.ndarray) -> list[np.ndarray]:
    """The unit-variance ARD squared-exponential kernel matrices ``k_q`` over the points.

    Parameters
    ----------
    D2 : array (d, n, n)
        Squared differences of the points (:func:`squared_differences`).
    lengthscale : array (Q, d)
        Lengthscales of each latent kernel.

    Returns
    -------
    list of array (n, n)
        One matrix per latent function.
    """
    Kx = []
    for ls in lengthscale:
        acc = D2[0] * (-0.5 / ls[0] ** 2)
        for k in range(1, len(ls)):
            acc += D2[k] * (-0.5 / ls[k] ** 2)
        Kx.append(np.exp(acc, out=acc))
    return Kx


def covariance(
    Kx: list[np.ndarray],
    B: np.ndarray,
    task_index: np.ndarray,
    noise: np.ndarray,
    blocks: list[np.ndarray] | None = None,
) -> np.ndarray:
    """The kernel matrix of the training points, with their tasks' noise and the jitter.

    Parameters
    ----------
    Kx : list of array (n, n)
        Input kernel matrices (:func:`input_kernels`).
    B : array (Q, T, T)
        Coregionalization matrices (:func:`coregionalization`).
    task_index : array (n,) of int
        Task of each point.
    noise : array (T,)
        Noise variance of each task.
    blocks : list, optional
        Receives each ``B_q`` spread over the points (``B_q[t, t]``, shape ``(n, n)``).

    Returns
    -------
    array (n, n)
        The covariance matrix.
    """
    t = task_index
    K = np.zeros((len(t), len(t)))
    for q in range(len(Kx)):
        Bt = B[q][np.ix_(t, t)]
        K += Bt * Kx[q]
        if blocks is not None:
            blocks.append(Bt)
    K[np.diag_indices_from(K)] += noise[t] + JITTER
    return K


def cross_covariance(
    Xs: np.ndarray,
    X: np.ndarray,
    task_index: np.ndarray,
    B_task: np.ndarray,
    lengthscale: np.ndarray,
) -> np.ndarray:
    """Covariance between new points of one task and the training points.

    Parameters
    ----------
    Xs : array (m, d)
        New points, all of the same task.
    X : array (n, d)
        Training points.
    task_index : array (n,) of int
        Task of each training point.
    B_task : array (Q, T)
        The new points' task's row of each ``B_q``.
    lengthscale : array (Q, d)
        Lengthscales of each latent kernel.

    Returns
    -------
    array (m, n)
        The cross covariance (no noise).
    """
    d2 = (Xs[:, None, :] - X[None, :, :]) ** 2  # (m, n, d)
    k = np.zeros((len(Xs), len(X)))
    for q in range(len(lengthscale)):
        k += B_task[q][task_index] * np.exp(-0.5 * d2 @ (1.0 / lengthscale[q] ** 2))
    return k
