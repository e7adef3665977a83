"""Transfer to a new task on the joint model over task values and configuration.

The LCM (:mod:`propulate.models.transfer`) never looks at task values: a new task enters it
with coefficients interpolated from its nearest tasks, and TLA1 there regresses the training
optima over the task space. The joint GP (:class:`propulate.models.joint_gp.JointGP`) puts
every point at ``(task values, configuration)``, so a task it has no data of still has a
posterior: the one at its task values, shaped by its neighbours' evaluations as far as the task
lengthscales say. This module transfers with that posterior:

* :func:`joint_base` fits the joint model of the training tasks (their optima kept in
  ``info.best``);
* :func:`extend_joint` adds the new task (its task values and any evaluations) to a fitted
  model, hyperparameters and output scaling frozen: the posterior is conditioned on all tasks;
* :func:`joint_tla1` predicts the new task's optimum: the least posterior mean at its task
  values over a Latin hypercube and the training optima, refined by a compass search, with
  the predicted loss band and, per parameter, how far the optima of posterior draws spread
  (:func:`propulate.transfer.joint_posterior.tla1_prediction`);
* :func:`run_joint_tla2` runs the model-guided loop on the new task: its first evaluation the
  TLA1 prediction, then the nearest training tasks' optima (``tla2_share``), then the
  expected-improvement proposals of the conditioned joint model.

``suggest`` (:mod:`propulate.tuningdb.suggest`) makes the same prediction from a stored model
through :mod:`propulate.transfer.joint_posterior`, without the model-fitting code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from propulate.models.joint_gp import JointGP
from propulate.models.joint_local import DENSE_MAX, NEIGHBOURHOOD, fit_subsampled, local_view
from propulate.models.linalg import blas_threads
from propulate.models.sampling import TaskData, stack_tasks
from propulate.settings import MLASettings
from propulate.space import Params, SearchSpace
from propulate.transfer.joint_posterior import KAPPA, tla1_prediction


def task_optima(model: Any, space: SearchSpace) -> list[dict[str, Any]]:
    """Each training task's ``{"task", "params", "loss"}`` best configuration.

    From ``info.best`` when the model holds it (an LCM built by
    :func:`propulate.models.sampling.build_lcm`, a model of :func:`joint_base`), else from the
    model's own training data (MLA's joint ``model.json``). Tasks without one are left out.
    """
    specs = list(model.info.get("tasks", []))
    best = model.info.get("best")
    if best is None or len(best) != len(specs):
        best = _best_of_data(model, space)
    return [
        {"task": spec["task"], "params": b["params"], "loss": b["loss"]}
        for spec, b in zip(specs, best, strict=False)
        if b and b.get("params") is not None
    ]


def _best_of_data(model: Any, space: SearchSpace) -> list[dict[str, Any] | None]:
    """Per model task, its least training output's configuration and value (or ``None``)."""
    out: list[dict[str, Any] | None] = []
    for j in range(model.n_tasks):
        sel = np.flatnonzero(model.task_index == j)
        if not len(sel):
            out.append(None)
            continue
        i = sel[int(np.argmin(model.y[sel]))]
        out.append({"params": space.decode(model.X[i]), "loss": float(model.y[i])})
    return out


def training_data(model: Any, space: SearchSpace) -> list[TaskData]:
    """A fitted model's training tasks and points (LCM or joint) as :class:`TaskData`."""
    specs = list(model.info.get("tasks", []))
    if len(specs) != model.n_tasks:
        raise ValueError("the model does not list its training tasks (info.tasks)")
    data = [TaskData(str(s["id"]), dict(s["task"])) for s in specs]
    for x, j, y in zip(model.X, model.task_index, model.y, strict=True):
        data[int(j)].params.append(space.decode(x))
        data[int(j)].losses.append(float(y))
    return data


def joint_base(
    data: Sequence[TaskData],
    space: SearchSpace,
    task_space: SearchSpace,
    log_output: bool = False,
    seed: int = 0,
    restarts: int = 2,
    start: np.ndarray | None = None,
) -> JointGP:
    """The joint model of the training tasks, fitted; ``info`` lists the tasks and their optima.

    Parameters
    ----------
    data : sequence of TaskData
        The training tasks and their successful evaluations (every point is kept; above
        :data:`~propulate.models.joint_local.DENSE_MAX` points the hyperparameters are fitted on
        a subsample, :func:`~propulate.models.joint_local.fit_subsampled`, and transfer
        predicts from the new task's neighbourhood of tasks).
    space, task_space : SearchSpace
        Parameter and task spaces.
    log_output : bool
        Model ``log(loss)``.
    seed, restarts : int
        Seed and number of the likelihood's starts (:meth:`JointGP.fit`).
    start : array, optional
        Hyperparameters to start from (e.g. MLA's last fit); then one random start more.
    """
    X, index, y = stack_tasks(data, space)
    info = {
        "tasks": [{"id": t.id, "task": t.task} for t in data],
        "best": [{"params": t.best()[0], "loss": t.best()[1]} for t in data],
        "space": space.to_dict(),
        "task_space": task_space.to_dict(),
    }
    model = JointGP(task_space.encode_many([t.task for t in data]), X, index, y, log_output, info)
    if start is not None:
        model.set_theta(start)
        restarts = min(restarts, 2)
    if len(y) > DENSE_MAX:
        return fit_subsampled(model, restarts, seed)
    return model.fit(restarts=restarts, seed=seed)


def as_joint(
    model: Any,
    space: SearchSpace,
    task_space: SearchSpace,
    seed: int = 0,
    restarts: int = 2,
) -> JointGP:
    """``model`` itself when it is a joint model, else a joint model fitted on its training
    data (an LCM's points, ``info.best`` kept as the tasks' optima)."""
    if isinstance(model, JointGP):
        if model.info.get("best") is None:
            model.info["best"] = _best_of_data(model, space)
        return model
    data = training_data(model, space)
    joint = joint_base(data, space, task_space, model.log_output, seed, restarts)
    if model.info.get("best") is not None:
        joint.info["best"] = list(model.info["best"])
    return joint


def extend_joint(
    base: JointGP, data: TaskData, task_space: SearchSpace, space: SearchSpace
) -> JointGP:
    """``base`` plus one task (its values and evaluations), nothing refitted.

    The hyperparameters and the output scaling stay the base model's, so without evaluations
    the new task's posterior is the base model's at its task values, and each evaluation
    conditions it further. The new task is the model's last (index ``base.n_tasks``).
    """
    U = np.vstack([base.U, task_space.encode(data.task)[None, :]])
    X, index, y = base.X, base.task_index, base.y
    if data.losses:
        X = np.vstack([X, space.encode_many(data.params)])
        index = np.concatenate([index, np.full(len(data.losses), base.n_tasks)])
        y = np.concatenate([y, np.asarray(data.losses, dtype=float)])
    info = dict(base.info)
    info["tasks"] = list(info.get("tasks", [])) + [{"id": data.id, "task": data.task}]
    if info.get("best") is not None:
        best_p, best_l = data.best()
        info["best"] = list(info["best"]) + [{"params": best_p, "loss": best_l}]
    model = JointGP(U, X, index, y, base.log_output, info)
    model.y_mean, model.y_std = base.y_mean, base.y_std
    z = np.log(model.y) if model.log_output else model.y
    model.z = (z - base.y_mean) / base.y_std
    model.set_theta(base.get_theta())
    model.log_likelihood_value = base.log_likelihood_value
    return model


def joint_tla1(
    model: JointGP,
    space: SearchSpace,
    task_space: SearchSpace,
    task: Mapping[str, Any],
    seed: int = 0,
    kappa: float = KAPPA,
) -> tuple[Params, dict[str, float], dict[str, float]]:
    """Predict a new task's optimum from the joint posterior at its task values.

    :func:`propulate.transfer.joint_posterior.tla1_prediction` on ``model``'s data with the training
    tasks' optima as further candidates; ``suggest`` computes the same from the stored model.

    Returns
    -------
    params, std, band
        A feasible configuration; per parameter the standard deviation, in unit-cube units, of
        the minimizers of posterior draws; ``loss`` (posterior mean at ``params``, in loss
        units: the median for a log-output model) with its band ``loss_low`` / ``loss_high``,
        calibrated on the training tasks
        (:meth:`propulate.transfer.joint_posterior.JointPosterior.band`).
    """
    optima = joint_optima(model)
    model = near_task(model, task_space.encode(task))
    data = {**model.to_dict(), "scale": [model.y_mean, model.y_std]}
    with blas_threads(len(model.y)):
        return tla1_prediction(data, space, task_space, task, seed, optima, kappa)


def near_task(model: JointGP, u_task: np.ndarray) -> JointGP:
    """``model`` itself up to :data:`~propulate.models.joint_local.DENSE_MAX` points, else
    its neighbourhood of the task at ``u_task`` (:func:`~propulate.models.joint_local.local_view`)."""
    return model if len(model.y) <= DENSE_MAX else local_view(model, u_task, NEIGHBOURHOOD)


def joint_optima(model: JointGP) -> list[Params]:
    """The training tasks' best configurations a joint model of :func:`as_joint` holds."""
    return [b["params"] for b in model.info.get("best") or [] if b and b.get("params")]


def nearest_joint_optima(
    model: JointGP, space: SearchSpace, task_space: SearchSpace, task: Mapping[str, Any]
) -> list[Params]:
    """The training tasks' best configurations, nearest task (unit task cube) first."""
    optima = task_optima(model, space)
    if not optima:
        return []
    T = task_space.encode_many([o["task"] for o in optima])
    dist = ((T - task_space.encode(task)) ** 2).sum(axis=1)
    return [optima[k]["params"] for k in np.argsort(dist, kind="stable")]


def run_joint_tla2(
    base: JointGP,
    space: SearchSpace,
    task_space: SearchSpace,
    task_id: str,
    task: dict[str, Any],
    objective: Any,
    out: str | Path,
    budget: int,
    share: int,
    seed: int,
    *,
    comm: Any = None,
    start: Params | None = None,
    radius: float = MLASettings.radius,
    objectives: Any = None,
) -> list[Any]:
    """TLA2 on the joint model: ``budget`` evaluations of one new task in run directory ``out``.

    The first evaluation is :func:`joint_tla1`'s prediction (or ``start``), then the best
    configurations of up to ``share`` nearest training tasks not within ``radius`` of one
    already chosen, then per round the configuration of largest expected improvement of the
    base model conditioned on the new task's evaluations (:func:`extend_joint`). Arguments as
    :func:`propulate.models.transfer.run_tla2`.
    """
    from propulate.models.acquisition import untried_incumbent
    from propulate.models.loop import ModelGuidedLoop, TaskRun
    from propulate.models.loop_settings import LoopSettings

    cache: list[Params] = []
    optima = nearest_joint_optima(base, space, task_space, task)

    def first(_: int) -> list[Params]:  # only rank 0 plans
        if not cache:
            cache.append(
                start if start is not None else joint_tla1(base, space, task_space, task, seed)[0]
            )
            for _ in range(share):
                p = untried_incumbent(space, task, cache, optima, radius)
                if p is None:
                    break
                cache.append(p)
        return cache

    rounds = LoopSettings(budget=budget, initial=1 + share, seed=seed, method="tla2")
    near = near_task(base, task_space.encode(task))
    loop = ModelGuidedLoop(
        space,
        objective,
        [TaskRun(task_id, dict(task), Path(out))],
        rounds,
        first,
        lambda data, prev: extend_joint(near, data[0], task_space, space),
        model_task=[base.n_tasks],
        comm=comm,
        model_path=Path(out) / "model.json",
        candidates=optima,
        objectives=objectives,
    )
    return loop.run()
