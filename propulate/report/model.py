"""What the report reads from a fitted LCM: task correlations and predictions.

The model file is loaded with the model's own loader (:meth:`propulate.models.lcm.LCM.load`)
and asked for its task correlations and predictions, so the report shows exactly what the model
computes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from propulate.models.joint_gp import JointGP
    from propulate.models.lcm import LCM

#: What loading or querying a model file that is missing, foreign or incomplete raises.
_UNREADABLE = (OSError, json.JSONDecodeError, KeyError, ValueError, TypeError, IndexError)


def load_model(model_file: str | Path) -> LCM | JointGP | None:
    """The model saved in ``model_file`` (an LCM, or the joint model of MLA and of transfer),
    or None when it is missing or not a model file."""
    from propulate.models import model_file as files
    from propulate.models.joint_gp import KIND, JointGP
    from propulate.models.lcm import LCM

    try:
        data = files.read(model_file)
        return JointGP.from_dict(data) if data.get("model") == KIND else LCM.from_dict(data)
    except _UNREADABLE:
        return None


def task_ids(model: LCM) -> list[str]:
    """The model's task ids in output order (from ``info.tasks``; ``"0", "1", ...`` without)."""
    specs = model.info.get("tasks") or []
    ids = [str(t["id"]) if isinstance(t, Mapping) and "id" in t else str(t) for t in specs]
    return ids if len(ids) == model.n_tasks else [str(i) for i in range(model.n_tasks)]


def task_correlation(model_file: str | Path) -> tuple[np.ndarray, list[str]] | None:
    """The model's correlation between its tasks (:meth:`LCM.task_correlation`), with task ids.

    Parameters
    ----------
    model_file : path
        A model file of ``fit-lcm`` or ``mla``.

    Returns
    -------
    (ndarray, list of str) or None
        The ``(tasks, tasks)`` correlation matrix and the task ids, or None when the file is
        not a readable LCM model.
    """
    model = load_model(model_file)
    if model is None or not hasattr(model, "task_correlation"):  # the joint model has none
        return None
    return np.asarray(model.task_correlation(), dtype=float), task_ids(model)


def model_predictions(
    model_file: str | Path, configs: Sequence[Mapping[str, Any]], task_id: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The LCM's predicted loss of ``configs`` on task ``task_id``, with a one-sigma band.

    Parameters
    ----------
    model_file : path
        An LCM model file whose ``info`` holds the space and the task ids (``fit-lcm``, or the
        extended model ``transfer tla2`` writes).
    configs : sequence of mapping
        Parameter configurations.
    task_id : str
        The task to predict for.

    Returns
    -------
    (mean, low, high) or None
        Arrays in loss units (``exp`` of the log-scale prediction for a ``log_output`` model);
        None when the model or the task is not available.
    """
    from propulate.space import SearchSpace

    model = load_model(model_file)
    if model is None:
        return None
    try:
        space = SearchSpace.from_dict(model.info["space"])
        xs = space.encode_many([space.active(c) for c in configs])
        mean, var = model.predict(xs, task_ids(model).index(task_id))
    except _UNREADABLE:
        return None
    std = np.sqrt(var)
    if model.log_output:
        return np.exp(mean), np.exp(mean - std), np.exp(mean + std)
    return mean, mean - std, mean + std
