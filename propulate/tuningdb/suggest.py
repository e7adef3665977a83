"""Ask the tuning database which configuration to run a task with.

:func:`suggest` answers from ``tuning.sqlite`` alone, without MPI and without GPy: a tuned task
gets its stored best configuration (``source: measured``) and why it was chosen (least tuning
loss, or the paired re-measurement's verdict), an unseen one TLA1's prediction from the
campaign's model (``source: tla1``) with the prediction's uncertainty: on the joint model over
task values and parameters when the database holds one (``model: joint``, the campaign had
several training tasks; :func:`propulate.models.joint_transfer.joint_tla1`), else on the LCM.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from propulate.tuningdb.store import TuningDB

#: The metadata key of the joint model over task values and parameters that ``suggest``
#: predicts unseen tasks with (stored by :func:`propulate.tuningdb.ingest.fit_model_meta`).
JOINT_META = "joint_model"


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
    task: Mapping[str, Any] | str | None = None,
    extrapolate: bool = False,
    explain: bool = False,
    preference: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The configuration to run ``task`` with, from a campaign's tuning database.

    Parameters
    ----------
    campaign : path
        The campaign's results directory (holding ``tuning.sqlite``) or the database file. A
        campaign without tasks has no database: its directory's runs answer instead
        (:func:`propulate.tuningdb.suggest_runs.suggest_from_runs`).
    task : mapping or str, optional
        The task's values, as a mapping or as ``"m=1234,n=567"``; may be left out when the
        database holds a single task (or the campaign has none).
    extrapolate : bool
        Predict for a task outside the task space instead of refusing it.
    explain : bool
        Add ``explain``: which parameters drive the model's prediction for the task, by their
        Sobol indices (:func:`propulate.tuningdb.explain.explain`).
    preference : mapping, optional
        For a task tuned for several objectives: the keyword arguments of
        :func:`propulate.tuningdb.pareto_set.pick` (``prefer``, ``weights``, ``upper``,
        ``lower``); the answer is then that point of the task's Pareto set. A tuned task with
        a Pareto set always gets ``pareto_size``, ``objectives`` (the point's values) and
        ``pick`` (how the point was chosen, in words), with or without a preference.

    Returns
    -------
    dict
        ``task``, ``params``, ``loss`` and ``source``. For ``source == "measured"``: also
        ``why`` (how the configuration was chosen, in words), ``loss_std`` (over
        ``repeats``), ``repeats``, ``method``, ``evaluations``, ``version``, ``created`` and
        ``fingerprint_hash``, and ``paired`` when a paired re-measurement chose or confirmed
        the configuration (:func:`propulate.remeasure.verdict.verdict`). ``loss`` always means
        the campaign's loss: with several objectives, their weighted sum under the campaign's
        weights, else the first objective (signed for minimisation); ``objectives`` has each
        objective in its own sign. For ``source == "tla1"``: ``loss`` is the model's
        expected loss with the band ``loss_low`` / ``loss_high`` calibrated on the training
        tasks (:func:`propulate.tuningdb.predictor.band_calibration`), and
        ``params_std`` the predictive standard deviation per parameter as a fraction of its
        range (on the joint model, ``model: joint``, the spread of the optima of posterior
        draws); ``extrapolated`` says whether the task lies outside the task space.

    Raises
    ------
    FileNotFoundError
        When the campaign has no database (and no runs).
    ValueError
        For a malformed task, a task outside the space (without ``extrapolate``), an unseen
        task when the database holds no model, or no task given when the database holds
        several.
    """
    from propulate.space import SearchSpace

    if task is None and not _database(campaign).is_file():
        from propulate.tuningdb.suggest_runs import suggest_from_runs

        if preference and any(preference.values()):
            raise ValueError("--prefer, --weights, --max and --min need a tuning database")
        return suggest_from_runs(campaign)
    if isinstance(task, str):
        task = parse_task(task)
    with TuningDB(campaign, readonly=True) as db, db.snapshot():
        spec = db.get_meta("campaign")
        if spec is None:
            raise ValueError(f"{db.path}: the database holds no campaign yet")
        if task is None:
            task = _only_task(db)
        if not spec.get("task_space"):
            raise ValueError(f"{db.path}: the campaign has no task space")
        task_space = SearchSpace(spec["task_space"])
        values = check_task(task, task_space, extrapolate, "; pass --extrapolate to predict anyway")
        row = db.current_row(values)
        predictor, posterior = db.get_meta("tla1"), db.get_meta("lcm_posterior")
        joint = db.get_meta(JOINT_META) if row is None else None
        seed = int(predictor["seed"]) if predictor is not None else 0
        stored = db.get_meta("lcm_sensitivity") if explain else None
        pareto = db.pareto_of(row) if row is not None else None
        evidence = db.evidence_of(row) if row is not None else None
        if row is not None:
            answer = {
                "task": values,
                "params": row.params,
                "loss": row.loss,
                "source": "measured",
                "why": _why(row, evidence),
                "loss_std": row.loss_std,
                "repeats": row.repeats,
                "method": row.method,
                "evaluations": row.evaluations,
                "version": row.version,
                "created": row.created,
                "fingerprint_hash": row.fingerprint_hash,
            }
            if evidence is not None:
                answer["paired"] = _paired_summary(evidence)
    wanted = {k: v for k, v in (preference or {}).items() if v}
    if wanted and pareto is None:
        raise ValueError(
            f"task {values} has no Pareto set (tuned for one objective, or not tuned): "
            "--prefer, --weights, --max and --min choose among several objectives' optima"
        )
    if row is not None and pareto is not None:
        _pareto_answer(answer, pareto, wanted, spec.get("objectives"))
    if row is not None:
        return _explained(answer, explain, stored, posterior, spec, task_space, values)
    if joint is not None:
        return _explained(
            _joint_answer(joint, spec, task_space, values, seed),
            explain,
            stored,
            posterior,
            spec,
            task_space,
            values,
        )
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


def _joint_answer(
    joint: Mapping[str, Any],
    spec: Mapping[str, Any],
    task_space: Any,
    values: Mapping[str, Any],
    seed: int,
) -> dict[str, Any]:
    """The answer for an unseen task from the stored joint model: TLA1's prediction at the
    task's values (:func:`propulate.transfer.joint_posterior.tla1_prediction`, as ``transfer tla1``
    computes it, :func:`propulate.models.joint_transfer.joint_tla1`) with the posterior's loss
    band."""
    from propulate.space import SearchSpace
    from propulate.transfer.joint_posterior import tla1_prediction

    space = SearchSpace(spec["parameters"], spec.get("constraint"))
    optima = [b["params"] for b in joint["info"].get("best") or [] if b and b.get("params")]
    params, std, band = tla1_prediction(joint, space, task_space, values, seed, optima)
    return {
        "task": values,
        "params": params,
        **band,
        "source": "tla1",
        "model": "joint",
        "params_std": std,
        "extrapolated": not task_space.in_bounds(values),
    }


def _database(campaign: str | Path) -> Path:
    from propulate.tuningdb.store import DB_FILE

    path = Path(campaign)
    return path / DB_FILE if path.is_dir() else path


def _only_task(db: TuningDB) -> dict[str, Any]:
    """The task of a database holding a single one (``ValueError`` naming them otherwise)."""
    rows = db.current()
    if len(rows) == 1:
        return dict(rows[0].task)
    tasks = "; ".join(",".join(f"{k}={v}" for k, v in r.task.items()) for r in rows[:5])
    more = f" (and {len(rows) - 5} more)" if len(rows) > 5 else ""
    raise ValueError(
        f"{db.path} holds {len(rows)} tasks: give --task (e.g. {tasks or 'm=1,n=2'}{more})"
    )


def _why(row: Any, evidence: Mapping[str, Any] | None) -> str:
    """How the stored row was chosen, in words."""
    from propulate.remeasure.verdict import explain

    if evidence is not None:
        return explain(evidence)
    if row.reason == "revalidated":
        return f"re-measured on this machine after drift ({row.method}, {row.algorithm})"
    if row.reason == "retuned":
        return f"re-tuned with {row.method} after the machine changed"
    return f"least tuning loss over the campaign's runs ({row.method}, {row.algorithm})"


def _paired_summary(evidence: Mapping[str, Any]) -> dict[str, Any]:
    """What ``suggest`` shows of a stored paired verdict."""
    keys = ("rounds", "winner", "chosen", "overruled", "speedup", "low", "high", "speedups")
    return {k: evidence[k] for k in keys if k in evidence}


def _pareto_answer(
    answer: dict[str, Any], pareto: Mapping[str, Any], wanted: Any, campaign: Any = None
) -> None:
    """Answer with the Pareto point the preference picks; without one, the stored row's
    configuration (least in the campaign's loss). ``loss`` is the campaign's loss of the point
    either way: the weighted sum under the campaign's weights (``campaign``, its declared
    objectives) when it has them, else the first objective signed for minimisation."""
    from propulate.runs.declared_objectives import Objectives
    from propulate.tuningdb.pareto_set import pick

    declared = Objectives.parse(pareto["objectives"])
    scalar = declared
    if campaign is not None:
        own = Objectives.parse(campaign)
        if own.names == declared.names:
            scalar = own
    answer["pareto_size"] = len(pareto["points"])
    if not wanted:
        same = [p for p in pareto["points"] if p["params"] == answer["params"]]
        answer["objectives"] = same[0]["objectives"] if same else None
        answer["pick"] = "the stored configuration: " + _loss_words(scalar)
        return
    point, how = pick(dict(pareto), **wanted)
    if point["params"] != answer["params"]:  # the stored repeats measured another config
        answer.update(loss_std=None, repeats=[])
    answer.update(
        params=point["params"],
        loss=scalar.loss_of(point["objectives"]),
        objectives=point["objectives"],
        pick=how,
    )


def _loss_words(objectives: Any) -> str:
    """What the campaign's loss of several objectives is, in words."""
    if objectives.weights is not None:
        return (
            "least weighted sum "
            + (objectives.weights_text() or "")
            + " (the campaign's weights, natural units, signed for minimisation)"
        )
    name, direction = objectives.names[0], objectives.directions[0]
    return f"best {name} ({direction}), the campaign's first objective"


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
