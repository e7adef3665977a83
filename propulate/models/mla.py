"""MLA: model-guided tuning of several tasks at once, one LCM over all of them.

:func:`run_mla` evaluates an independent Latin hypercube per task first, then every round
refits the LCM on all tasks' successful evaluations (warm-started from the previous fit) and
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
from pathlib import Path
from typing import Any

from propulate.models.lcm import LCM
from propulate.models.loop import ModelGuidedLoop, ModelHook, Objective, TaskRun
from propulate.models.sampling import TaskData, build_lcm, initial_designs, nearest_tasks
from propulate.runs.summary import RunSummary
from propulate.settings import LCMSettings, MLASettings
from propulate.space import SearchSpace

__all__ = ["ModelGuidedLoop", "TaskRun", "lcm_fitter", "run_mla", "task_fitter"]


def lcm_fitter(
    space: SearchSpace,
    task_space: SearchSpace | None,
    latent: int = LCMSettings.latent,
    restarts: int = LCMSettings.restarts,
    max_points: int | None = LCMSettings.max_points,
    log_output: bool = LCMSettings.log_output,
    seed: int = LCMSettings.seed,
    max_iter: int = 500,
) -> ModelHook:
    """The MLA model hook: an LCM over all tasks, warm-started from the previous fit.

    Parameters as :func:`propulate.models.sampling.build_lcm` and
    :meth:`propulate.models.lcm.LCM.fit`; each fit's seed is ``seed`` plus the number of
    training points, so successive fits draw different random starts.
    """

    def fit(data: list[TaskData], previous: LCM | None) -> LCM:
        model = build_lcm(data, space, task_space, latent, max_points, log_output)
        n_starts = restarts
        if previous is not None and previous.n_tasks == model.n_tasks:
            model.set_theta(previous.get_theta())
            n_starts = min(restarts, 2)  # the warm start plus one random start
        return model.fit(restarts=n_starts, seed=seed + len(model.y), max_iter=max_iter)

    return fit


def task_fitter(
    space: SearchSpace,
    restarts: int = LCMSettings.restarts,
    log_output: bool = LCMSettings.log_output,
    seed: int = LCMSettings.seed,
) -> Callable[[TaskData], LCM]:
    """The local rounds' model: a one-task GP of one task's own data, refitted every call
    (seed ``seed`` plus the number of points)."""

    fit = lcm_fitter(space, None, 1, restarts, None, log_output, seed)
    return lambda data: fit([data], None)


def run_mla(
    space: SearchSpace,
    objective: Objective,
    tasks: Sequence[tuple[str, dict[str, Any]]],
    out: str | Path,
    budget: int = MLASettings.budget,
    initial: int = MLASettings.initial,
    seed: int = MLASettings.seed,
    task_space: SearchSpace | None = None,
    latent: int = LCMSettings.latent,
    restarts: int = LCMSettings.restarts,
    max_points: int | None = LCMSettings.max_points,
    log_output: bool = LCMSettings.log_output,
    comm: Any = None,
    share: int = MLASettings.share,
    radius: float = MLASettings.radius,
    local_every: int = MLASettings.local_every,
    local_radius: float = MLASettings.local_radius,
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
    budget, initial : int
        Evaluations per task in total, and how many of them come from the task's Latin
        hypercube before the model guides the search.
    seed : int
        Seed of the designs, the proposals and the fits.
    task_space : SearchSpace, optional
        The task space (saved in the model's metadata).
    latent, restarts, max_points, log_output
        LCM settings (see :class:`propulate.settings.LCMSettings`).
    comm : MPI communicator, optional
        Ranks sharing the evaluations.
    share, radius
        Each task tries the best configurations of its ``share`` nearest tasks in the task
        space (when ``task_space`` is given), unless it has evaluated something within
        ``radius`` (unit cube) of them (see :class:`propulate.models.loop.ModelGuidedLoop`).
    local_every, local_radius
        Every ``local_every``-th guided evaluation of a task (0: none) comes from a one-task GP
        of its own data (:func:`task_fitter`), searched within ``local_radius`` (unit cube) of
        the other tasks' best configurations (see
        :class:`propulate.models.loop.ModelGuidedLoop`). A single task has none: no other task's best.

    Returns
    -------
    list of RunSummary
        One per task, on rank 0 (empty on the others).
    """
    out = Path(out)
    runs = [TaskRun(tid, dict(values), out / tid) for tid, values in tasks]
    designs = initial_designs(space, [r.task for r in runs], initial, seed)
    neighbours = None
    if task_space is not None and len(runs) > 1:
        neighbours = nearest_tasks(task_space, [r.task for r in runs])
    loop = ModelGuidedLoop(
        space,
        objective,
        runs,
        budget,
        initial,
        lambda i: designs[i],
        lcm_fitter(space, task_space, latent, restarts, max_points, log_output, seed),
        seed=seed,
        method="mla",
        comm=comm,
        model_path=out / "model.json",
        neighbours=neighbours,
        share=share,
        radius=radius,
        local_every=local_every,
        local_radius=local_radius,
        local_model=task_fitter(space, restarts, log_output, seed),
    )
    return loop.run()
