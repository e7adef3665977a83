"""A one-task Gaussian process grown one point at a time: the ``bo`` propagator's model.

The kernel is the joint GP's ARD Matern-5/2 (:func:`propulate.models.joint_gp.matern52`) over
the encoded unit cube (log-scaled parameters on their log, an inactive parameter of a
conditional space at :data:`~propulate.space.search.INACTIVE`), plus noise on the diagonal.
Its hyperparameters maximize the posterior of :class:`~propulate.models.joint_gp.JointGP`'s
likelihood and gradient (one task, no task dimensions) under a log-normal prior on the
lengthscales whose median grows with the dimension as Hvarfner et al. (2024, "Vanilla Bayesian
optimization performs great in high dimensions") scale it, ``log l ~ N(log(0.05) + log(d) / 2,
3)``, with a smaller median than theirs (0.05 sqrt(d) instead of 4.1 sqrt(d)): with the ``bo``
propagator (EI) on bbob at 20 x D in 10-D (dev instance 1 of 13 functions) the share of
targets reached was 0.057 at their median, 0.109 at 0.2 sqrt(d), 0.154 at 0.046 sqrt(d) and
0.080 at 0.01 sqrt(d) (0.161 with UCB at 0.046 sqrt(d)). With a few
dozen points and no prior a maximum-likelihood fit often shrinks some lengthscales to the
bounds: a model that knows nothing between its points. ``theta`` is laid out as the joint
GP's: the log lengthscales, the log signal variance, the log noise variance.

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

from propulate.models.fitting import GaussianPrior, minimize_restarts
from propulate.models.joint_gp import LOG_BOUNDS, JointGP, matern52
from propulate.models.linalg import blas_threads, cholesky

#: Log of the prior's median lengthscale in one dimension (it grows as ``sqrt(d)``).
PRIOR_MEDIAN = math.log(0.05)
#: Bounds of a log lengthscale (unit-cube inputs).
LENGTHSCALE = (math.log(1e-2), math.log(1e2))


class OnlineGP:
    """An ARD Matern-5/2 GP over ``dim`` encoded inputs with an incrementally grown factor.

    Parameters
    ----------
    dim : int
        Number of encoded inputs.
    """

    def __init__(self, dim: int) -> None:
        self.dim = dim
        # the prior's median lengthscale, unit signal, low noise
        self.theta = np.array([PRIOR_MEDIAN + 0.5 * math.log(dim)] * dim + [0.0, -9.0])
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

    def bounds(self) -> list[tuple[float, float]]:
        """Bounds of ``theta``: lengthscales in ``[0.01, 100]``, the joint GP's for the rest."""
        return [LENGTHSCALE] * self.dim + [LOG_BOUNDS["variance"], LOG_BOUNDS["noise"]]

    def prior(self) -> GaussianPrior:
        """The lengthscales' log-normal prior (the variance and the noise have none)."""
        mean = np.zeros(len(self.theta))
        mean[: self.dim] = PRIOR_MEDIAN + 0.5 * math.log(self.dim)
        std = np.full(len(self.theta), np.inf)
        std[: self.dim] = math.sqrt(3.0)
        return GaussianPrior(mean, std)

    def fit(
        self, X: np.ndarray, z: np.ndarray, seed: int, restarts: int = 1, max_iter: int = 60
    ) -> None:
        """Fit the hyperparameters to ``(X, z)`` (maximum a posteriori), warm-started from the
        current ones (plus ``restarts - 1`` starts drawn from the prior); the data held are
        not changed."""
        model = JointGP(np.zeros((1, 0)), X, np.zeros(len(X), dtype=int), z)
        bounds, prior = self.bounds(), self.prior()
        gen = np.random.default_rng(seed)

        def random_start() -> np.ndarray:
            t = self.theta.copy()
            t[: self.dim] = prior.mean[: self.dim] + gen.normal(size=self.dim)
            t[self.dim] = gen.uniform(-1.0, 1.0)
            return np.clip(t, [b[0] for b in bounds], [b[1] for b in bounds])

        with blas_threads(len(X)):
            _, theta, _ = minimize_restarts(
                prior.penalize(model.objective),
                self.theta,
                bounds,
                np.ones(len(self.theta), bool),
                random_start,
                restarts,
                max_iter,
                1e-7,
            )
        self.theta = theta

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
