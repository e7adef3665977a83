"""Transfer to a new task on the LCM: TLA1 (predicted optimum, no evaluation) and TLA2 (frozen
LCM + MLA).

This is the LCM path of ``transfer.model``: ``transfer tla1|tla2`` and ``suggest`` transfer on the
joint model over task values and parameters (:mod:`propulate.models.joint_transfer`) whenever
the model has several training tasks (``auto``), and here with ``lcm`` or a single training task.

* :func:`tla1` predicts the new task's optimum from the training tasks' best configurations
  (:func:`basin_line`): the nearest training task's optimum, moved along the line to the
  optimum of the nearest other task whose optimum lies within ``basin`` of it (both in one
  basin, so the optimum drifts smoothly between them), or left where it is when no other
  optimum is that near. On the GPTune demo function (``benchmarks/mla_demo.py``, dev seeds
  0-4, 4/8/10 training tasks) this beat random search with 5 evaluations on 52/68/56 % of the
  new tasks, against 40/40/56 % for the previous prediction, which fitted one Gaussian process
  per parameter over the task space (GPy's ``GPRegression``, ARD RBF) and so averaged across
  basins (``basin`` = 0 still selects it). Its predictive standard deviations are reported
  either way, as TLA1's confidence. (The argmin of the LCM's posterior mean for the new task,
  over the parameter space, the training optima or all training points, did worse; so did the
  nearest task's optimum alone, 36/40/68 %: a basin of this function is narrower than 0.01 in
  ``x``, and a prediction 0.01 off the true optimum beats random (5) on only about 2 pairs in
  3.)
* :func:`extend_model` adds the new task to a fitted LCM: every hyperparameter is frozen except
  the new task's rows of ``W_q``, its ``kappa_q`` and its noise, fitted on the new task's data
  (MAP, with a prior centred on what the nearest training tasks' coefficients suggest).
* :func:`run_tla2` runs the model-guided loop on the new task alone: its first evaluation a
  TLA1 prediction (by default the regression, ``basin`` = 0: the basin line lands near the
  nearest tasks' optima, which come next anyway), then the optima of the nearest training tasks
  (``share`` of them), then the model's proposals, which also weigh the training tasks' optima.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from propulate.models.acquisition import untried_incumbent
from propulate.models.fitting import GaussianPrior
from propulate.models.lcm import LCM
from propulate.models.linalg import blas_threads
from propulate.models.loop import ModelGuidedLoop, Objective, TaskRun
from propulate.models.loop_settings import LoopSettings
from propulate.models.sampling import TaskData
from propulate.runs.declared_objectives import Objectives
from propulate.runs.summary import RunSummary
from propulate.settings import MLASettings, TransferSettings
from propulate.space import Params, SearchSpace
from propulate.transfer.optimum import basin_line

#: Optimizer starts of each of TLA1's Gaussian processes.
TLA1_RESTARTS = 3


#: The defaults (frozen, shared).
DEFAULT_TRANSFER = TransferSettings()


def training_optima(model: LCM, space: SearchSpace) -> tuple[list[dict[str, Any]], np.ndarray]:
    """The model's training tasks that have a best configuration, and those encoded."""
    tasks, rows = [], []
    for spec, best in zip(model.info.get("tasks", []), model.info.get("best", []), strict=False):
        if best and best.get("params") is not None:
            tasks.append(spec["task"])
            rows.append(space.encode(best["params"]))
    if not tasks:
        raise ValueError("the model holds no training-task optima (info.tasks / info.best)")
    return tasks, np.array(rows)


def nearest_optima(
    model: LCM, space: SearchSpace, task_space: SearchSpace, task: Mapping[str, Any]
) -> list[Params]:
    """The training tasks' best configurations, nearest task (unit task cube) first."""
    try:
        tasks, rows = training_optima(model, space)
    except ValueError:
        return []
    dist = ((task_space.encode_many(tasks) - task_space.encode(task)) ** 2).sum(axis=1)
    return [space.decode(rows[k]) for k in np.argsort(dist, kind="stable")]


def _gp_predict(
    T: np.ndarray, y: np.ndarray, t_new: np.ndarray, restarts: int
) -> tuple[float, float]:
    """Mean and standard deviation at ``t_new`` of a GP fitted to ``(T, y)``."""
    import GPy

    mean, std = float(y.mean()), float(y.std())
    if len(y) < 2 or std < 1e-12:
        return mean, 0.0
    z = ((y - mean) / std)[:, None]
    kern = GPy.kern.RBF(T.shape[1], ARD=True, lengthscale=0.5)
    gp = GPy.models.GPRegression(T, z, kern, noise_var=0.1)
    gp.likelihood.variance.constrain_bounded(1e-6, 10.0, warning=False)
    gp.optimize_restarts(num_restarts=restarts, verbose=False, robust=True)
    mu, var = gp.predict(t_new[None, :])
    return float(mu[0, 0]) * std + mean, float(np.sqrt(max(var[0, 0], 0.0))) * std


def repair(
    space: SearchSpace,
    u: np.ndarray,
    task: Mapping[str, Any] | None,
    extra: list[Params],
    seed: int,
) -> Params:
    """The valid configuration nearest (in the unit cube) to ``u``.

    ``u`` decoded when it satisfies the constraint; otherwise the nearest of a feasible Latin
    hypercube of candidates and the ``extra`` configurations that are feasible for ``task``.
    """
    params = space.decode(u)
    if space.satisfies(params, task):
        return params
    cands = space.latin_hypercube(2048, seed=seed, task=task)
    cands += [p for p in extra if space.satisfies(p, task)]
    U = space.encode_many(cands)
    return cands[int(np.argmin(((U - u) ** 2).sum(axis=1)))]


def tla1(
    model: LCM,
    space: SearchSpace,
    task_space: SearchSpace,
    task: Mapping[str, Any],
    seed: int = TransferSettings.seed,
    restarts: int = TLA1_RESTARTS,
    basin: float = TransferSettings.tla1_basin,
) -> tuple[Params, dict[str, float]]:
    """Predict a new task's optimal configuration from the training tasks' optima.

    Parameters
    ----------
    model : LCM
        A model built by :func:`propulate.models.sampling.build_lcm` (its ``info`` lists the
        training tasks and their best configurations).
    space, task_space : SearchSpace
        Parameter and task spaces.
    task : mapping
        The new task's values.
    seed : int
        Seed of GPy's restarts and of the constraint repair.
    restarts : int
        Optimizer restarts of each GP.
    basin : float
        The prediction is :func:`basin_line` with this basin size; 0: the per-parameter GP
        regression over the task space (its standard deviations are reported either way).

    Returns
    -------
    params, std
        A valid configuration (integers rounded, categoricals valid, constraint satisfied) and
        the GPs' predictive standard deviation per parameter, in unit-cube units (fractions of
        the parameter's encoded range).
    """
    tasks, optima = training_optima(model, space)
    T = task_space.encode_many(tasks)
    t_new = task_space.encode(task)
    np.random.seed(seed)  # noqa: NPY002 - GPy draws its restarts from the global state
    u, std = np.empty(space.dim), {}
    with blas_threads(len(T)):
        for k, name in enumerate(space.names):
            u[k], std[name] = _gp_predict(T, optima[:, k], t_new, restarts)
    u = basin_line(T, optima, t_new, basin) if basin > 0 else np.clip(u, 0.0, 1.0)
    extra = [space.decode(row) for row in optima]
    return repair(space, u, task, extra, seed), std


#: Prior standard deviations of the new task's coefficients in :func:`extend_model`: of its
#: ``W`` rows (the outputs are standardized, so the training tasks' entries are of order 1), and
#: of its ``log kappa`` and ``log noise`` (a factor of e either way).
COEFFICIENT_PRIOR = (0.3, 1.0)


def extend_model(
    base: LCM,
    data: TaskData,
    task_space: SearchSpace | None,
    space: SearchSpace,
    fit: bool = True,
    prior_std: tuple[float, float] | None = COEFFICIENT_PRIOR,
) -> LCM:
    """The base LCM plus one task; only that task's coefficients and noise are fitted.

    The new task's coefficients start where the training tasks say they should be: its ``W``
    rows interpolated between the two nearest training tasks (inverse-distance weights in the
    unit task cube), its ``kappa`` and noise the nearest task's. The fit then moves them only as
    far as the new task's data justify: it maximizes the posterior under an independent Gaussian
    prior centred on that start. TLA2 fits these ``Q (R + 1) + 1`` numbers on as few as one
    point, and by maximum likelihood alone a handful of points overfit them (on the GPTune demo
    function, TLA2 with 5 evaluations then beat random search on fewer pairs than with the
    prior; ``benchmarks/mla_demo.py``).

    Parameters
    ----------
    base : LCM
        The fitted model of the training tasks (left unchanged).
    data : TaskData
        The new task's id, values and successful evaluations.
    task_space, space : SearchSpace
        Task space (to find the nearest training tasks) and parameter space.
    fit : bool
        Fit the new task's ``W`` rows, ``kappa`` and noise (once it has an evaluation), every
        other hyperparameter frozen.
    prior_std : (float, float), optional
        Prior standard deviations of the ``W`` entries and of ``log kappa`` / ``log noise``;
        ``None`` fits by maximum likelihood.
    """
    new = base.n_tasks
    X, t, y = base.X, base.task_index, base.y
    if data.losses:
        X = np.vstack([X, space.encode_many(data.params)])
        t = np.concatenate([t, np.full(len(data.losses), new)])
        y = np.concatenate([y, data.losses])
    info = dict(base.info)
    info["tasks"] = list(info.get("tasks", [])) + [{"id": data.id, "task": data.task}]
    best_p, best_l = data.best()
    info["best"] = list(info.get("best", [])) + [{"params": best_p, "loss": best_l}]
    model = LCM(
        X,
        t,
        y,
        new + 1,
        base.latent,
        base.rank,
        base.log_output,
        info,
        scale=(base.y_mean, base.y_std),
    )
    order, weights = np.array([0]), np.array([1.0])
    if task_space is not None and len(base.info.get("tasks", [])) == base.n_tasks:
        T = task_space.encode_many([s["task"] for s in base.info["tasks"]])
        dist = np.sqrt(((T - task_space.encode(data.task)) ** 2).sum(axis=1))
        order = np.argsort(dist, kind="stable")[:2]
        inv = 1.0 / np.maximum(dist[order], 1e-12)
        weights = inv / inv.sum()
    W_new = np.tensordot(base.W[:, order, :], weights, axes=([1], [0]))  # (Q, R)
    model.lengthscale = base.lengthscale.copy()
    model.W = np.concatenate([base.W, W_new[:, None, :]], axis=1)
    model.kappa = np.concatenate([base.kappa, base.kappa[:, order[:1]]], axis=1)
    model.noise = np.append(base.noise, base.noise[order[0]])
    if fit and data.losses:
        free = model.layout.task_mask(new)
        prior = None
        if prior_std is not None:
            widths = {"W": prior_std[0], "kappa": prior_std[1], "noise": prior_std[1]}
            prior = GaussianPrior.on_blocks(model.layout, model.get_theta(), widths, free)
        model.fit(restarts=1, free=free, max_iter=200, prior=prior)
    return model


def run_tla2(
    base: LCM,
    space: SearchSpace,
    task_space: SearchSpace,
    task_id: str,
    task: dict[str, Any],
    objective: Objective,
    out: str | Path,
    settings: TransferSettings = DEFAULT_TRANSFER,
    *,
    comm: Any = None,
    start: Params | None = None,
    radius: float = MLASettings.radius,
    objectives: Objectives | None = None,
) -> list[RunSummary]:
    """TLA2 on one new task: ``budget`` evaluations written to the run directory ``out``.

    Parameters
    ----------
    base : LCM
        Fitted model of the training tasks.
    space, task_space : SearchSpace
        Parameter and task spaces.
    task_id, task : str, dict
        The new task's id and values.
    objective : str or callable
        ``objective(params, task)`` (or ``objective(params)``) returning the loss; a callable
        object (e.g. a command objective) or a ``"module:function"`` reference.
    out : path
        Run directory (method ``tla2``; also holds the extended ``model.json``).
    settings : TransferSettings
        ``tla2_budget`` evaluations on the new task, the TLA1 prediction included (with basin
        size ``tla2_basin``, see :func:`tla1`); after it the best configurations of up to
        ``tla2_share`` nearest training tasks (in the task space), skipping any within
        ``radius`` (unit cube) of one already chosen; then the model's proposals. ``seed``
        seeds TLA1 and the proposals.
    comm : MPI communicator, optional
        Ranks (the single task is evaluated by one rank per round).
    start : dict, optional
        First configuration (default: the TLA1 prediction).
    radius : float
        Unit-cube distance within which two configurations count as the same basin.
    objectives : Objectives, optional
        The declared objectives the objective returns (one, or with weights): the loss the
        model was fitted on is their :meth:`~propulate.runs.declared_objectives.Objectives.loss_of`.

    Returns
    -------
    list of RunSummary
        The run's summary, on rank 0 (empty on the others).
    """
    cache: list[Params] = []
    optima = nearest_optima(base, space, task_space, task)

    def first(_: int) -> list[Params]:  # only rank 0 plans, so only it runs TLA1
        if not cache:
            cache.append(
                start
                if start is not None
                else tla1(base, space, task_space, task, settings.seed, basin=settings.tla2_basin)[
                    0
                ]
            )
            for _ in range(settings.tla2_share):
                p = untried_incumbent(space, task, cache, optima, radius)
                if p is None:
                    break
                cache.append(p)
        return cache

    run = TaskRun(task_id, dict(task), Path(out))
    rounds = LoopSettings(
        budget=settings.tla2_budget,
        initial=1 + settings.tla2_share,
        seed=settings.seed,
        method="tla2",
    )
    loop = ModelGuidedLoop(
        space,
        objective,
        [run],
        rounds,
        first,
        lambda data, prev: extend_model(base, data[0], task_space, space),
        model_task=[base.n_tasks],
        comm=comm,
        model_path=Path(out) / "model.json",
        candidates=optima,
        objectives=objectives,
    )
    return loop.run()
