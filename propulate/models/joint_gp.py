"""A Gaussian process over task values and configuration together: MLA's ``joint`` model.

Where the LCM (:mod:`propulate.models.lcm`) treats tasks as unordered outputs tied by a learned
coregionalization, this model puts each point at ``(u, x)``, its task's values ``u`` and its
configuration ``x`` both encoded to the unit cube (:meth:`propulate.space.SearchSpace.encode`),
and uses one stationary ARD Matern-5/2 kernel over the concatenation::

    k((u, x), (u', x')) = s (1 + a + a^2 / 3) exp(-a),   a = sqrt(5 sum_k (v_k - v'_k)^2 / l_k^2)

plus ``noise`` on the diagonal. Tasks close in the task space share structure to the extent
the task lengthscales say, learned from all tasks' evaluations: on the GPTune demo function,
whose landscape shifts continuously with ``t`` while its best basin jumps, this is what lets a
task see the basins its neighbours' points reveal between their optima. Matern-5/2 rather than
the squared exponential: it is less confident between points, so expected improvement keeps
exploring narrow basins. Outputs are standardized (optionally after ``log``), as in the LCM.

The log marginal likelihood and its gradient are computed in numpy (one Cholesky factor and one
inverse per evaluation) and maximized by L-BFGS-B over the logs of the hyperparameters
(:func:`propulate.models.fitting.minimize_restarts`). The model answers the queries of MLA's
loop and acquisition (:func:`propulate.models.acquisition.propose`): ``task_index``, ``z``,
``y``, :meth:`predict_standardized`, :meth:`fit`, :meth:`save`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy.linalg import lapack, solve_triangular

from propulate.models import model_file
from propulate.models.fitting import minimize_restarts
from propulate.models.linalg import blas_threads, cholesky
from propulate.transfer.joint_posterior import SQRT5, matern52  # noqa: F401 - the model's kernel

#: Bounds of the log hyperparameters: lengthscales (unit cube), signal variance, noise variance
#: (standardized units).
LOG_BOUNDS = {
    "lengthscale": (math.log(1e-3), math.log(10.0)),
    "variance": (math.log(1e-2), math.log(1e2)),
    "noise": (math.log(1e-8), math.log(1.0)),
}
#: The ``model`` field of the saved file.
KIND = "joint-matern52"


class JointGP:
    """A GP over ``(task values, configuration)`` with its training data.

    Parameters
    ----------
    U : array (T, e)
        Each task's values encoded to the unit cube (row ``i``: task ``i``).
    X : array (n, d)
        Training configurations encoded to the unit cube.
    task_index : array (n,) of int
        Task of each training point.
    y : array (n,)
        Observed outputs.
    log_output : bool
        Model ``log(y)`` (positive outputs such as runtimes).
    info : dict, optional
        Free JSON-safe metadata saved with the model.
    """

    def __init__(
        self,
        U: np.ndarray,
        X: np.ndarray,
        task_index: Sequence[int] | np.ndarray,
        y: Sequence[float] | np.ndarray,
        log_output: bool = False,
        info: dict[str, Any] | None = None,
    ) -> None:
        self.U = np.atleast_2d(np.asarray(U, dtype=float))
        self.X = np.atleast_2d(np.asarray(X, dtype=float))
        self.task_index = np.asarray(task_index, dtype=int).reshape(-1)
        self.y = np.asarray(y, dtype=float).reshape(-1)
        if not len(self.X) == len(self.task_index) == len(self.y) or len(self.y) == 0:
            raise ValueError("X, task_index and y need the same, non-zero length")
        if self.task_index.min() < 0 or self.task_index.max() >= len(self.U):
            raise ValueError("task_index out of range")
        if log_output and np.any(self.y <= 0):
            raise ValueError("log_output needs positive outputs")
        self.n_tasks, self.log_output = len(self.U), bool(log_output)
        self.info: dict[str, Any] = dict(info or {})
        z = np.log(self.y) if self.log_output else self.y
        self.y_mean, self.y_std = float(z.mean()), float(z.std()) if z.std() > 0 else 1.0
        self.z = (z - self.y_mean) / self.y_std
        self.inputs = np.hstack([self.U[self.task_index], self.X])
        dim = self.inputs.shape[1]
        # unit-cube lengthscales a fifth of the cube, signal of the standardized data, low noise
        self.theta = np.array([math.log(0.2)] * dim + [0.0, math.log(1e-4)])
        self.log_likelihood_value = float("nan")
        self.fit_info: dict[str, int] = {}
        self._D2: np.ndarray | None = None
        self._posterior: tuple[np.ndarray, np.ndarray] | None = None

    # ----------------------------------------------------------------- parameters
    def get_theta(self) -> np.ndarray:
        """Log lengthscales (task dimensions first), log signal variance, log noise."""
        return self.theta.copy()

    def set_theta(self, theta: np.ndarray) -> None:
        """Set :meth:`get_theta`'s vector (drops the cached posterior)."""
        theta = np.asarray(theta, dtype=float)
        if theta.shape != self.theta.shape:
            raise ValueError(f"theta needs {len(self.theta)} entries, got {theta.shape}")
        self.theta, self._posterior = theta.copy(), None

    def bounds(self) -> list[tuple[float, float]]:
        """L-BFGS-B bounds of :meth:`get_theta`'s entries."""
        dim = self.inputs.shape[1]
        return [LOG_BOUNDS["lengthscale"]] * dim + [LOG_BOUNDS["variance"], LOG_BOUNDS["noise"]]

    def _parts(self) -> tuple[np.ndarray, float, float]:
        dim = self.inputs.shape[1]
        return (
            np.exp(self.theta[:dim]),
            float(np.exp(self.theta[dim])),
            float(np.exp(self.theta[-1])),
        )

    # ----------------------------------------------------------------- likelihood
    def _sq_diffs(self) -> np.ndarray:
        if self._D2 is None:
            V = self.inputs
            self._D2 = (V.T[:, :, None] - V.T[:, None, :]) ** 2
        return self._D2

    def _kernel(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The squared differences scaled by the lengthscales (per dimension), the training
        kernel matrix without noise, and its derivative factor (:func:`matern52`)."""
        ls, s, _ = self._parts()
        scaled = self._sq_diffs() / (ls**2)[:, None, None]
        K, dfac = matern52(scaled.sum(axis=0), s)
        return scaled, K, dfac

    def objective(self, theta: np.ndarray, mask: np.ndarray) -> tuple[float, np.ndarray]:
        """Negative log marginal likelihood and its gradient in the ``mask`` entries."""
        full = self.theta.copy()
        full[mask] = theta
        self.set_theta(full)
        ls, _, noise = self._parts()
        scaled, K, dfac = self._kernel()
        n = len(self.z)
        K[np.diag_indices(n)] += noise
        try:
            L = cholesky(K)
        except np.linalg.LinAlgError:
            return 1e25, np.zeros(int(mask.sum()))
        alpha = lapack.dpotrs(L, self.z, lower=1)[0]
        Kinv = lapack.dpotri(L, lower=1)[0]
        Kinv = np.tril(Kinv) + np.tril(Kinv, -1).T
        loglik = -0.5 * self.z @ alpha - np.log(np.diag(L)).sum() - 0.5 * n * math.log(2 * math.pi)
        G = np.outer(alpha, alpha) - Kinv  # d loglik / dK = G / 2
        K[np.diag_indices(n)] -= noise
        grad = np.empty(len(self.theta))
        GD = G * dfac
        grad[: len(ls)] = 0.5 * np.tensordot(scaled, GD, axes=([1, 2], [0, 1]))
        grad[len(ls)] = 0.5 * float(np.sum(G * K))
        grad[-1] = 0.5 * float(np.trace(G)) * noise
        return -float(loglik), -grad[mask]

    def fit(
        self, restarts: int = 2, seed: int | None = 0, max_iter: int = 200, tol: float = 1e-7
    ) -> JointGP:
        """Maximize the log marginal likelihood by L-BFGS-B from ``restarts`` starts: the
        current values, then random ones (seeded by ``seed``)."""
        rng = np.random.default_rng(seed)
        mask = np.ones(len(self.theta), bool)

        def random_start() -> np.ndarray:  # inside the bounds (LOG_BOUNDS)
            t = self.get_theta()
            dim = self.inputs.shape[1]
            t[:dim] = rng.uniform(math.log(0.01), math.log(1.0), dim)
            t[dim] = rng.uniform(-1.0, 1.0)
            return t

        with blas_threads(len(self.y)):
            best, theta, self.fit_info = minimize_restarts(
                self.objective,
                self.get_theta(),
                self.bounds(),
                mask,
                random_start,
                restarts,
                max_iter,
                tol,
            )
        self.set_theta(theta)
        self.log_likelihood_value = -best
        return self

    # ----------------------------------------------------------------- prediction
    def _factor(self) -> tuple[np.ndarray, np.ndarray]:
        if self._posterior is None:
            K = self._kernel()[1]
            K[np.diag_indices(len(K))] += self._parts()[2]
            L = cholesky(K)
            self._posterior = (L, lapack.dpotrs(L, self.z, lower=1)[0])
        return self._posterior

    def predict_standardized(self, Xs: np.ndarray, task: int) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean and variance (without noise) of task ``task`` at configurations ``Xs``
        (encoded), in standardized units. Bit-for-bit reproducible inside
        :func:`propulate.models.linalg.blas_threads` (as the acquisition search calls it)."""
        Xs = np.atleast_2d(np.asarray(Xs, dtype=float))
        ls, s, _ = self._parts()
        L, alpha = self._factor()
        Q = np.hstack([np.repeat(self.U[task][None, :], len(Xs), axis=0), Xs])
        R2 = (((Q[:, None, :] - self.inputs[None, :, :]) / ls) ** 2).sum(axis=2)
        k = matern52(R2, s)[0]
        v = solve_triangular(L, k.T, lower=True, check_finite=False)  # L: our own Cholesky factor
        return k @ alpha, np.maximum(s - np.sum(v * v, axis=0), 1e-12)

    def predict(self, Xs: np.ndarray, task: int) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean and variance in output units (``log(y)`` units when ``log_output``)."""
        mean, var = self.predict_standardized(Xs, task)
        return mean * self.y_std + self.y_mean, var * self.y_std**2

    # ----------------------------------------------------------------- persistence
    def to_dict(self) -> dict[str, Any]:
        """Hyperparameters, training data and metadata as JSON-ready data."""
        return {
            "model": KIND,
            "U": self.U.tolist(),
            "X": self.X.tolist(),
            "task_index": self.task_index.tolist(),
            "y": self.y.tolist(),
            "log_output": self.log_output,
            "theta": self.theta.tolist(),
            "log_likelihood": self.log_likelihood_value,
            "info": self.info,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> JointGP:
        """Rebuild a model saved by :meth:`to_dict` (predicts exactly as the saved one)."""
        if data.get("model") != KIND:
            raise ValueError(f"not a {KIND} model file")
        m = cls(
            data["U"], data["X"], data["task_index"], data["y"], data["log_output"], data["info"]
        )
        m.set_theta(np.asarray(data["theta"], dtype=float))
        m.log_likelihood_value = float(data["log_likelihood"])
        return m

    def save(self, path: str | Path) -> None:
        """Write the model as a JSON file (atomically)."""
        model_file.write(path, self.to_dict())

    @classmethod
    def load(cls, path: str | Path) -> JointGP:
        """Read a model written by :meth:`save`."""
        return cls.from_dict(model_file.read(path))
