"""MLA: model-guided tuning of several tasks at once, one model over all of them.

The model is, by default (``MLASettings.model`` ``auto``) and whenever a task space is given with
several tasks, the joint GP over task values and configuration
(:class:`propulate.models.joint_gp.JointGP`, :func:`joint_fitter`); otherwise, or with
``model="lcm"``, the LCM (:func:`lcm_fitter`).

:func:`run_mla` evaluates an independent Latin hypercube per task first, then every round
refits the model on all tasks' successful evaluations (warm-started from the previous fit) and
evaluates, per task with budget left, the feasible configuration of highest expected
improvement (:class:`propulate.models.loop.ModelGuidedLoop`). Its defaults are those of
:class:`propulate.settings.MLASettings` and :class:`propulate.settings.LCMSettings`.

Every ``local_every``-th guided evaluation of a task is a local round: a one-task GP of the
task's own data (:func:`task_fitter`) proposes, searching only within ``local_radius`` of the
other tasks' best configurations. The joint model spreads a smooth trend over all tasks and can
be confident, between a task's own points, about structure only the task's own data shows; the
task's own GP is not, and the other tasks' optima tell it where to look.

With ``share`` > 0 a task also evaluates, before the model's proposal, the best configuration
of one of its ``share`` nearest tasks whenever it has tried nothing within ``radius`` of it.
Before local rounds this cut the share of tasks left in a local minimum on the GPTune demo
function (``benchmarks/mla_demo.py``, dev seeds 0-4: 45/35/38 % to 30/20/26 % on 4/8/10
training tasks); with them it only takes rounds from the joint model, so it is off by default
(see :class:`propulate.settings.MLASettings`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from propulate.models.joint_gp import JointGP
from propulate.models.joint_local import DENSE_MAX, LocalJointGP
from propulate.models.lcm import LCM
from propulate.models.loop import ModelGuidedLoop, ModelHook, Objective, TaskRun
from propulate.models.loop_settings import LoopSettings
from propulate.models.sampling import (
    TaskData,
    build_lcm,
    initial_designs,
    nearest_tasks,
    stack_tasks,
)
from propulate.runs.declared_objectives import Objectives
from propulate.runs.summary import RunSummary
from propulate.settings import LCMSettings, MLASettings
from propulate.space import SearchSpace

__all__ = ["ModelGuidedLoop", "TaskRun", "lcm_fitter", "run_mla", "task_fitter"]

#: The defaults (frozen, shared).
DEFAULT_LCM, DEFAULT_MLA = LCMSettings(), MLASettings()


def lcm_fitter(
    space: SearchSpace,
    task_space: SearchSpace | None,
    lcm: LCMSettings = DEFAULT_LCM,
    seed: int | None = None,
    max_iter: int = 500,
) -> ModelHook:
    """The MLA model hook: an LCM over all tasks, warm-started from the previous fit.

    Parameters
    ----------
    space, task_space : SearchSpace
        As :func:`propulate.models.sampling.build_lcm`.
    lcm : LCMSettings
        Latent functions, restarts, the cap of the training set, log output.
    seed : int, optional
        Seed of the fits (default ``lcm.seed``); each fit's seed is ``seed`` plus the number of
        training points, so successive fits draw different random starts.
    max_iter : int
        L-BFGS iterations per start.
    """
    base_seed = lcm.seed if seed is None else seed

    def fit(data: list[TaskData], previous: LCM | None) -> LCM:
        model = build_lcm(data, space, task_space, lcm.latent, lcm.max_points, lcm.log_output)
        warm = previous is not None and previous.n_tasks == model.n_tasks
        return _refit(model, previous if warm else None, lcm.restarts, base_seed, max_iter=max_iter)

    return fit


def _refit(model: Any, previous: Any, restarts: int, base_seed: int, **fit_args: Any) -> Any:
    """``model`` fitted from ``restarts`` starts, or warm-started from ``previous`` (a model of
    the same shape) plus one random start; seeded by ``base_seed`` plus its number of points."""
    if previous is not None:
        model.set_theta(previous.get_theta())
        restarts = min(restarts, 2)  # the warm start plus one random start
    return model.fit(restarts=restarts, seed=base_seed + len(model.y), **fit_args)


def joint_fitter(
    space: SearchSpace,
    task_space: SearchSpace,
    lcm: LCMSettings = DEFAULT_LCM,
    seed: int | None = None,
) -> ModelHook:
    """MLA's ``joint`` model hook: a GP over task values and configuration together
    (:class:`propulate.models.joint_gp.JointGP`) on every evaluation of every task, warm-started
    from the previous fit (``lcm``'s restarts and log output; seeds as :func:`lcm_fitter`).
    Above :data:`~propulate.models.joint_local.DENSE_MAX` points the hyperparameters are
    fitted on a subsample and each task predicted from its neighbourhood of tasks
    (:class:`propulate.models.joint_local.LocalJointGP`)."""
    base_seed = lcm.seed if seed is None else seed

    def fit(data: list[TaskData], previous: Any) -> JointGP | LocalJointGP:
        X, index, y = stack_tasks(data, space)
        U = task_space.encode_many([t.task for t in data])
        info = {"tasks": [{"id": t.id, "task": t.task} for t in data]}
        kind = LocalJointGP if len(y) > DENSE_MAX else JointGP
        model = kind(U, X, index, y, lcm.log_output, info)
        warm = isinstance(previous, JointGP | LocalJointGP)
        return _refit(model, previous if warm else None, lcm.restarts, base_seed)

    return fit


def task_fitter(
    space: SearchSpace, lcm: LCMSettings = DEFAULT_LCM, seed: int | None = None
) -> Callable[[TaskData], LCM]:
    """The local rounds' model: a one-task GP of one task's own data, refitted every call
    (``lcm``'s restarts and log output, one latent function, no cap; seed as
    :func:`lcm_fitter`)."""
    one = replace(lcm, latent=1, max_points=None)
    fit = lcm_fitter(space, None, one, seed)
    return lambda data: fit([data], None)


def run_mla(
    space: SearchSpace,
    objective: Objective,
    tasks: Sequence[tuple[str, dict[str, Any]]],
    out: str | Path,
    mla: MLASettings = DEFAULT_MLA,
    lcm: LCMSettings = DEFAULT_LCM,
    *,
    task_space: SearchSpace | None = None,
    comm: Any = None,
    objectives: Objectives | None = None,
) -> list[RunSummary]:
    """MLA over ``tasks`` (``(id, values)`` pairs): ``out/<id>/`` run dirs, ``out/model.json``.

    Parameters
    ----------
    space : SearchSpace
        Parameter space with its constraint.
    objective : str or callable
        ``objective(params, task)`` (or ``objective(params)``) returning the loss; a callable
        object (e.g. a command objective) or a ``"module:function"`` reference.
    tasks : sequence of (str, dict)
        Task ids and values.
    out : path
        Output directory: one run directory per task and the last fitted ``model.json``.
    mla : MLASettings
        Evaluations per task (``budget``, ``initial`` of them from the task's Latin hypercube
        before the model guides the search), the seed of the designs, proposals and fits, and
        the rounds that look at other tasks' best configurations: ``share`` nearest tasks'
        best first (with ``task_space``), and every ``local_every``-th guided evaluation from a
        one-task GP of the task's own data (:func:`task_fitter`) searched within
        ``local_radius`` of the other tasks' best (see
        :class:`propulate.models.loop.LoopSettings`). A single task has no local rounds.
    lcm : LCMSettings
        The model's settings (its ``seed`` is not used: MLA's seed seeds the fits).
    task_space : SearchSpace, optional
        The task space (saved in the model's metadata; gives the nearest tasks).
    comm : MPI communicator, optional
        Ranks sharing the evaluations.
    objectives : Objectives, optional
        The declared objectives the objective returns (one, or with weights): MLA models and
        minimises their :meth:`~propulate.runs.declared_objectives.Objectives.loss_of`, the records keep
        each value.

    Returns
    -------
    list of RunSummary
        One per task, on rank 0 (empty on the others).
    """
    out = Path(out)
    runs = [TaskRun(tid, dict(values), out / tid) for tid, values in tasks]
    designs = initial_designs(space, [r.task for r in runs], mla.initial, mla.seed)
    neighbours = None
    if task_space is not None and len(runs) > 1:
        neighbours = nearest_tasks(task_space, [r.task for r in runs])
    fitter: ModelHook
    if task_space is not None and (mla.model == "joint" or (mla.model == "auto" and len(runs) > 1)):
        fitter = joint_fitter(space, task_space, lcm, mla.seed)
    elif mla.model == "joint":
        raise ValueError("MLA's joint model (mla.model: joint) needs the task space")
    else:
        fitter = lcm_fitter(space, task_space, lcm, mla.seed)
    loop = ModelGuidedLoop(
        space,
        objective,
        runs,
        LoopSettings.of_mla(mla),
        lambda i: designs[i],
        fitter,
        comm=comm,
        model_path=out / "model.json",
        neighbours=neighbours,
        local_model=task_fitter(space, lcm, mla.seed),
        objectives=objectives,
    )
    return loop.run()
