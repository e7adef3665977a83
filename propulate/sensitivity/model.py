"""Sobol indices per task from a fitted LCM: which parameters drive its prediction.

For each task the function analysed is the model's posterior mean over the parameter space
(in the model's output units: ``log(loss)`` for a ``log_output`` model), sampled with SALib
(:func:`propulate.sensitivity.sobol.sobol_indices`); the model is never refitted.

A task the model was not trained on gets the model's prediction for it: the LCM extended by
the task without data, as TLA2 starts from it (:func:`propulate.models.transfer.extend_model`
with ``fit=False``: the new task's coefficients ``W`` interpolated between its two nearest
training tasks in the task space, its ``kappa`` and noise the nearest one's). Its posterior mean
is the LCM's prediction for that task, and its indices the prediction's sensitivity.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from propulate.sensitivity.sobol import SobolIndices, sobol_indices
from propulate.settings import SensitivitySettings
from propulate.space import SearchSpace

if TYPE_CHECKING:
    from propulate.models.lcm import LCM

#: Format tag of a task's indices as :meth:`TaskSensitivity.to_dict` writes them.
FORMAT = "propulate-task-sensitivity/1"
#: Bytes of the largest intermediate array of one chunk of predictions.
CHUNK_BYTES = 64 * 2**20


@dataclass
class TaskSensitivity:
    """The Sobol indices of one task's predicted output.

    Attributes
    ----------
    id : str
        Task id (a training task's, or one made from the values of a new task).
    task : dict or None
        The task's values (``None`` for a model without a task space).
    trained : bool
        Whether the model was trained on the task (else: its prediction for a new task).
    output : str
        What the indices decompose: ``"loss"`` or ``"log(loss)"``.
    indices : SobolIndices
        The indices.
    """

    id: str
    task: dict[str, Any] | None
    trained: bool
    output: str
    indices: SobolIndices

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data."""
        return {
            "format": FORMAT,
            "task_id": self.id,
            "task": self.task,
            "trained": self.trained,
            "output": self.output,
            "ranking": self.indices.ranking(),
            "indices": self.indices.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TaskSensitivity:
        """Rebuild what :meth:`to_dict` wrote."""
        if data.get("format") != FORMAT:
            raise ValueError(f"not {FORMAT} data (format={data.get('format')!r})")
        task = data.get("task")
        return cls(
            str(data["task_id"]),
            None if task is None else dict(task),
            bool(data["trained"]),
            str(data["output"]),
            SobolIndices.from_dict(data["indices"]),
        )


@dataclass
class TaskTarget:
    """A task to analyse: a training task of the model or a new one.

    Attributes
    ----------
    id : str
        Task id.
    task : dict or None
        Task values.
    index : int or None
        The model's output index of a training task (``None`` for a new task).
    """

    id: str
    task: dict[str, Any] | None
    index: int | None

    @property
    def trained(self) -> bool:
        """Whether the model was trained on the task."""
        return self.index is not None


def model_spaces(model: LCM) -> tuple[SearchSpace, SearchSpace | None]:
    """The parameter space and task space saved in a model's ``info``.

    Raises
    ------
    ValueError
        When the model holds no parameter space (a model not built by ``fit-lcm`` or MLA).
    """
    info = model.info
    if not info.get("space"):
        raise ValueError("the model file holds no parameter space (info.space)")
    space = SearchSpace.from_dict(info["space"])
    task_space = SearchSpace.from_dict(info["task_space"]) if info.get("task_space") else None
    if space.dim != model.dim:
        raise ValueError(f"the model has {model.dim} inputs but its space {space.dim} parameters")
    return space, task_space


def output_label(model: LCM) -> str:
    """``"log(loss)"`` for a log-output model, else ``"loss"``."""
    return "log(loss)" if model.log_output else "loss"


def training_targets(model: LCM) -> list[TaskTarget]:
    """Every task the model was trained on, in output order."""
    specs = model.info.get("tasks") or []
    if len(specs) != model.n_tasks:
        return [TaskTarget(str(i), None, i) for i in range(model.n_tasks)]
    return [TaskTarget(str(s["id"]), dict(s.get("task") or {}), i) for i, s in enumerate(specs)]


def task_label(values: Mapping[str, Any]) -> str:
    """A new task's id made of its values, e.g. ``m1400_n400`` (as a new-tasks file names
    them)."""
    parts = [f"{n}{v:g}" if isinstance(v, float) else f"{n}{v}" for n, v in values.items()]
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", "_".join(parts))


def resolve_task(
    model: LCM, task_space: SearchSpace | None, values: Mapping[str, Any], id: str | None = None
) -> TaskTarget:
    """The training task with these values, or a new task (``id`` or one made of the values).

    Parameters
    ----------
    model : LCM
        The fitted model.
    task_space : SearchSpace or None
        Its task space (a task needs one).
    values : mapping
        Task values (cast to the task space's types).
    id : str, optional
        The id of a new task.
    """
    if task_space is None:
        raise ValueError("the model has no task space: it has no tasks to choose from")
    key = task_space.key(values)
    for target in training_targets(model):
        if target.task is not None and set(target.task) == set(task_space.names):
            if task_space.key(target.task) == key:
                return target
    return TaskTarget(id or task_label(values), dict(values), None)


def mean_function(
    model: LCM, target: TaskTarget, space: SearchSpace, task_space: SearchSpace | None
) -> Callable[[np.ndarray], np.ndarray]:
    """The posterior mean of a task over encoded configurations, predicted in chunks.

    A new task's is that of the model extended by the task without data or fitting (see the
    module's docstring).
    """
    if target.index is not None:
        m, index = model, target.index
    else:
        from propulate.models.sampling import TaskData
        from propulate.models.transfer import extend_model

        data = TaskData(target.id, dict(target.task or {}))
        m, index = extend_model(model, data, task_space, space, fit=False), model.n_tasks
    chunk = max(1, CHUNK_BYTES // (8 * max(1, len(m.X)) * max(1, m.dim)))

    def f(U: np.ndarray) -> np.ndarray:
        return np.concatenate(
            [m.predict_mean(U[i : i + chunk], index) for i in range(0, len(U), chunk)]
        )

    return f


def model_sensitivity(
    model: LCM,
    tasks: Sequence[Mapping[str, Any]] | None = None,
    settings: SensitivitySettings | None = None,
    ids: Sequence[str | None] | None = None,
) -> list[TaskSensitivity]:
    """Sobol indices of the model's posterior mean for each task.

    Parameters
    ----------
    model : LCM
        A fitted model whose ``info`` holds its spaces (``fit-lcm``, MLA).
    tasks : sequence of mappings, optional
        Task values; a training task's values give that task, others a new task (the model's
        prediction for it). Default: every training task.
    settings : SensitivitySettings, optional
        The sample size, second order, bootstrap and seed.
    ids : sequence, optional
        Ids of the new tasks among ``tasks`` (default: made of their values).
    """
    settings = settings or SensitivitySettings()
    from propulate.models.linalg import blas_threads

    space, task_space = model_spaces(model)
    if tasks is None:
        targets = training_targets(model)
    else:
        names = list(ids) if ids is not None else [None] * len(tasks)
        targets = [resolve_task(model, task_space, t, i) for t, i in zip(tasks, names, strict=True)]
    out = []
    with blas_threads(len(model.X)):
        for target in targets:
            f = mean_function(model, target, space, task_space)
            indices = sobol_indices(f, space, settings)
            out.append(
                TaskSensitivity(
                    target.id, target.task, target.trained, output_label(model), indices
                )
            )
    return out
