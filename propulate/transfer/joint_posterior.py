"""The joint model's posterior at a new task, and TLA1's prediction from it (numpy only).

The joint GP (:class:`propulate.models.joint_gp.JointGP`) puts every evaluation at ``(task
values, configuration)``; its posterior at a task it holds no data of is the one at that task's
values. :func:`tla1_prediction` predicts the task's optimum from that posterior: the least
posterior mean (plus ``kappa`` standard deviations) over a feasible Latin hypercube and the
training tasks' optima, refined by a compass search, with the loss band and the spread of the
minimizers of posterior draws.

Kept out of :mod:`propulate.models` (whose likelihood fits import ``scipy.optimize``) so that
``suggest`` (:mod:`propulate.tuningdb.suggest`) answers an unseen task from a stored model with
the same computation as ``transfer tla1``, without importing the model-fitting code.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from propulate.transfer.band import cut_at_zero, leave_one_task_out, never_negative

__all__ = ["JointPosterior", "matern52", "tla1_prediction"]

SQRT5 = math.sqrt(5.0)
#: Defaults of :func:`tla1_prediction`: Latin-hypercube candidates, candidates refined by the
#: compass search, posterior draws for the spread of the optimum, standard deviations added to
#: the mean, and the standard deviations either side of the predicted loss that make its band
#: when it cannot be calibrated (fewer than three training tasks).
CANDIDATES, REFINED, DRAWS, KAPPA, BAND_SIGMAS = 2048, 4, 64, 0.0, 1.0


def matern52(R2: np.ndarray, variance: float) -> tuple[np.ndarray, np.ndarray]:
    """The Matern-5/2 kernel at scaled squared distances ``R2``, and ``s (5/3)(1 + a) exp(-a)``,
    the factor of its derivative by a log lengthscale (times that dimension's scaled squared
    distance); ``a = sqrt(5 R2)``."""
    a = SQRT5 * np.sqrt(np.maximum(R2, 0.0))
    e = variance * np.exp(-a)
    return e * (1.0 + a + a * a / 3.0), e * (5.0 / 3.0) * (1.0 + a)


def _cholesky(K: np.ndarray) -> np.ndarray:
    jitter = 0.0
    for _ in range(6):
        try:
            return np.linalg.cholesky(K + jitter * np.eye(len(K)) if jitter else K)
        except np.linalg.LinAlgError:
            jitter = 1e-8 if jitter == 0.0 else jitter * 10
    raise np.linalg.LinAlgError("kernel matrix is not positive definite")


class JointPosterior:
    """The posterior of a fitted joint model (its :meth:`~JointGP.to_dict` data) at any task
    values, in the model's standardized output units.

    Parameters
    ----------
    data : mapping
        ``U``, ``X``, ``task_index``, ``y``, ``log_output`` and ``theta`` (log lengthscales,
        task dimensions first; log signal variance; log noise); optionally ``scale``, the mean
        and standard deviation that standardize the outputs (default: those of ``y``), and
        ``band``, the stored :meth:`calibration`.
    """

    def __init__(self, data: Mapping[str, Any]) -> None:
        U = np.atleast_2d(np.asarray(data["U"], dtype=float))
        X = np.atleast_2d(np.asarray(data["X"], dtype=float))
        index = np.asarray(data["task_index"], dtype=int)
        y = np.asarray(data["y"], dtype=float)
        self.log_output = bool(data["log_output"])
        #: No training loss below zero: the predictions are cut there (:meth:`band`).
        self.nonnegative = never_negative(y)
        z = np.log(y) if self.log_output else y
        self.y_mean, self.y_std = float(z.mean()), float(z.std()) if z.std() > 0 else 1.0
        if data.get("scale") is not None:  # a neighbourhood of a larger model: its scaling
            self.y_mean, self.y_std = map(float, data["scale"])
        theta = np.asarray(data["theta"], dtype=float)
        self.inputs = np.hstack([U[index], X])
        dim = self.inputs.shape[1]
        self.ls, self.variance = np.exp(theta[:dim]), float(np.exp(theta[dim]))
        noise = float(np.exp(theta[-1]))
        K = self._k(self.inputs, self.inputs)
        K[np.diag_indices(len(K))] += noise
        self.L = _cholesky(K)
        zs = (z - self.y_mean) / self.y_std
        self.alpha = np.linalg.solve(self.L.T, np.linalg.solve(self.L, zs))
        self._training = (len(U), index, zs, K)
        # the calibration stored with the model (``band``, by ``tuningdb update``); False: not
        # computed yet
        self._calibration: dict[str, float] | None | bool = (
            data["band"] if "band" in data else False
        )

    @functools.cached_property
    def l_inverse(self) -> np.ndarray:
        """The inverse of the Cholesky factor, computed once: numpy has no triangular solve, and
        a general one per prediction refactors the ``n x n`` factor (at 1,000 points that was
        0.9 of TLA1's 1.2 s)."""
        return np.linalg.solve(self.L, np.eye(len(self.L)))

    def _k(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        R2 = (((A[:, None, :] - B[None, :, :]) / self.ls) ** 2).sum(axis=2)
        return matern52(R2, self.variance)[0]

    def _points(self, u_task: np.ndarray, X: np.ndarray) -> np.ndarray:
        return np.hstack([np.repeat(np.asarray(u_task)[None, :], len(X), axis=0), X])

    def predict(self, u_task: np.ndarray, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Mean and variance (without noise) at configurations ``X`` (encoded) of the task at
        encoded task values ``u_task``, standardized."""
        Q = self._points(u_task, np.atleast_2d(X))
        k = self._k(Q, self.inputs)
        v = self.l_inverse @ k.T
        return k @ self.alpha, np.maximum(self.variance - np.sum(v * v, axis=0), 1e-12)

    def covariance(self, u_task: np.ndarray, X: np.ndarray) -> np.ndarray:
        """Posterior covariance (without noise) between configurations ``X`` of the task."""
        Q = self._points(u_task, np.atleast_2d(X))
        v = self.l_inverse @ self._k(self.inputs, Q)
        return self._k(Q, Q) - v.T @ v

    def calibration(self) -> dict[str, float] | None:
        """The band's width calibrated on the training tasks by leave-one-task-out
        (:func:`propulate.transfer.band.leave_one_task_out`: each task predicted from the
        others' points at its task values), computed once (or read from the data's ``band``,
        where ``tuningdb update`` stores it: at 1,000 points it costs as long as building the
        posterior); ``None`` with fewer than three tasks."""
        if self._calibration is False:
            n_tasks, index, zs, K = self._training

            def held_out(i: int, own: np.ndarray, other: np.ndarray) -> tuple[np.ndarray, float]:
                return K[np.ix_(own, other)], self.variance  # off the diagonal: no noise

            self._calibration = leave_one_task_out(n_tasks, index, zs, K, held_out)
        return self._calibration or None

    def band(self, mean: float, var: float, sigmas: float | None = None) -> dict[str, float]:
        """``loss`` (standardized ``mean`` in loss units: the median for a log-output model)
        with ``loss_low`` / ``loss_high`` either side: ``sigmas`` standard deviations, by
        default the band calibrated on the training tasks (:meth:`calibration`,
        ``sigmas x sqrt(var + floor^2)``), or :data:`BAND_SIGMAS` deviations without one; none
        of the three below zero when no training loss was
        (:func:`~propulate.transfer.band.cut_at_zero`)."""
        if sigmas is None and (cal := self.calibration()) is not None:
            var, sigmas = var + cal["floor"] ** 2, cal["sigmas"]
        sigmas = BAND_SIGMAS if sigmas is None else sigmas
        m, s = mean * self.y_std + self.y_mean, math.sqrt(max(var, 0.0)) * self.y_std
        values = (m, m - sigmas * s, m + sigmas * s)
        if self.log_output:
            values = tuple(math.exp(v) for v in values)
        out = dict(zip(("loss", "loss_low", "loss_high"), map(float, values), strict=True))
        return cut_at_zero(out) if self.nonnegative else out


def _compass(
    score: Any, u0: np.ndarray, ok: Any, step: float = 0.05, tol: float = 1e-4
) -> tuple[np.ndarray, float]:
    """Compass search from ``u0`` in the unit cube: move to the best better neighbour
    ``u +- step e_k`` (among those ``ok`` accepts), else halve ``step``, until below ``tol``."""
    u, best = u0.copy(), float(score(u0[None, :])[0])
    dim = len(u)
    while step >= tol:
        moves = np.vstack([np.eye(dim) * step, -np.eye(dim) * step]) + u
        moves = np.clip(moves, 0.0, 1.0)
        keep = [i for i in range(len(moves)) if ok(moves[i])]
        if keep:
            values = score(moves[keep])
            j = int(np.argmin(values))
            if values[j] < best - 1e-12:
                u, best = moves[keep[j]], float(values[j])
                continue
        step /= 2.0
    return u, best


def _feasible_design(
    space: Any, task: Mapping[str, Any], n: int, rng: np.random.Generator, rounds: int = 20
) -> list[dict[str, Any]]:
    """Up to ``n`` feasible configurations of Latin hypercubes in the unit cube (numpy only:
    ``scipy.stats.qmc`` would import ``scipy.optimize``); infeasible points are redrawn from
    fresh hypercubes of the missing size, at most ``rounds`` times."""
    out: list[dict[str, Any]] = []
    for _ in range(rounds):
        m = n - len(out)
        if m <= 0:
            break
        strata = np.argsort(rng.random((m, space.dim)), axis=0)
        U = (strata + rng.random((m, space.dim))) / m
        out += [p for p in space.decode_many(U) if space.satisfies(p, task)]
    return out


def tla1_prediction(
    model: Mapping[str, Any],
    space: Any,
    task_space: Any,
    task: Mapping[str, Any],
    seed: int = 0,
    optima: list[Mapping[str, Any]] | None = None,
    kappa: float = KAPPA,
    n_candidates: int = CANDIDATES,
    draws: int = DRAWS,
) -> tuple[dict[str, Any], dict[str, float], dict[str, float]]:
    """Predict a task's optimum from the joint posterior at its task values.

    Parameters
    ----------
    model : mapping
        A fitted joint model's :meth:`~propulate.models.joint_gp.JointGP.to_dict` data.
    space, task_space : SearchSpace
        Parameter and task spaces.
    task : mapping
        The task's values (outside the task space the posterior extrapolates).
    seed : int
        Seed of the candidate design and of the posterior draws.
    optima : list of configurations, optional
        Further candidates (the training tasks' best configurations).
    kappa : float
        The prediction minimizes the posterior mean plus ``kappa`` standard deviations.
    n_candidates : int
        Size of the feasible Latin hypercube of candidates.
    draws : int
        Joint posterior draws over the 256 candidates of least lower confidence bound; the
        standard deviation of their minimizers is the reported spread.

    Returns
    -------
    params, std, band
        A feasible configuration; per parameter the spread of the optimum in unit-cube units
        (fractions of the parameter's encoded range); the predicted loss of ``params`` with
        its band (:meth:`JointPosterior.band`).
    """
    post = JointPosterior(model)
    u_task = task_space.encode(task)
    rng = np.random.default_rng(seed)
    cands = _feasible_design(space, task, n_candidates, rng)
    cands += [dict(p) for p in optima or () if space.satisfies(p, task)]
    if not cands:
        raise ValueError(f"no feasible configuration found for task {dict(task)}")
    U = space.encode_many(cands)
    mu, var = post.predict(u_task, U)

    def score(V: np.ndarray) -> np.ndarray:
        m, v = post.predict(u_task, V)
        return m + kappa * np.sqrt(v)

    def ok(u: np.ndarray) -> bool:
        return bool(space.satisfies(space.decode(u), task))

    scores = mu + kappa * np.sqrt(var)
    best = int(np.argmin(scores))
    best_u, best_s = U[best], float(scores[best])
    for i in np.argsort(scores, kind="stable")[:REFINED]:
        u, s = _compass(score, U[i], ok)
        if s < best_s:
            best_u, best_s = u, s
    params = space.decode(best_u)
    m, v = post.predict(u_task, space.encode(params)[None, :])
    std = dict.fromkeys(space.names, 0.0)
    if draws >= 2:
        top = np.argsort(mu - 2.0 * np.sqrt(var), kind="stable")[:256]
        C = post.covariance(u_task, U[top])
        w, V = np.linalg.eigh(0.5 * (C + C.T))
        draw = (
            mu[top][None, :]
            + rng.standard_normal((draws, len(top))) @ (V * np.sqrt(np.maximum(w, 0.0))).T
        )
        picks = U[top][np.argmin(draw, axis=1)]
        std = {name: float(picks[:, k].std()) for k, name in enumerate(space.names)}
    return params, std, post.band(float(m[0]), float(v[0]))
