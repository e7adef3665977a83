"""Training tasks, initial designs and training sets for the multitask models.

* :func:`sample_tasks` -- training tasks by a seeded Latin hypercube over the task space;
* :func:`initial_designs` -- per task an independent Latin hypercube over the parameter space
  (heterotropic), points violating the task's constraint rejected and redrawn;
* :func:`subsample` -- cap one task's (long, evolutionary) history: the best points plus a
  space-filling spread of the rest;
* :func:`training_set_from_runs` / :func:`build_lcm` -- run directories to an unfitted
  :class:`~propulate.models.lcm.LCM` whose metadata carries the spaces and the tasks.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from propulate.models.lcm import LCM
from propulate.runs.log import iter_records
from propulate.runs.summary import record_loss
from propulate.settings import LCMSettings
from propulate.space import Params, SearchSpace


def sample_tasks(task_space: SearchSpace, n: int, seed: int) -> list[Params]:
    """``n`` distinct tasks from a seeded Latin hypercube over the task space.

    Parameters
    ----------
    task_space : SearchSpace
        The task space (its constraint, if any, is applied without a task).
    n : int
        Number of tasks.
    seed : int
        Seed of the design.
    """
    return task_space.latin_hypercube(n, seed=seed)


def nearest_tasks(task_space: SearchSpace, tasks: Sequence[Mapping[str, Any]]) -> list[list[int]]:
    """For each task, the other tasks' indices by increasing distance in the unit task cube.

    Parameters
    ----------
    task_space : SearchSpace
        The task space (encodes the task values).
    tasks : sequence of mappings
        Task values.
    """
    T = task_space.encode_many(list(tasks))
    dist = np.sqrt(((T[:, None, :] - T[None, :, :]) ** 2).sum(axis=-1))
    return [
        [int(j) for j in np.argsort(dist[i], kind="stable") if j != i] for i in range(len(tasks))
    ]


def initial_designs(
    space: SearchSpace, tasks: Sequence[Mapping[str, Any]], n: int, seed: int
) -> list[list[Params]]:
    """For each task, ``n`` feasible configurations of its own Latin hypercube.

    Parameters
    ----------
    space : SearchSpace
        The parameter space with its (possibly task-dependent) constraint.
    tasks : sequence of mappings
        Task values, one per task (handed to the constraint).
    n : int
        Configurations per task.
    seed : int
        Campaign seed; task ``i`` uses the independent stream ``(seed, i)``.
    """
    return [
        space.latin_hypercube(n, seed=np.random.default_rng([seed, i]), task=task)
        for i, task in enumerate(tasks)
    ]


def subsample(X: np.ndarray, y: np.ndarray, cap: int) -> np.ndarray:
    """Indices of at most ``cap`` rows: the best half by ``y``, then a farthest-point spread.

    Parameters
    ----------
    X : array (n, d)
        Encoded configurations.
    y : array (n,)
        Losses (smaller is better).
    cap : int
        Maximum number of rows kept.
    """
    n = len(y)
    if n <= cap:
        return np.arange(n)
    order = np.argsort(y, kind="stable")
    keep = list(order[: max(1, cap // 2)])
    dist = np.min(((X[:, None, :] - X[None, keep, :]) ** 2).sum(-1), axis=1)
    while len(keep) < cap:
        j = int(np.argmax(dist))
        keep.append(j)
        dist = np.minimum(dist, ((X - X[j]) ** 2).sum(-1))
    return np.sort(np.array(keep))


@dataclass
class TaskData:
    """The successful evaluations of one task.

    Attributes
    ----------
    id : str
        Task id.
    task : dict
        Task values.
    params : list of dict
        Evaluated configurations (successful ones).
    losses : list of float
        Their losses.
    """

    id: str
    task: dict[str, Any]
    params: list[Params] = field(default_factory=list)
    losses: list[float] = field(default_factory=list)

    def best(self) -> tuple[Params | None, float | None]:
        """The best configuration and its loss (``None`` when empty)."""
        if not self.losses:
            return None, None
        i = int(np.argmin(self.losses))
        return self.params[i], self.losses[i]


def read_run(directory: str | Path, space: SearchSpace) -> TaskData:
    """One run directory (``task.json`` and ``evals/``) as :class:`TaskData`."""
    directory = Path(directory)
    spec_path = directory / "task.json"
    spec = json.loads(spec_path.read_text()) if spec_path.exists() else {}
    data = TaskData(str(spec.get("id", directory.name)), dict(spec.get("task", {})))
    for rec in iter_records(directory):
        loss = record_loss(rec)
        if loss is not None:
            params = rec["params"]
            if (  # a conditional space's records hold their active parameters only
                space.in_bounds(params)
                if space.conditions
                else all(n in params for n in space.names)
            ):
                data.params.append(space.canonical(params))
                data.losses.append(loss)
    return data


def training_set_from_runs(directories: Sequence[str | Path], space: SearchSpace) -> list[TaskData]:
    """Read several run directories, merging those that tuned the same task id."""
    merged: dict[str, TaskData] = {}
    for d in directories:
        data = read_run(d, space)
        if data.id in merged:
            merged[data.id].params += data.params
            merged[data.id].losses += data.losses
        else:
            merged[data.id] = data
    return list(merged.values())


def build_lcm(
    tasks: Sequence[TaskData],
    space: SearchSpace,
    task_space: SearchSpace | None = None,
    latent: int = LCMSettings.latent,
    max_points: int | None = LCMSettings.max_points,
    log_output: bool = LCMSettings.log_output,
) -> LCM:
    """An unfitted LCM over the tasks' evaluations, each task's history capped.

    Parameters
    ----------
    tasks : sequence of TaskData
        The tasks, in model order (task ``i`` is the model's output ``i``).
    space, task_space : SearchSpace
        Parameter and task spaces, saved in the model's metadata.
    latent : int
        Number of latent functions ``Q``.
    max_points : int, optional
        Cap of the whole training set; each task keeps at most ``max_points // len(tasks)``
        points (at least 2) chosen by :func:`subsample`. ``None``: no cap.
    log_output : bool
        Model ``log(loss)``.
    """
    cap = max(2, max_points // len(tasks)) if max_points else None
    X, index, y = stack_tasks(tasks, space, cap)
    info = {
        "space": space.to_dict(),
        "task_space": task_space.to_dict() if task_space is not None else None,
        "tasks": [{"id": t.id, "task": t.task} for t in tasks],
        "best": [{"params": t.best()[0], "loss": t.best()[1]} for t in tasks],
    }
    return LCM(X, index, y, len(tasks), latent, log_output=log_output, info=info)


def stack_tasks(
    tasks: Sequence[TaskData], space: SearchSpace, cap: int | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The tasks' successful evaluations as one training set: encoded configurations, the
    position of each one's task in ``tasks``, losses.

    Parameters
    ----------
    tasks : sequence of TaskData
        The tasks, in model order.
    space : SearchSpace
        Parameter space (encoding).
    cap : int, optional
        At most this many points per task, chosen by :func:`subsample`. ``None``: all.

    Raises
    ------
    ValueError
        When no task has a successful evaluation.
    """
    if not any(t.losses for t in tasks):
        raise ValueError("no successful evaluations to fit a model on")
    Xs, ts, ys = [], [], []
    for i, t in enumerate(tasks):
        if not t.losses:
            continue
        X = space.encode_many(t.params)
        y = np.asarray(t.losses, dtype=float)
        idx = subsample(X, y, cap) if cap else np.arange(len(y))
        Xs.append(X[idx])
        ys.append(y[idx])
        ts.append(np.full(len(idx), i))
    return np.vstack(Xs), np.concatenate(ts), np.concatenate(ys)
