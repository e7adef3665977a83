"""TLA1 for ``suggest``: fitted once when the database is updated, evaluated in numpy per query.

:func:`propulate.models.transfer.tla1` fits one Gaussian process per parameter over the task
space (GPy) every time it is called, which takes seconds. :func:`fit_predictor` runs the same
fits, in the same order and with the same seed, and keeps their hyperparameters and training
data; :func:`predict` then computes the same posterior mean and standard deviation with a few
lines of numpy, so ``suggest`` answers an unseen task without GPy, and with the configuration
``tla1`` would have given.

The expected loss of the predicted configuration comes from the campaign's LCM extended by the
new task without fitting (its coefficients interpolated from the nearest training tasks, see
:func:`propulate.models.transfer.extend_model`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from propulate.space import SearchSpace

#: Format tag of a stored predictor.
FORMAT = "propulate-tla1-predictor/1"


def fit_predictor(model: Any, space: SearchSpace, task_space: SearchSpace, seed: int = 0,
                  restarts: int | None = None) -> dict[str, Any]:
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
    """
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
                "mean": mean, "std": std, "z": z[:, 0].tolist(),
                "variance": float(gp.kern.variance.values[0]),
                "lengthscale": np.atleast_1d(gp.kern.lengthscale.values).tolist(),
                "noise": float(gp.likelihood.variance.values[0]),
            }
    return {"format": FORMAT, "seed": seed, "T": T.tolist(), "optima": optima.tolist(),
            "gps": gps}


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


def predict(predictor: Mapping[str, Any], space: SearchSpace, task_space: SearchSpace,
            task: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, float]]:
    """TLA1's configuration for ``task`` and its standard deviation per parameter.

    Returns
    -------
    params, std
        A valid configuration and, per parameter, the predictive standard deviation in
        unit-cube units (fractions of the parameter's encoded range).
    """
    if predictor.get("format") != FORMAT:
        raise ValueError(f"not a {FORMAT} predictor")
    from propulate.models.transfer import repair

    T = np.asarray(predictor["T"], dtype=float)
    t = task_space.encode(task)
    u, std = np.empty(space.dim), {}
    for k, name in enumerate(space.names):
        u[k], std[name] = _gp(predictor["gps"][name], T, t)
    u = np.clip(u, 0.0, 1.0)
    extra = [space.decode(row) for row in np.asarray(predictor["optima"], dtype=float)]
    return repair(space, u, task, extra, int(predictor["seed"])), std


def expected_loss(model: Any, space: SearchSpace, task_space: SearchSpace, task_id: str,
                  task: Mapping[str, Any], params: Mapping[str, Any]) -> dict[str, float]:
    """The LCM's expected loss of ``params`` on a task it was not trained on.

    The model is extended by the task without fitting (the new task's coefficients
    interpolated from its two nearest training tasks). Returns ``loss`` (the posterior mean, in
    loss units; for a log-output model the exponential of the log-mean, i.e. the median) and
    ``loss_low`` / ``loss_high``, one posterior standard deviation either side.
    """
    from propulate.models.sampling import TaskData
    from propulate.models.transfer import extend_model

    extended = extend_model(model, TaskData(task_id, dict(task)), task_space, space, fit=False)
    mean, var = extended.predict(space.encode(params)[None, :], extended.n_tasks - 1)
    m, s = float(mean[0]), float(np.sqrt(var[0]))
    if extended.log_output:
        return {"loss": float(np.exp(m)), "loss_low": float(np.exp(m - s)),
                "loss_high": float(np.exp(m + s))}
    return {"loss": m, "loss_low": m - s, "loss_high": m + s}
