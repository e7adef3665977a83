"""TLA1 for ``suggest``: fitted once when the database is updated, evaluated in numpy per query.

:func:`propulate.models.transfer.tla1` fits one Gaussian process per parameter over the task
space (GPy) every time it is called, which takes seconds. :func:`fit_predictor` runs the same
fits, in the same order and with the same seed, and keeps their hyperparameters and training
data; :func:`predict` then computes the same posterior mean and standard deviation with a few
lines of numpy, so ``suggest`` answers an unseen task without GPy, and with the configuration
``tla1`` would have given.

The expected loss of the predicted configuration comes from the campaign's LCM extended by the
new task without fitting (its coefficients interpolated from the nearest training tasks, see
:func:`propulate.models.transfer.extend_model`), again from data stored at update time
(:func:`posterior_data`) and evaluated in numpy (:func:`expected_loss`), with a loss band
calibrated on the training tasks (:func:`band_calibration`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from propulate.models.kernel import cross_covariance
from propulate.space import SearchSpace
from propulate.transfer.band import (
    BAND_COVERAGE,
    cut_at_zero,
    leave_one_task_out,
    never_negative,
)

#: Format tags of a stored TLA1 predictor and of a stored LCM posterior.
FORMAT = "propulate-tla1-predictor/1"
POSTERIOR_FORMAT = "propulate-lcm-posterior/1"


def fit_predictor(
    model: Any,
    space: SearchSpace,
    task_space: SearchSpace,
    seed: int = 0,
    restarts: int | None = None,
    basin: float | None = None,
) -> dict[str, Any]:
    """Fit TLA1's per-parameter GPs on the model's training optima; return them as JSON data.

    Parameters
    ----------
    model : LCM
        The campaign's fitted model (its ``info`` lists the training tasks and their optima).
    space, task_space : SearchSpace
        Parameter and task spaces.
    seed : int
        The seed :func:`propulate.models.transfer.tla1` is called with.
    restarts : int, optional
        Optimizer restarts of each GP (default: ``tla1``'s).
    basin : float, optional
        TLA1's basin size (default: ``TransferSettings.tla1_basin``); the prediction is then
        :func:`propulate.transfer.optimum.basin_line`, the GPs give its standard deviations.
    """
    from propulate.settings import TransferSettings

    basin = TransferSettings.tla1_basin if basin is None else float(basin)
    import GPy

    from propulate.models.linalg import blas_threads
    from propulate.models.transfer import TLA1_RESTARTS, training_optima

    restarts = TLA1_RESTARTS if restarts is None else restarts
    tasks, optima = training_optima(model, space)
    T = task_space.encode_many(tasks)
    gps: dict[str, Any] = {}
    np.random.seed(seed)  # noqa: NPY002 - GPy draws its restarts from the global state
    with blas_threads(len(T)):
        for k, name in enumerate(space.names):
            y = optima[:, k]
            mean, std = float(y.mean()), float(y.std())
            if len(y) < 2 or std < 1e-12:
                gps[name] = {"constant": mean}
                continue
            z = ((y - mean) / std)[:, None]
            kern = GPy.kern.RBF(T.shape[1], ARD=True, lengthscale=0.5)
            gp = GPy.models.GPRegression(T, z, kern, noise_var=0.1)
            gp.likelihood.variance.constrain_bounded(1e-6, 10.0, warning=False)
            gp.optimize_restarts(num_restarts=restarts, verbose=False, robust=True)
            gps[name] = {
                "mean": mean,
                "std": std,
                "z": z[:, 0].tolist(),
                "variance": float(gp.kern.variance.values[0]),
                "lengthscale": np.atleast_1d(gp.kern.lengthscale.values).tolist(),
                "noise": float(gp.likelihood.variance.values[0]),
            }
    return {
        "format": FORMAT,
        "seed": seed,
        "basin": basin,
        "T": T.tolist(),
        "optima": optima.tolist(),
        "gps": gps,
    }


def _gp(gp: Mapping[str, Any], T: np.ndarray, t: np.ndarray) -> tuple[float, float]:
    """Posterior mean and predictive standard deviation (noise included, as GPy's
    ``predict``) of one stored GP at task ``t``, in the parameter's unit-cube units."""
    if "constant" in gp:
        return float(gp["constant"]), 0.0
    ls = np.asarray(gp["lengthscale"], dtype=float)
    var, noise = float(gp["variance"]), float(gp["noise"])

    def k(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        d2 = (((a[:, None, :] - b[None, :, :]) / ls) ** 2).sum(axis=2)
        return var * np.exp(-0.5 * d2)

    K = k(T, T) + noise * np.eye(len(T))
    ks = k(T, t[None, :])[:, 0]
    L = np.linalg.cholesky(K)
    alpha = np.linalg.solve(L.T, np.linalg.solve(L, np.asarray(gp["z"], dtype=float)))
    v = np.linalg.solve(L, ks)
    mu = float(ks @ alpha)
    sd = float(np.sqrt(max(var - float(v @ v) + noise, 0.0)))
    return mu * gp["std"] + gp["mean"], sd * gp["std"]


def predict(
    predictor: Mapping[str, Any],
    space: SearchSpace,
    task_space: SearchSpace,
    task: Mapping[str, Any],
) -> tuple[dict[str, Any], dict[str, float]]:
    """TLA1's configuration for ``task`` and its standard deviation per parameter.

    Returns
    -------
    params, std
        A valid configuration and, per parameter, the predictive standard deviation in
        unit-cube units (fractions of the parameter's encoded range).
    """
    if predictor.get("format") != FORMAT:
        raise ValueError(f"not a {FORMAT} predictor")
    T = np.asarray(predictor["T"], dtype=float)
    t = task_space.encode(task)
    u, std = np.empty(space.dim), {}
    for k, name in enumerate(space.names):
        u[k], std[name] = _gp(predictor["gps"][name], T, t)
    basin = float(predictor.get("basin", 0.0))  # stored before the basin line: the regression
    if basin > 0:
        from propulate.transfer.optimum import basin_line

        u = basin_line(T, np.asarray(predictor["optima"], dtype=float), t, basin)
    else:
        u = np.clip(u, 0.0, 1.0)
    params = space.decode(u)
    if space.satisfies(params, task):
        return params, std
    from propulate.models.transfer import repair  # the nearest feasible one, as tla1 does

    extra = [space.decode(row) for row in np.asarray(predictor["optima"], dtype=float)]
    return repair(space, u, task, extra, int(predictor["seed"])), std


def posterior_data(model: Any, task_space: SearchSpace | None = None) -> dict[str, Any]:
    """What :func:`expected_loss` needs of a fitted LCM, as JSON data.

    The model's posterior (the Cholesky factor ``L`` of its training covariance and
    ``alpha = K^-1 z``), its coefficients, lengthscales and output scaling, the training
    tasks' values (to find an unseen task's nearest training tasks) and, given the
    ``task_space``, the loss band's width calibrated on the training tasks (``band``,
    :func:`band_calibration`; ``None``: one standard deviation).
    """
    model.predict_standardized(model.X[:1], 0)  # computes and caches the posterior factor
    L, alpha = model._posterior
    tasks = [s["task"] for s in model.info.get("tasks", [])]
    data = {
        "format": POSTERIOR_FORMAT,
        "X": model.X.tolist(),
        "task_index": np.asarray(model.task_index).tolist(),
        "L": L.tolist(),
        "alpha": np.asarray(alpha).tolist(),
        "W": model.W.tolist(),
        "kappa": model.kappa.tolist(),
        "lengthscale": model.lengthscale.tolist(),
        "y_mean": float(model.y_mean),
        "y_std": float(model.y_std),
        "log_output": bool(model.log_output),
        "tasks": tasks if len(tasks) == model.n_tasks else None,
        # no training loss below zero: predictions are cut there (expected_loss)
        "nonnegative": never_negative(model.y),
    }
    if task_space is not None:
        data["band"] = band_calibration(data, task_space)
    return data


def unseen_task(
    post: Mapping[str, Any],
    task_space: SearchSpace,
    task: Mapping[str, Any],
    exclude: int | None = None,
) -> tuple[np.ndarray, float]:
    """An unseen task's row of each ``B_q`` (``(Q, tasks)``) and its prior variance, in the
    model extended by it without data: its ``W`` rows interpolated by inverse distance between
    its two nearest training tasks (as :func:`propulate.models.transfer.extend_model`), its
    ``kappa`` the nearest one's. ``exclude``: a training task left out of the neighbours (the
    band's calibration predicts each training task from the others)."""
    if post.get("format") != POSTERIOR_FORMAT:
        raise ValueError(f"not a {POSTERIOR_FORMAT} record")
    W = np.asarray(post["W"], dtype=float)  # (Q, tasks, rank)
    order, weights = np.array([0]), np.array([1.0])
    if post["tasks"] is not None:
        T = task_space.encode_many(post["tasks"])
        dist = np.sqrt(((T - task_space.encode(task)) ** 2).sum(axis=1))
        if exclude is not None:
            dist[exclude] = np.inf
        order = np.argsort(dist, kind="stable")[:2]
        inv = 1.0 / np.maximum(dist[order], 1e-12)
        weights = inv / inv.sum()
    W_new = np.tensordot(W[:, order, :], weights, axes=([1], [0]))  # (Q, rank)
    kappa = np.asarray(post["kappa"], dtype=float)  # (Q, tasks)
    prior = float(np.sum(W_new**2) + kappa[:, int(order[0])].sum())
    return np.einsum("qr,qjr->qj", W_new, W), prior


def band_calibration(
    post: Mapping[str, Any], task_space: SearchSpace, coverage: float = BAND_COVERAGE
) -> dict[str, float] | None:
    """The band's width for an LCM posterior, by leave-one-task-out
    (:func:`propulate.transfer.band.leave_one_task_out`, which describes the method): a
    held-out task is predicted as :func:`unseen_task` predicts a new one, from its two nearest
    other training tasks.

    Returns
    -------
    dict or None
        ``floor``: the misfit between tasks, in standardized output units (the median residual
        of the held-out scores); ``sigmas``: the multiple of ``sqrt(var + floor^2)`` either side
        of the mean that holds ``coverage`` of the scores. ``None`` with fewer than three
        training tasks of known values (the band stays one standard deviation).
    """
    tasks = post.get("tasks")
    if not tasks or len(tasks) < 3:
        return None
    X = np.asarray(post["X"], dtype=float)
    ti = np.asarray(post["task_index"], dtype=int)
    L = np.asarray(post["L"], dtype=float)
    ls = np.asarray(post["lengthscale"], dtype=float)
    K = L @ L.T  # the training covariance, noise included
    z = K @ np.asarray(post["alpha"], dtype=float)  # the standardized outputs

    def held_out(i: int, own: np.ndarray, other: np.ndarray) -> tuple[np.ndarray, float]:
        B_row, prior = unseen_task(post, task_space, tasks[i], exclude=i)
        return cross_covariance(X[own], X[other], ti[other], B_row, ls), prior

    return leave_one_task_out(len(tasks), ti, z, K, held_out, coverage)


def _cross(post: Mapping[str, Any], B_row: np.ndarray, U: np.ndarray) -> np.ndarray:
    """Covariance ``(m, n)`` between a task at the encoded points ``U`` and the training
    points, given the task's row of each ``B_q`` (``(Q, tasks)``)."""
    X = np.asarray(post["X"], dtype=float)
    ti = np.asarray(post["task_index"], dtype=int)
    ls = np.asarray(post["lengthscale"], dtype=float)
    return cross_covariance(U, X, ti, B_row, ls)


def task_row(
    post: Mapping[str, Any], task_space: SearchSpace, task: Mapping[str, Any]
) -> tuple[np.ndarray, bool]:
    """A task's row of each ``B_q`` (``(Q, tasks)``) and whether it is a training task.

    A training task's row is its own (``W_q W_q^T + diag(kappa_q)``), another task's that of the
    model extended by it without data (``W`` interpolated from its two nearest training tasks).
    """
    W = np.asarray(post["W"], dtype=float)  # (Q, tasks, rank)
    tasks = post["tasks"] or []
    key = task_space.key(task)
    for j, values in enumerate(tasks):
        if set(values) == set(task_space.names) and task_space.key(values) == key:
            row = np.einsum("qr,qjr->qj", W[:, j, :], W)
            row[:, j] += np.asarray(post["kappa"], dtype=float)[:, j]
            return row, True
    return unseen_task(post, task_space, task)[0], False


def task_mean(
    post: Mapping[str, Any], task_space: SearchSpace, task: Mapping[str, Any]
) -> tuple[Callable[[np.ndarray], np.ndarray], bool]:
    """A task's posterior mean over encoded configurations (in chunks), in the model's output
    units (``log(loss)`` for a log-output model), and whether the model was trained on the task.

    For a task the model was not trained on this is the mean :func:`expected_loss` gives.
    """
    B_row, trained = task_row(post, task_space, task)
    alpha = np.asarray(post["alpha"], dtype=float)
    chunk = max(1, 2**23 // max(1, len(alpha) * np.asarray(post["X"]).shape[1]))

    def f(U: np.ndarray) -> np.ndarray:
        parts = [_cross(post, B_row, U[i : i + chunk]) @ alpha for i in range(0, len(U), chunk)]
        return np.concatenate(parts) * post["y_std"] + post["y_mean"]

    return f, trained


def expected_loss(
    post: Mapping[str, Any],
    space: SearchSpace,
    task_space: SearchSpace,
    task: Mapping[str, Any],
    params: Mapping[str, Any],
) -> dict[str, float]:
    """The LCM's expected loss of ``params`` on a task it was not trained on.

    This is the prediction of the model extended by the task without fitting
    (:func:`propulate.models.transfer.extend_model` with ``fit=False``: the new task's ``W``
    rows interpolated between its two nearest training tasks by inverse distance, its
    ``kappa`` the nearest one's), computed from :func:`posterior_data` in numpy: the new task
    has no data, so the training covariance, and with it the posterior factor, is the
    model's own. Returns ``loss`` (the posterior mean in loss units; for a log-output model
    the exponential of the log-mean, i.e. the median) and ``loss_low`` / ``loss_high``: the band
    calibrated on the training tasks to hold 90 % of unseen tasks' losses
    (:func:`band_calibration`), or one posterior standard deviation (without noise)
    either side for a posterior stored without it; none of them below zero when no training
    loss was (:func:`propulate.transfer.band.cut_at_zero`).
    """
    B_new, prior = unseen_task(post, task_space, task)
    k = _cross(post, B_new, space.encode(params)[None, :])[0]
    mean = float(k @ np.asarray(post["alpha"], dtype=float))
    v = np.linalg.solve(np.asarray(post["L"], dtype=float), k)
    var = max(prior - float(v @ v), 1e-12)
    m = mean * post["y_std"] + post["y_mean"]
    band = post.get("band")  # calibrated on the training tasks (band_calibration)
    if band:
        var = band["sigmas"] ** 2 * (var + band["floor"] ** 2)
    s = float(np.sqrt(var)) * post["y_std"]
    if post["log_output"]:
        return {
            "loss": float(np.exp(m)),
            "loss_low": float(np.exp(m - s)),
            "loss_high": float(np.exp(m + s)),
        }
    out = {"loss": m, "loss_low": m - s, "loss_high": m + s}
    return cut_at_zero(out) if post.get("nonnegative") else out
