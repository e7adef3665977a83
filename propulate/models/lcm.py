"""The linear coregionalization model (LCM): one Gaussian process over (task, configuration).

The covariance between configuration ``x`` of task ``i`` and ``x'`` of task ``j`` is

    K = sum_q (W_q W_q^T + diag(kappa_q))[i, j] k_q(x, x') + [same point] noise_i

with ``k_q`` a unit-variance ARD squared-exponential kernel over the unit cube, ``W_q`` a
``(tasks, rank)`` matrix and ``kappa_q >= 0`` (see ``design.md`` section 3). This is exactly the
kernel of ``GPy.util.multioutput.LCM`` inside ``GPy.models.GPCoregionalizedRegression`` (with
the RBF variances fixed at 1, since ``B_q`` already carries the scale); :meth:`LCM.gpy_model`
builds that GPy model from the fitted values and the tests check that its log likelihood and
predictions equal ours.

The log marginal likelihood and its gradient are computed here in numpy on the dense kernel
matrix (one Cholesky factor and one inverse per evaluation): GPy's generic gradient path through
``Prod``/``Add``/``Coregionalize`` kernels is several times slower at the sizes the pipeline fits
(about 1000 points). :meth:`LCM.fit` with ``engine="gpy"`` runs plain GPy's optimizer instead, for
comparison. Outputs are standardized (globally, optionally after ``log``), inputs are expected
in the unit cube (:meth:`propulate.space.SearchSpace.encode`).
"""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy import optimize
from scipy.linalg import lapack, solve_triangular
from threadpoolctl import threadpool_limits

FORMAT = "propulate-lcm/1"
#: Bounds of the log hyperparameters (standardized outputs, unit-cube inputs).
LOG_LENGTHSCALE = (math.log(1e-3), math.log(1e2))
LOG_KAPPA = (math.log(1e-6), math.log(1e1))
LOG_NOISE = (math.log(1e-6), math.log(1e1))
W_BOUND = (-10.0, 10.0)
JITTER = 1e-8
#: Below this many training points BLAS runs single-threaded: threads cost more than they save
#: on small matrices, and on shared cores their spinning slows the fit by an order of magnitude.
SMALL = 800


def blas_threads(n: int) -> contextlib.AbstractContextManager[Any]:
    """A context limiting BLAS to one thread for problems of ``n < SMALL`` points."""
    return threadpool_limits(limits=1, user_api="blas") if n < SMALL else contextlib.nullcontext()


def _cholesky(K: np.ndarray) -> np.ndarray:
    """Lower Cholesky factor of ``K``, adding diagonal jitter if needed."""
    jitter = 0.0
    for _ in range(6):
        L, info = lapack.dpotrf(K + jitter * np.eye(len(K)) if jitter else K, lower=1, clean=1)
        if info == 0:
            return L
        jitter = 1e-8 if jitter == 0.0 else jitter * 10
    raise np.linalg.LinAlgError("kernel matrix is not positive definite")


class LCM:
    """A linear coregionalization model with its training data.

    Parameters
    ----------
    X : array (n, d)
        Training configurations encoded to the unit cube.
    task_index : array (n,) of int
        Task of each training point, in ``0 .. n_tasks - 1``.
    y : array (n,)
        Observed outputs (losses, runtimes), in the objective's units.
    n_tasks : int
        Number of tasks (may exceed the tasks present in ``task_index``).
    latent : int
        Number ``Q`` of latent functions (one ARD RBF kernel each).
    rank : int
        Rank of each ``W_q`` (GPy's ``W_rank``).
    log_output : bool
        Model ``log(y)`` instead of ``y`` (for positive outputs such as runtimes).
    info : dict, optional
        Free JSON-safe metadata saved with the model (spaces, task ids, ...).
    scale : (float, float), optional
        Mean and standard deviation of the standardization (default: those of the data); a
        model extended by new data keeps its base model's.
    """

    def __init__(
        self,
        X: np.ndarray,
        task_index: Sequence[int] | np.ndarray,
        y: Sequence[float] | np.ndarray,
        n_tasks: int,
        latent: int = 3,
        rank: int = 1,
        log_output: bool = False,
        info: dict[str, Any] | None = None,
        scale: tuple[float, float] | None = None,
    ) -> None:
        self.X = np.atleast_2d(np.asarray(X, dtype=float))
        self.task_index = np.asarray(task_index, dtype=int).reshape(-1)
        self.y = np.asarray(y, dtype=float).reshape(-1)
        if not len(self.X) == len(self.task_index) == len(self.y) or len(self.y) == 0:
            raise ValueError("X, task_index and y need the same, non-zero length")
        if self.task_index.min() < 0 or self.task_index.max() >= n_tasks:
            raise ValueError("task_index out of range")
        if log_output and np.any(self.y <= 0):
            raise ValueError("log_output needs positive outputs")
        self.n_tasks, self.latent, self.rank = int(n_tasks), int(latent), int(rank)
        self.log_output = bool(log_output)
        self.info: dict[str, Any] = dict(info or {})
        z = np.log(self.y) if self.log_output else self.y
        if scale is None:
            scale = (float(z.mean()), float(z.std()) if z.std() > 0 else 1.0)
        self.y_mean, self.y_std = float(scale[0]), float(scale[1])
        self.z = (z - self.y_mean) / self.y_std
        d, T, Q = self.X.shape[1], self.n_tasks, self.latent
        self.lengthscale = np.tile(np.geomspace(0.5, 0.1, Q)[:, None], (1, d))
        self.W = np.full((Q, T, self.rank), 0.5 / math.sqrt(Q * self.rank))
        self.kappa = np.full((Q, T), 0.1 / Q)
        self.noise = np.full(T, 1e-2)
        self.log_likelihood_value = float("nan")
        self.fit_info: dict[str, int] = {}
        self._diff2 = None
        self._posterior: tuple[np.ndarray, np.ndarray] | None = None

    # ----------------------------------------------------------------- parameters
    @property
    def dim(self) -> int:
        """Dimension of the (encoded) configurations."""
        return self.X.shape[1]

    def get_theta(self) -> np.ndarray:
        """Flat vector of free hyperparameters: log lengthscales, W, log kappa, log noise."""
        return np.concatenate(
            [np.log(self.lengthscale).ravel(), self.W.ravel(), np.log(self.kappa).ravel(),
             np.log(self.noise)]
        )

    def set_theta(self, theta: np.ndarray) -> None:
        """Set the hyperparameters from a vector laid out as :meth:`get_theta`."""
        Q, T, d, R = self.latent, self.n_tasks, self.dim, self.rank
        i = 0
        self.lengthscale = np.exp(theta[i : i + Q * d]).reshape(Q, d)
        i += Q * d
        self.W = np.array(theta[i : i + Q * T * R]).reshape(Q, T, R)
        i += Q * T * R
        self.kappa = np.exp(theta[i : i + Q * T]).reshape(Q, T)
        i += Q * T
        self.noise = np.exp(theta[i : i + T])
        self._posterior = None

    def bounds(self) -> list[tuple[float, float]]:
        """L-BFGS-B bounds of :meth:`get_theta`'s entries."""
        Q, T, d, R = self.latent, self.n_tasks, self.dim, self.rank
        return [LOG_LENGTHSCALE] * (Q * d) + [W_BOUND] * (Q * T * R) + [LOG_KAPPA] * (Q * T) + [
            LOG_NOISE
        ] * T

    def task_slices(self, task: int) -> np.ndarray:
        """Boolean mask over :meth:`get_theta` of one task's W rows, kappa and noise."""
        Q, T, d, R = self.latent, self.n_tasks, self.dim, self.rank
        W = np.zeros((Q, T, R), bool)
        W[:, task, :] = True
        kappa = np.zeros((Q, T), bool)
        kappa[:, task] = True
        noise = np.zeros(T, bool)
        noise[task] = True
        return np.concatenate([np.zeros(Q * d, bool), W.ravel(), kappa.ravel(), noise])

    def coregionalization(self) -> np.ndarray:
        """The matrices ``B_q = W_q W_q^T + diag(kappa_q)``, shape ``(Q, tasks, tasks)``."""
        return np.einsum("qir,qjr->qij", self.W, self.W) + np.einsum(
            "qi,ij->qij", self.kappa, np.eye(self.n_tasks)
        )

    def task_correlation(self) -> np.ndarray:
        """Correlation between tasks of the summed coregionalization ``sum_q B_q``."""
        B = self.coregionalization().sum(axis=0)
        s = np.sqrt(np.diag(B))
        return B / np.outer(s, s)

    # ----------------------------------------------------------------- likelihood
    def _sq_dists(self) -> np.ndarray:
        if self._diff2 is None or self._diff2.shape[1] != len(self.X):
            self._diff2 = (self.X.T[:, :, None] - self.X.T[:, None, :]) ** 2
        return self._diff2

    def _kernel_terms(self) -> tuple[list[np.ndarray], np.ndarray]:
        D2 = self._sq_dists()
        Kx = []
        for ls in self.lengthscale:
            acc = D2[0] * (-0.5 / ls[0] ** 2)
            for k in range(1, len(ls)):
                acc += D2[k] * (-0.5 / ls[k] ** 2)
            Kx.append(np.exp(acc, out=acc))
        return Kx, self.coregionalization()

    def _covariance(self, Kx: list[np.ndarray], B: np.ndarray) -> np.ndarray:
        t = self.task_index
        K = np.zeros((len(t), len(t)))
        for q in range(self.latent):
            K += B[q][np.ix_(t, t)] * Kx[q]
        K[np.diag_indices_from(K)] += self.noise[t] + JITTER
        return K

    def objective(self, theta: np.ndarray, free: np.ndarray | None = None) -> tuple[float, np.ndarray]:
        """Negative log marginal likelihood and its gradient at ``theta``.

        Parameters
        ----------
        theta : array
            Hyperparameters laid out as :meth:`get_theta` (all of them, or only the ``free``
            ones when ``free`` is given).
        free : boolean array, optional
            Mask of the entries being optimized; the others keep their current values.
        """
        if free is not None:
            full = self.get_theta()
            full[free] = theta
            theta = full
        self.set_theta(theta)
        Kx, B = self._kernel_terms()
        K = self._covariance(Kx, B)
        try:
            L = _cholesky(K)
        except np.linalg.LinAlgError:
            g = np.zeros(int(free.sum()) if free is not None else len(theta))
            return 1e25, g
        alpha = lapack.dpotrs(L, self.z, lower=1)[0]
        Kinv = lapack.dpotri(L, lower=1)[0]
        Kinv = np.tril(Kinv) + np.tril(Kinv, -1).T
        n = len(self.z)
        loglik = -0.5 * self.z @ alpha - np.log(np.diag(L)).sum() - 0.5 * n * math.log(2 * math.pi)
        G = np.outer(alpha, alpha)
        G -= Kinv  # d loglik / dK = G / 2
        del Kinv
        t, T = self.task_index, self.n_tasks
        E = np.zeros((n, T))
        E[np.arange(n), t] = 1.0
        D2 = self._sq_dists()
        g_ls = np.empty_like(self.lengthscale)
        g_W = np.empty_like(self.W)
        g_kappa = np.empty_like(self.kappa)
        for q in range(self.latent):
            GK = G * Kx[q]
            S = E.T @ GK @ E
            g_W[q] = S @ self.W[q]
            g_kappa[q] = 0.5 * np.diag(S) * self.kappa[q]
            GK *= B[q][np.ix_(t, t)]
            g_ls[q] = 0.5 * np.tensordot(D2, GK, axes=([1, 2], [0, 1])) / self.lengthscale[q] ** 2
        g_noise = 0.5 * np.bincount(t, weights=np.diag(G), minlength=T) * self.noise
        grad = -np.concatenate([g_ls.ravel(), g_W.ravel(), g_kappa.ravel(), g_noise])
        self.log_likelihood_value = float(loglik)
        return -float(loglik), (grad[free] if free is not None else grad)

    def log_likelihood(self) -> float:
        """Log marginal likelihood of the standardized outputs at the current values."""
        return -self.objective(self.get_theta())[0]

    # ----------------------------------------------------------------- fitting
    def randomize(self, rng: np.random.Generator, free: np.ndarray | None = None) -> None:
        """Draw a random starting point (only the ``free`` entries when given)."""
        Q, T, d, R = self.latent, self.n_tasks, self.dim, self.rank
        theta = np.concatenate(
            [
                rng.uniform(math.log(0.05), math.log(1.0), Q * d),
                rng.normal(0.0, 1.0 / math.sqrt(Q * R), Q * T * R),
                np.full(Q * T, math.log(0.1 / Q)),
                np.full(T, math.log(1e-2)),
            ]
        )
        if free is not None:
            theta = np.where(free, theta, self.get_theta())
        self.set_theta(theta)

    def fit(
        self,
        restarts: int = 3,
        seed: int | None = 0,
        max_iter: int = 500,
        tol: float = 1e-7,
        free: np.ndarray | None = None,
        engine: str = "numpy",
        prior: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> LCM:
        """Maximize the log marginal likelihood by L-BFGS-B from several starts.

        Parameters
        ----------
        restarts : int
            Number of starts: the current values, then ``restarts - 1`` random ones.
        seed : int, optional
            Seed of the random starts.
        max_iter : int
            L-BFGS-B iterations per start.
        tol : float
            Relative reduction of the objective below which a start has converged (``ftol``).
        free : boolean array, optional
            Optimize only these entries of :meth:`get_theta` (e.g. :meth:`task_slices`).
        engine : {"numpy", "gpy"}
            Our likelihood and gradient, or plain GPy's ``optimize`` on :meth:`gpy_model`.
        prior : (array, array), optional
            Mean and standard deviation of an independent Gaussian prior on the entries of
            :meth:`get_theta` (``inf`` for unpenalized ones): the fit maximizes the posterior
            instead (a MAP estimate), which keeps a few points from overfitting. The numpy
            engine only. :attr:`log_likelihood_value` stays the plain log likelihood.
        """
        if prior is not None and engine != "numpy":
            raise ValueError("a prior needs the numpy engine")
        with blas_threads(len(self.y)):
            if engine == "gpy":
                return self._fit_gpy(restarts, seed, max_iter)
            return self._fit(restarts, seed, max_iter, tol, free, prior)

    def _fit(self, restarts: int, seed: int | None, max_iter: int, tol: float,
             free: np.ndarray | None, prior: tuple[np.ndarray, np.ndarray] | None) -> LCM:
        rng = np.random.default_rng(seed)
        mask = np.ones(len(self.get_theta()), bool) if free is None else np.asarray(free, bool)
        bounds = [b for b, m in zip(self.bounds(), mask, strict=True) if m]
        fun = self.objective
        if prior is not None:
            mean, std = (np.broadcast_to(np.asarray(a, float), mask.shape)[mask] for a in prior)
            if np.any(std <= 0):
                raise ValueError("prior standard deviations must be positive")

            def fun(theta: np.ndarray, free: np.ndarray) -> tuple[float, np.ndarray]:
                value, grad = self.objective(theta, free)
                r = np.where(np.isinf(std), 0.0, (theta - mean) / std)
                return value + 0.5 * float(r @ r), grad + r / std
        best_val, best_theta = math.inf, self.get_theta()
        self.fit_info = {"iterations": 0, "evaluations": 0}
        for r in range(max(1, restarts)):
            if r > 0:
                self.randomize(rng, mask)
            x0 = np.clip(self.get_theta()[mask], [b[0] for b in bounds], [b[1] for b in bounds])
            res = optimize.minimize(
                fun, x0, args=(mask,), jac=True, method="L-BFGS-B", bounds=bounds,
                options={"maxiter": max_iter, "ftol": tol, "gtol": 1e-6},
            )
            self.fit_info["iterations"] += int(res.nit)
            self.fit_info["evaluations"] += int(res.nfev)
            if res.fun < best_val:
                best_val = float(res.fun)
                best_theta = self.get_theta()
                best_theta[mask] = res.x
        self.set_theta(best_theta)
        self.log_likelihood_value = -best_val if prior is None else self.log_likelihood()
        return self

    def _fit_gpy(self, restarts: int, seed: int | None, max_iter: int) -> LCM:
        from propulate.models.gpy_bridge import fit_with_gpy

        return fit_with_gpy(self, restarts, seed, max_iter)

    # ----------------------------------------------------------------- GPy container
    def gpy_model(self) -> Any:
        """The equivalent ``GPy.models.GPCoregionalizedRegression`` with the current values."""
        from propulate.models.gpy_bridge import to_gpy

        return to_gpy(self)

    def read_gpy(self, m: Any) -> None:
        """Copy the hyperparameters of a model built by :meth:`gpy_model`."""
        from propulate.models.gpy_bridge import read_gpy

        read_gpy(self, m)

    # ----------------------------------------------------------------- prediction
    def _cross(self, Xs: np.ndarray, task: int) -> np.ndarray:
        B = self.coregionalization()[:, task, :]  # (Q, T)
        d2 = ((Xs[:, None, :] - self.X[None, :, :]) ** 2)  # (m, n, d)
        k = np.zeros((len(Xs), len(self.X)))
        for q in range(self.latent):
            k += B[q][self.task_index] * np.exp(-0.5 * d2 @ (1.0 / self.lengthscale[q] ** 2))
        return k

    def predict_standardized(self, Xs: np.ndarray, task: int) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean and variance of the latent function in standardized units.

        Parameters
        ----------
        Xs : array (m, d)
            Configurations encoded to the unit cube.
        task : int
            Task index.
        """
        Xs = np.atleast_2d(np.asarray(Xs, dtype=float))
        if self._posterior is None:
            L = _cholesky(self._covariance(*self._kernel_terms()))
            self._posterior = (L, lapack.dpotrs(L, self.z, lower=1)[0])
        L, alpha = self._posterior
        k = self._cross(Xs, task)
        mean = k @ alpha
        v = solve_triangular(L, k.T, lower=True)
        prior = float(np.sum(self.W[:, task, :] ** 2) + self.kappa[:, task].sum())
        return mean, np.maximum(prior - np.sum(v * v, axis=0), 1e-12)

    def predict(self, Xs: np.ndarray, task: int) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean and variance (without noise) in output units (``log(y)`` units when
        ``log_output``)."""
        mean, var = self.predict_standardized(Xs, task)
        return mean * self.y_std + self.y_mean, var * self.y_std**2

    def standardize(self, y: np.ndarray | float) -> np.ndarray:
        """Map outputs to the model's standardized units."""
        z = np.log(y) if self.log_output else np.asarray(y, dtype=float)
        return (z - self.y_mean) / self.y_std

    # ----------------------------------------------------------------- persistence
    def to_dict(self) -> dict[str, Any]:
        """All hyperparameters, training data and metadata as JSON-safe lists."""
        return {
            "format": FORMAT,
            "n_tasks": self.n_tasks, "latent": self.latent, "rank": self.rank,
            "log_output": self.log_output,
            "X": self.X.tolist(), "task_index": self.task_index.tolist(), "y": self.y.tolist(),
            "y_mean": self.y_mean, "y_std": self.y_std,
            "lengthscale": self.lengthscale.tolist(), "W": self.W.tolist(),
            "kappa": self.kappa.tolist(), "noise": self.noise.tolist(),
            "log_likelihood": self.log_likelihood_value
            if math.isfinite(self.log_likelihood_value) else None,
            "info": self.info,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LCM:
        """Rebuild a model saved by :meth:`to_dict` (predicts exactly as the saved one)."""
        if data.get("format") != FORMAT:
            raise ValueError(f"not a {FORMAT} model (format={data.get('format')!r})")
        m = cls(np.array(data["X"]), data["task_index"], data["y"], data["n_tasks"],
                data["latent"], data["rank"], data["log_output"], data.get("info"),
                scale=(data["y_mean"], data["y_std"]))
        m.lengthscale = np.array(data["lengthscale"], dtype=float)
        m.W = np.array(data["W"], dtype=float).reshape(m.latent, m.n_tasks, m.rank)
        m.kappa = np.array(data["kappa"], dtype=float)
        m.noise = np.array(data["noise"], dtype=float)
        ll = data.get("log_likelihood")
        m.log_likelihood_value = float(ll) if ll is not None else float("nan")
        return m

    def save(self, path: str | Path) -> None:
        """Write the model as JSON (atomically: a temporary file renamed into place)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(json.dumps(self.to_dict()))
        tmp.replace(path)

    @classmethod
    def load(cls, path: str | Path) -> LCM:
        """Read a model written by :meth:`save`."""
        return cls.from_dict(json.loads(Path(path).read_text()))
