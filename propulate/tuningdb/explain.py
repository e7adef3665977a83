"""Which parameters drive a task's prediction: ``suggest --explain``.

``tuningdb update --model`` stores, with the model, the Sobol indices of its posterior mean for
every training task (meta key ``lcm_sensitivity``; :mod:`propulate.sensitivity.model`). For a
training task ``suggest --explain`` answers from them; for any other task it computes the
indices of the model's prediction for that task (the LCM extended by the task without data, the
prediction :func:`propulate.tuningdb.predictor.expected_loss` makes) from the stored posterior,
with the same sample size and seed, in numpy and SALib (no GPy, no MPI); so it does for a
training task of a database filled before the indices were stored.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from propulate.space import SearchSpace

#: The meta key and format of the stored indices.
META_KEY = "lcm_sensitivity"
FORMAT = "propulate-lcm-sensitivity/1"
#: The ``basis`` of an explanation: a training task's own posterior, or the prediction for
#: another task.
TRAINED = "training task"
PREDICTED = "predicted for a task the model was not trained on"
#: Total index below which the explanation says a parameter can be fixed.
NEGLIGIBLE = 0.05


def sensitivity_meta(model: Any) -> dict[str, Any] | None:
    """The indices of every training task of ``model`` as JSON data, or ``None`` when SALib
    is not installed or the model holds no parameter space."""
    try:
        import SALib  # noqa: F401 - the optional extra
    except ImportError:
        return None
    from dataclasses import asdict

    from propulate.sensitivity.model import model_sensitivity
    from propulate.settings import SensitivitySettings

    if not model.info.get("space"):
        return None
    settings = SensitivitySettings()
    return {
        "format": FORMAT,
        "settings": asdict(settings),
        "tasks": [r.to_dict() for r in model_sensitivity(model, None, settings)],
    }


def summary_text(ranking: list[str], S1: Mapping[str, float], ST: Mapping[str, float]) -> str:
    """One sentence: the parameters by total index, and those that could be fixed."""
    parts = [f"{n} (total {ST[n]:.2f}, alone {S1[n]:.2f})" for n in ranking]
    text = "the prediction depends on " + ", then ".join(parts)
    fixable = [n for n in ranking if ST[n] < NEGLIGIBLE]
    if fixable:
        text += f"; could be fixed (total index < {NEGLIGIBLE}): {', '.join(fixable)}"
    return text


def _answer(data: Mapping[str, Any], basis: str) -> dict[str, Any]:
    """The explanation of one task's stored or computed indices (``TaskSensitivity.to_dict``)."""
    ind = data["indices"]
    return {
        "basis": basis,
        "output": data["output"],
        "drivers": list(data["ranking"]),
        "S1": ind["S1"],
        "S1_conf": ind["S1_conf"],
        "ST": ind["ST"],
        "ST_conf": ind["ST_conf"],
        "samples": ind["samples"],
        "text": summary_text(list(data["ranking"]), ind["S1"], ind["ST"]),
    }


def explain(
    stored: Mapping[str, Any] | None,
    posterior: Mapping[str, Any] | None,
    space: SearchSpace,
    task_space: SearchSpace,
    task: Mapping[str, Any],
) -> dict[str, Any]:
    """Which parameters drive the model's prediction for ``task``.

    Parameters
    ----------
    stored : mapping or None
        The database's ``lcm_sensitivity`` meta value.
    posterior : mapping or None
        The database's ``lcm_posterior`` meta value (:func:`~propulate.tuningdb.predictor.posterior_data`).
    space, task_space : SearchSpace
        The campaign's spaces.
    task : mapping
        The task's values (cast to the task space's types).

    Returns
    -------
    dict
        ``basis`` (``"training task"`` or ``"predicted for a task the model was not trained
        on"``), ``output`` (``loss`` or ``log(loss)``), ``drivers`` (parameters by decreasing
        total index), ``S1``, ``S1_conf``, ``ST``, ``ST_conf``, ``samples`` and a one-line
        ``text``.

    Raises
    ------
    ValueError
        When the database holds no model, or SALib is missing for an unseen task.
    """
    from propulate.settings import SensitivitySettings

    if posterior is None:
        raise ValueError("the database holds no model to explain the prediction with")
    key = task_space.key(task)
    if stored is not None and stored.get("format") == FORMAT:
        for data in stored["tasks"]:
            values = data.get("task")
            if values and set(values) == set(task_space.names) and task_space.key(values) == key:
                return _answer(data, TRAINED)
    try:
        import SALib  # noqa: F401 - the optional extra
    except ImportError:
        raise ValueError(
            "explaining a task the model was not trained on needs SALib "
            "(pip install 'propulate[sensitivity]')"
        ) from None
    from propulate.sensitivity.model import TaskSensitivity
    from propulate.sensitivity.sobol import sobol_indices
    from propulate.tuningdb.predictor import task_mean

    given = dict(stored["settings"]) if stored is not None else {}
    known = SensitivitySettings.__dataclass_fields__
    settings = SensitivitySettings(**{k: v for k, v in given.items() if k in known})
    f, trained = task_mean(posterior, task_space, task)
    indices = sobol_indices(f, space, settings)
    output = "log(loss)" if posterior.get("log_output") else "loss"
    result = TaskSensitivity("", dict(task), trained, output, indices)
    return _answer(result.to_dict(), TRAINED if trained else PREDICTED)
