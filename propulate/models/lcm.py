"""The linear coregionalization model (LCM): one Gaussian process over (task, configuration).

The covariance between configuration ``x`` of task ``i`` and ``x'`` of task ``j`` is

    K = sum_q (W_q W_q^T + diag(kappa_q))[i, j] k_q(x, x') + [same point] noise_i

with ``k_q`` a unit-variance ARD squared-exponential kernel over the unit cube, ``W_q`` a
``(tasks, rank)`` matrix and ``kappa_q >= 0`` (the blocks and their packing into one vector:
:mod:`propulate.models.hyperparameters`). This is exactly the
kernel of ``GPy.util.multioutput.LCM`` inside ``GPy.models.GPCoregionalizedRegression`` (with
the RBF variances fixed at 1, since ``B_q`` already carries the scale); :meth:`LCM.gpy_model`
builds that GPy model from the fitted values and the tests check that its log likelihood and
predictions equal ours.

The log marginal likelihood and its gradient are computed in numpy on the dense kernel matrix
(:mod:`propulate.models.kernel` builds it, :mod:`propulate.models.likelihood` differentiates it):
GPy's generic gradient path through ``Prod``/``Add``/``Coregionalize`` kernels is several times
slower at the sizes the pipeline fits (about 1000 points). :meth:`LCM.fit` with ``engine="gpy"`` runs plain GPy's optimizer instead, for
comparison. Outputs are standardized (globally, optionally after ``log``), inputs are expected
in the unit cube (:meth:`propulate.space.SearchSpace.encode`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy.linalg import lapack, solve_triangular

from propulate.models import gpy_bridge, kernel, model_file
from propulate.models.fitting import GaussianPrior, minimize_restarts
from propulate.models.hyperparameters import BLOCKS, Hyper, HyperLayout
from propulate.models.likelihood import log_likelihood_and_gradient
from propulate.models.linalg import blas_threads, cholesky
from propulate.settings import LCMSettings


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
        latent: int = LCMSettings.latent,
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

    @property
    def layout(self) -> HyperLayout:
        """Where each hyperparameter block sits in :meth:`get_theta`'s vector."""
        return HyperLayout(self.latent, self.n_tasks, self.dim, self.rank)

    @property
    def hyper(self) -> Hyper:
        """The hyperparameter blocks by name (values, not logs)."""
        return {
            "lengthscale": self.lengthscale,
            "W": self.W,
            "kappa": self.kappa,
            "noise": self.noise,
        }

    @hyper.setter
    def hyper(self, values: Hyper) -> None:
        shapes = self.layout.shapes
        self.lengthscale, self.W, self.kappa, self.noise = (
            np.array(values[n], dtype=float).reshape(shapes[n]) for n in BLOCKS
        )
        self._posterior = None

    def get_theta(self) -> np.ndarray:
        """Flat vector of free hyperparameters, laid out by :attr:`layout`."""
        return self.layout.pack(self.hyper)

    def set_theta(self, theta: np.ndarray) -> None:
        """Set the hyperparameters from a vector laid out by :attr:`layout`."""
        self.hyper = self.layout.unpack(theta)

    def bounds(self) -> list[tuple[float, float]]:
        """Optimizer bounds of :meth:`get_theta`'s entries."""
        return self.layout.bounds()

    def task_slices(self, task: int) -> np.ndarray:
        """Boolean mask over :meth:`get_theta` of one task's W rows, kappa and noise."""
        return self.layout.task_mask(task)

    def coregionalization(self) -> np.ndarray:
        """The matrices ``B_q = W_q W_q^T + diag(kappa_q)``, shape ``(Q, tasks, tasks)``."""
        return kernel.coregionalization(self.W, self.kappa)

    def task_correlation(self) -> np.ndarray:
        """Correlation between tasks of the summed coregionalization ``sum_q B_q``."""
        B = self.coregionalization().sum(axis=0)
        s = np.sqrt(np.diag(B))
        return B / np.outer(s, s)

    # ----------------------------------------------------------------- likelihood
    def _sq_dists(self) -> np.ndarray:
        if self._diff2 is None or self._diff2.shape[1] != len(self.X):
            self._diff2 = kernel.squared_differences(self.X)
        return self._diff2

    def _kernel_terms(self) -> tuple[list[np.ndarray], np.ndarray]:
        return kernel.input_kernels(self._sq_dists(), self.lengthscale), self.coregionalization()

    def _covariance(
        self, Kx: list[np.ndarray], B: np.ndarray, blocks: list[np.ndarray] | None = None
    ) -> np.ndarray:
        """The kernel matrix; ``blocks`` (optional) receives each ``B_q`` spread over the points."""
        return kernel.covariance(Kx, B, self.task_index, self.noise, blocks)

    def objective(
        self, theta: np.ndarray, free: np.ndarray | None = None
    ) -> tuple[float, np.ndarray]:
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
        blocks: list[np.ndarray] = []
        K = self._covariance(Kx, B, blocks)
        try:
            L = cholesky(K)
        except np.linalg.LinAlgError:
            g = np.zeros(int(free.sum()) if free is not None else len(theta))
            return 1e25, g
        loglik, grads = log_likelihood_and_gradient(
            self.z, L, Kx, blocks, self._sq_dists(), self.task_index, self.hyper
        )
        grad = -self.layout.pack(grads, log=False)
        self.log_likelihood_value = loglik
        return -loglik, (grad[free] if free is not None else grad)

    def log_likelihood(self) -> float:
        """Log marginal likelihood of the standardized outputs at the current values."""
        return -self.objective(self.get_theta())[0]

    # ----------------------------------------------------------------- fitting
    def random_theta(self, rng: np.random.Generator) -> np.ndarray:
        """A random starting vector: random lengthscales and ``W``, default kappa and noise."""
        layout, Q, R = self.layout, self.latent, self.rank
        shapes = layout.shapes
        draws = {"lengthscale": rng.uniform(math.log(0.05), 0.0, shapes["lengthscale"])}
        draws["W"] = rng.normal(0.0, 1.0 / math.sqrt(Q * R), shapes["W"])
        draws["kappa"], draws["noise"] = math.log(0.1 / Q), math.log(1e-2)
        return layout.pack(draws, log=False)

    def randomize(self, rng: np.random.Generator, free: np.ndarray | None = None) -> None:
        """Draw a random starting point (only the ``free`` entries when given)."""
        theta = self.random_theta(rng)
        self.set_theta(theta if free is None else np.where(free, theta, self.get_theta()))

    def fit(
        self,
        restarts: int = LCMSettings.restarts,
        seed: int | None = LCMSettings.seed,
        max_iter: int = 500,
        tol: float = 1e-7,
        free: np.ndarray | None = None,
        engine: str = "numpy",
        prior: GaussianPrior | tuple[np.ndarray, np.ndarray] | None = None,
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
        prior : GaussianPrior or (array, array), optional
            An independent Gaussian prior on the entries of :meth:`get_theta` (or its mean and
            standard deviation, ``inf`` for unpenalized entries): the fit maximizes the posterior
            instead (a MAP estimate), which keeps a few points from overfitting. The numpy
            engine only. :attr:`log_likelihood_value` stays the plain log likelihood.
        """
        if prior is not None and engine != "numpy":
            raise ValueError("a prior needs the numpy engine")
        if prior is not None and not isinstance(prior, GaussianPrior):
            prior = GaussianPrior(*prior)
        with blas_threads(len(self.y)):
            if engine == "gpy":
                return self._fit_gpy(restarts, seed, max_iter)
            return self._fit(restarts, seed, max_iter, tol, free, prior)

    def _fit(
        self,
        restarts: int,
        seed: int | None,
        max_iter: int,
        tol: float,
        free: np.ndarray | None,
        prior: GaussianPrior | None,
    ) -> LCM:
        rng = np.random.default_rng(seed)
        start = self.get_theta()
        mask = np.ones(len(start), bool) if free is None else np.asarray(free, bool)
        fun = self.objective if prior is None else prior.restricted(mask).penalize(self.objective)

        def random_start() -> np.ndarray:
            self.randomize(rng, mask)
            return self.get_theta()

        best_val, best_theta, self.fit_info = minimize_restarts(
            fun, start, self.bounds(), mask, random_start, restarts, max_iter, tol
        )
        self.set_theta(best_theta)
        self.log_likelihood_value = -best_val if prior is None else self.log_likelihood()
        return self

    def _fit_gpy(self, restarts: int, seed: int | None, max_iter: int) -> LCM:
        hyper, loglik, self.fit_info = gpy_bridge.fit_with_gpy(
            self.gpy_model(), self.layout, restarts, seed, max_iter
        )
        self.hyper = hyper
        self.log_likelihood_value = loglik
        return self

    # ----------------------------------------------------------------- GPy container
    def gpy_model(self) -> Any:
        """The equivalent ``GPy.models.GPCoregionalizedRegression`` with the current values."""
        return gpy_bridge.to_gpy(self.X, self.task_index, self.z, self.layout, self.hyper)

    def read_gpy(self, m: Any) -> None:
        """Copy the hyperparameters of a model built by :meth:`gpy_model`."""
        self.hyper = gpy_bridge.read_gpy(m, self.layout)

    # ----------------------------------------------------------------- prediction
    def _cross(self, Xs: np.ndarray, task: int) -> np.ndarray:
        B = self.coregionalization()[:, task, :]  # (Q, T)
        return kernel.cross_covariance(Xs, self.X, self.task_index, B, self.lengthscale)

    def _factor(self) -> tuple[np.ndarray, np.ndarray]:
        """The Cholesky factor of the training covariance and ``K^-1 z`` (computed once)."""
        if self._posterior is None:
            L = cholesky(self._covariance(*self._kernel_terms()))
            self._posterior = (L, lapack.dpotrs(L, self.z, lower=1)[0])
        return self._posterior

    def predict_mean(self, Xs: np.ndarray, task: int) -> np.ndarray:
        """Posterior mean in output units, without the variance (cheaper for many points)."""
        k = self._cross(np.atleast_2d(np.asarray(Xs, dtype=float)), task)
        return k @ self._factor()[1] * self.y_std + self.y_mean

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
        L, alpha = self._factor()
        k = self._cross(Xs, task)
        mean = k @ alpha
        v = solve_triangular(L, k.T, lower=True, check_finite=False)  # L: our own Cholesky factor
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
        """All hyperparameters, training data and metadata as JSON-ready data."""
        fields = {
            name: getattr(self, name)
            for name in model_file.FIELDS
            if name not in ("log_likelihood",)
        }
        fields["log_likelihood"] = self.log_likelihood_value
        return model_file.to_data(fields, self.layout, self.hyper)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LCM:
        """Rebuild a model saved by :meth:`to_dict` (predicts exactly as the saved one)."""
        f, hyper = model_file.from_data(data)
        m = cls(
            f["X"],
            f["task_index"],
            f["y"],
            f["n_tasks"],
            f["latent"],
            f["rank"],
            f["log_output"],
            f["info"],
            scale=(f["y_mean"], f["y_std"]),
        )
        m.hyper = hyper
        m.log_likelihood_value = f["log_likelihood"]
        return m

    def save(self, path: str | Path) -> None:
        """Write the model as a JSON file (atomically)."""
        model_file.write(path, self.to_dict())

    @classmethod
    def load(cls, path: str | Path) -> LCM:
        """Read a model written by :meth:`save`."""
        return cls.from_dict(model_file.read(path))
