"""Ask the tuning database which configuration to run a task with.

:func:`suggest` answers from ``tuning.sqlite`` alone, without MPI and without GPy: a tuned task
gets its stored best configuration (``source: measured``), an unseen one TLA1's prediction from
the campaign's model (``source: tla1``) with the prediction's uncertainty.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from propulate.tuningdb.store import TuningDB


def parse_task(text: str) -> dict[str, str]:
    """``"m=1234,n=567"`` as ``{"m": "1234", "n": "567"}`` (values still text)."""
    task: dict[str, str] = {}
    for item in text.split(","):
        if not item.strip():
            continue
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise ValueError(f"task {text!r}: expected name=value pairs separated by commas")
        if name.strip() in task:
            raise ValueError(f"task {text!r}: {name.strip()!r} is given twice")
        task[name.strip()] = value.strip()
    if not task:
        raise ValueError("task: give name=value pairs, e.g. m=1234,n=567")
    return task


def _coerce(name: str, value: Any, kind: str) -> Any:
    if kind == "categorical":
        return str(value)
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"task value {name}={value!r} is not a number") from None
    if kind == "int":
        if not number.is_integer():
            raise ValueError(f"task value {name}={value!r} is not an integer")
        return int(number)
    return number


def check_task(
    task: Mapping[str, Any], task_space: Any, extrapolate: bool, hint: str = ""
) -> dict[str, Any]:
    """The task's values cast to the task space's types; a ``ValueError`` (one line) when a
    name is missing or unknown, or a value is outside the space and ``extrapolate`` is false
    (``hint`` is appended to that message)."""
    names = list(task_space.names)
    missing = [n for n in names if n not in task]
    unknown = [n for n in task if n not in names]
    if missing or unknown:
        raise ValueError(f"task must name exactly {names} (missing {missing}, unknown {unknown})")
    values = {n: _coerce(n, task[n], task_space[n].kind) for n in names}
    outside = [n for n in names if not task_space[n].contains(values[n])]
    if outside and not extrapolate:
        ranges = ", ".join(f"{n}={values[n]} not in {_describe(task_space[n])}" for n in outside)
        raise ValueError(f"task is outside the task space ({ranges}){hint}")
    return values


def _describe(dim: Any) -> str:
    if dim.kind == "categorical":
        return str(list(dim.choices))
    return f"[{dim.low}, {dim.high}]"


def suggest(
    campaign: str | Path,
    task: Mapping[str, Any] | str,
    extrapolate: bool = False,
    explain: bool = False,
    preference: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The configuration to run ``task`` with, from a campaign's tuning database.

    Parameters
    ----------
    campaign : path
        The campaign's results directory (holding ``tuning.sqlite``) or the database file.
    task : mapping or str
        The task's values, as a mapping or as ``"m=1234,n=567"``.
    extrapolate : bool
        Predict for a task outside the task space instead of refusing it.
    explain : bool
        Add ``explain``: which parameters drive the model's prediction for the task, by their
        Sobol indices (:func:`propulate.tuningdb.explain.explain`).
    preference : mapping, optional
        For a task tuned for several objectives: the keyword arguments of
        :func:`propulate.tuningdb.pareto.pick` (``prefer``, ``weights``, ``upper``,
        ``lower``); the answer is then that point of the task's Pareto set, with
        ``objectives`` (its values) and ``pick`` (the preference in words). A tuned task with
        a Pareto set always gets ``pareto_size``.

    Returns
    -------
    dict
        ``task``, ``params``, ``loss`` and ``source``. For ``source == "measured"``: also
        ``loss_std`` (over ``repeats``), ``repeats``, ``method``, ``evaluations``, ``version``,
        ``created`` and ``fingerprint_hash``. For ``source == "tla1"``: ``loss`` is the model's
        expected loss with ``loss_low`` / ``loss_high`` one standard deviation either side, and
        ``params_std`` the predictive standard deviation per parameter as a fraction of its
        range; ``extrapolated`` says whether the task lies outside the task space.

    Raises
    ------
    FileNotFoundError
        When the campaign has no database.
    ValueError
        For a malformed task, a task outside the space (without ``extrapolate``), or an unseen
        task when the database holds no model.
    """
    from propulate.space import SearchSpace

    if isinstance(task, str):
        task = parse_task(task)
    with TuningDB(campaign, readonly=True) as db, db.snapshot():
        spec = db.get_meta("campaign")
        if spec is None:
            raise ValueError(f"{db.path}: the database holds no campaign yet")
        if not spec.get("task_space"):
            raise ValueError(f"{db.path}: the campaign has no task space")
        task_space = SearchSpace(spec["task_space"])
        values = check_task(task, task_space, extrapolate, "; pass --extrapolate to predict anyway")
        row = db.current_row(values)
        predictor, posterior = db.get_meta("tla1"), db.get_meta("lcm_posterior")
        stored = db.get_meta("lcm_sensitivity") if explain else None
        pareto = db.pareto_of(row) if row is not None else None
        if row is not None:
            answer = {
                "task": values,
                "params": row.params,
                "loss": row.loss,
                "source": "measured",
                "loss_std": row.loss_std,
                "repeats": row.repeats,
                "method": row.method,
                "evaluations": row.evaluations,
                "version": row.version,
                "created": row.created,
                "fingerprint_hash": row.fingerprint_hash,
            }
    wanted = {k: v for k, v in (preference or {}).items() if v}
    if wanted and pareto is None:
        raise ValueError(
            f"task {values} has no Pareto set (tuned for one objective, or not tuned): "
            "--prefer, --weights, --max and --min choose among several objectives' optima"
        )
    if row is not None and pareto is not None:
        _pareto_answer(answer, pareto, wanted)
    if row is not None:
        return _explained(answer, explain, stored, posterior, spec, task_space, values)
    if predictor is None or posterior is None:
        raise ValueError(
            f"{db.path}: task {values} is not tuned and the database holds no "
            "model to predict it from"
        )
    from propulate.tuningdb.predictor import expected_loss, predict

    # only now the constraint: importing its module may take longer than the rest
    space = SearchSpace(spec["parameters"], spec.get("constraint"))
    params, std = predict(predictor, space, task_space, values)
    expected = expected_loss(posterior, space, task_space, values, params)
    answer = {
        "task": values,
        "params": params,
        **expected,
        "source": "tla1",
        "params_std": std,
        "extrapolated": not task_space.in_bounds(values),
    }
    return _explained(answer, explain, stored, posterior, spec, task_space, values, space)


def _pareto_answer(answer: dict[str, Any], pareto: Mapping[str, Any], wanted: Any) -> None:
    """Answer with the Pareto point the preference picks (the stored best without one)."""
    from propulate.runs.objectives import Objectives
    from propulate.tuningdb.pareto import pick

    answer["pareto_size"] = len(pareto["points"])
    answer["objectives"] = None
    if not wanted:
        same = [p for p in pareto["points"] if p["params"] == answer["params"]]
        answer["objectives"] = same[0]["objectives"] if same else None
        return
    point, how = pick(dict(pareto), **wanted)
    declared = Objectives.parse(pareto["objectives"])
    if point["params"] != answer["params"]:  # the stored repeats measured another config
        answer.update(loss_std=None, repeats=[])
    answer.update(
        params=point["params"],
        loss=declared.loss_of(point["objectives"]),
        objectives=point["objectives"],
        pick=how,
    )


def _explained(
    answer: dict[str, Any],
    explain: bool,
    stored: Mapping[str, Any] | None,
    posterior: Mapping[str, Any] | None,
    spec: Mapping[str, Any],
    task_space: Any,
    values: Mapping[str, Any],
    space: Any = None,
) -> dict[str, Any]:
    """``answer`` with its ``explain`` entry when asked for."""
    if not explain:
        return answer
    from propulate.space import SearchSpace
    from propulate.tuningdb.explain import explain as explain_task

    space = space if space is not None else SearchSpace(spec["parameters"])
    answer["explain"] = explain_task(stored, posterior, space, task_space, values)
    return answer
