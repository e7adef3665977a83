"""A one-task Gaussian process grown one point at a time: the ``bo`` propagator's model.

The kernel is the joint GP's ARD Matern-5/2 (:func:`propulate.models.joint_gp.matern52`) over
the encoded unit cube (log-scaled parameters on their log, an inactive parameter of a
conditional space at :data:`~propulate.space.search.INACTIVE`), plus noise on the diagonal.
Its hyperparameters are fitted by :class:`~propulate.models.joint_gp.JointGP` (one task, no
task dimensions: the same likelihood, gradient and bounds), so the vector ``theta`` is laid out
as there: the log lengthscales, the log signal variance, the log noise variance.

Between fits the Cholesky factor of the kernel matrix grows by one bordered row per point
(:meth:`OnlineGP.append`, ``O(n^2)``) instead of being refactored (``O(n^3)``); new targets
(the propagator re-ranks its outputs on every proposal) cost two triangular solves
(:meth:`OnlineGP.set_targets`). :meth:`OnlineGP.predict` can condition on *pending* points,
evaluations still running elsewhere, as a kriging believer: each is taken as observed at the
posterior mean, which leaves the mean where it is and shrinks the variance around it, so a
proposal there loses its exploration value.

Callers run it inside :func:`propulate.models.linalg.blas_threads` (one BLAS thread: the same
arithmetic on every run); entering that context costs about 2 ms, so it is entered once per
proposal, not per prediction.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.linalg import lapack, solve_triangular

from propulate.models.joint_gp import JointGP, matern52
from propulate.models.linalg import cholesky


class OnlineGP:
    """An ARD Matern-5/2 GP over ``dim`` encoded inputs with an incrementally grown factor.

    Parameters
    ----------
    dim : int
        Number of encoded inputs.
    """

    def __init__(self, dim: int) -> None:
        self.dim = dim
        # the joint GP's start: lengthscales a fifth of the cube, unit signal, low noise
        self.theta = np.array([math.log(0.2)] * dim + [0.0, math.log(1e-4)])
        self.X = np.empty((0, dim))
        self._L = np.empty((0, 0))  # a buffer; the factor is its leading n x n block
        self.n = 0
        self.alpha = np.empty(0)

    # ----------------------------------------------------------------- parameters
    @property
    def lengthscale(self) -> np.ndarray:
        """The ARD lengthscales (unit cube)."""
        return np.exp(self.theta[: self.dim])

    @property
    def variance(self) -> float:
        """The signal variance."""
        return float(np.exp(self.theta[self.dim]))

    @property
    def noise(self) -> float:
        """The noise variance."""
        return float(np.exp(self.theta[-1]))

    def fit(
        self, X: np.ndarray, z: np.ndarray, seed: int, restarts: int = 1, max_iter: int = 60
    ) -> None:
        """Fit the hyperparameters to ``(X, z)`` by maximum likelihood, warm-started from the
        current ones (plus ``restarts - 1`` random starts); the data held are not changed."""
        model = JointGP(np.zeros((1, 0)), X, np.zeros(len(X), dtype=int), z)
        model.set_theta(self.theta)
        model.fit(restarts=restarts, seed=seed, max_iter=max_iter)
        self.theta = model.get_theta()

    # ----------------------------------------------------------------- the factor
    def _cross(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        """The kernel between the rows of ``A`` and of ``B`` (no noise)."""
        ls = self.lengthscale
        a, b = A / ls, B / ls
        R2 = (a * a).sum(axis=1)[:, None] + (b * b).sum(axis=1)[None, :] - 2.0 * a @ b.T
        return matern52(R2, self.variance)[0]

    @property
    def L(self) -> np.ndarray:
        """The lower Cholesky factor of the training points' kernel matrix (with noise)."""
        return self._L[: self.n, : self.n]

    def reset(self, X: np.ndarray) -> None:
        """Hold the points ``X`` (rows, encoded) and factor their kernel matrix afresh."""
        X = np.atleast_2d(np.asarray(X, dtype=float)).reshape(-1, self.dim)
        n = len(X)
        self._L = np.zeros((max(2 * n, 16), max(2 * n, 16)))
        self.X, self.n = np.empty((len(self._L), self.dim)), n
        self.X[:n] = X
        if n:
            K = self._cross(X, X)
            K[np.diag_indices(n)] += self.noise
            self._L[:n, :n] = cholesky(K)
        self.alpha = np.zeros(n)

    def append(self, x: np.ndarray) -> None:
        """Add one point: the factor grows by a bordered row (``O(n^2)``); the targets must be
        set again (:meth:`set_targets`)."""
        x = np.asarray(x, dtype=float).reshape(1, self.dim)
        n = self.n
        if n == len(self._L):  # grow the buffers by doubling
            size = max(2 * n, 16)
            grown = np.zeros((size, size))
            grown[:n, :n] = self._L[:n, :n]
            X = np.empty((size, self.dim))
            X[:n] = self.X[:n]
            self._L, self.X = grown, X
        if n == 0:
            self.reset(x)
            return
        k = self._cross(self.X[:n], x)[:, 0]
        row = solve_triangular(self.L, k, lower=True, check_finite=False)
        diag = self.variance + self.noise - float(row @ row)
        if diag <= 1e-12 * self.variance:  # numerically a repeat: refactor with jitter
            X = np.vstack([self.X[:n], x])
            self.reset(X)
            return
        self._L[n, :n] = row
        self._L[n, n] = math.sqrt(diag)
        self.X[n] = x[0]
        self.n = n + 1
        self.alpha = np.zeros(self.n)

    def set_targets(self, z: np.ndarray) -> None:
        """The (standardized) outputs of the held points, in their order."""
        z = np.asarray(z, dtype=float)
        if z.shape != (self.n,):
            raise ValueError(f"expected {self.n} targets, got shape {z.shape}")
        self.alpha = lapack.dpotrs(self.L, z, lower=1)[0] if self.n else z.copy()

    # ----------------------------------------------------------------- prediction
    def predict(
        self, Xs: np.ndarray, pending: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean and variance (without noise) at the rows of ``Xs``.

        Parameters
        ----------
        Xs : array (m, d)
            Encoded points.
        pending : array (p, d), optional
            Points being evaluated elsewhere: conditioned on as observed at the posterior mean
            (kriging believer), which lowers the variance near them and keeps the mean.
        """
        Xs = np.atleast_2d(np.asarray(Xs, dtype=float))
        s = self.variance
        if self.n == 0:
            mean, var = np.zeros(len(Xs)), np.full(len(Xs), s)
            V = np.zeros((0, len(Xs)))
        else:
            k = self._cross(Xs, self.X[: self.n])
            mean = k @ self.alpha
            V = solve_triangular(self.L, k.T, lower=True, check_finite=False)
            var = s - np.sum(V * V, axis=0)
        if pending is not None and len(pending):
            var = var - self._pending_reduction(Xs, np.atleast_2d(pending), V)
        return mean, np.maximum(var, 1e-12)

    def _pending_reduction(self, Xs: np.ndarray, P: np.ndarray, V: np.ndarray) -> np.ndarray:
        """How much conditioning on the pending points ``P`` lowers the variance at ``Xs``:
        ``c^T C^-1 c`` with ``C`` and ``c`` the posterior covariances among and to them."""
        kp = self._cross(P, P)
        kps = self._cross(P, Xs)
        if self.n:
            Vp = solve_triangular(
                self.L, self._cross(self.X[: self.n], P), lower=True, check_finite=False
            )
            kp = kp - Vp.T @ Vp
            kps = kps - Vp.T @ V
        kp[np.diag_indices(len(P))] += self.noise
        Lp = cholesky(kp)
        W = solve_triangular(Lp, kps, lower=True, check_finite=False)
        return np.sum(W * W, axis=0)
