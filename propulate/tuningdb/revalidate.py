"""Re-validation when the machine changes: re-measure, flag drift, re-tune with TLA2.

A row measured on another machine (its fingerprint differs from this one's: a new node type, a
BLAS or MPI upgrade) may no longer be the best configuration here. :func:`revalidate`
re-measures every such row's configuration a few times, records the drift ::

    drift = (new mean loss - stored loss) / |stored loss|

and stores the re-measurement as the task's next version (so the database's losses are this
machine's). A task whose ``|drift|`` exceeds the threshold (:data:`DRIFT_THRESHOLD` unless the
campaign sets ``revalidate.threshold``) is re-tuned with TLA2 from the campaign's model; the
TLA2 result becomes the next version when it beats the re-measured one.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from propulate.runs.fingerprint import differences, fingerprint_hash, machine_fingerprint
from propulate.settings import RevalidateSettings, TransferSettings
from propulate.tuningdb.ingest import campaign_spaces, loss_stats
from propulate.tuningdb.store import TuningDB, TuningRow, utc_now

#: Relative change of a configuration's loss above which it counts as drifted (0.2 = 20 %).
DRIFT_THRESHOLD = RevalidateSettings.threshold
#: Measurements of each stored configuration in a re-validation.
REPEATS = RevalidateSettings.repeats


def stale(db: TuningDB, fingerprint: Mapping[str, Any]) -> list[TuningRow]:
    """The current rows measured on a machine other than ``fingerprint``."""
    here = fingerprint_hash(fingerprint)
    return [row for row in db.current() if row.fingerprint_hash != here]


def drift_of(old: float | None, new: float | None) -> float | None:
    """Relative drift ``(new - old) / |old|`` (``None`` when either is missing or old is 0;
    infinite when the configuration no longer runs)."""
    if old is None or old == 0 or not math.isfinite(old):
        return None
    if new is None:
        return math.inf
    return (new - old) / abs(old)


def measure(
    loss: Callable[[dict[str, Any]], Any], params: dict[str, Any], repeats: int
) -> list[float]:
    """``repeats`` successful losses of ``params`` (failed evaluations are left out)."""
    from propulate.runs.outcome import evaluate

    out = []
    for _ in range(repeats):
        outcome = evaluate(loss, dict(params))
        if outcome.loss is not None:
            out.append(float(outcome.loss))
    return out


def revalidate(
    db_path: str | Path,
    objective: str | Mapping[str, Any] | None = None,
    repeats: int = REPEATS,
    threshold: float = DRIFT_THRESHOLD,
    fingerprint: Mapping[str, Any] | None = None,
    retune_dir: str | Path | None = None,
    budget: int = TransferSettings.tla2_budget,
    seed: int = TransferSettings.seed,
) -> dict[str, Any]:
    """Re-measure the rows measured on another machine; re-tune the drifted ones.

    Parameters
    ----------
    db_path : path
        The database file or the campaign's results directory.
    objective : str or mapping, optional
        The loss as ``module:function`` or a command objective's mapping (default: the
        campaign's, as stored in the database).
    repeats : int
        Measurements of each stored configuration.
    threshold : float
        Relative drift above which a task is re-tuned (0.2 = 20 %).
    fingerprint : mapping, optional
        This machine (default: :func:`machine_fingerprint`).
    retune_dir : path, optional
        Where TLA2 writes a run directory per drifted task (``DIR/<task id>/<date>``); without
        it drifted tasks are only flagged.
    budget, seed : int
        TLA2's evaluations per drifted task and its seed.

    Returns
    -------
    dict
        ``checked``: task ids re-measured, ``drifted``: those over the threshold,
        ``retuned``: drifted task ids whose TLA2 result became the current row.
    """
    from propulate.user_objective.loading import objective_from_config

    if repeats < 1:
        raise ValueError("revalidate: repeats must be >= 1")
    fp = dict(fingerprint if fingerprint is not None else machine_fingerprint())
    with TuningDB(db_path) as db:
        spec = db.get_meta("campaign") or {}
        rows = stale(db, fp)
    objective = objective or spec.get("objective")
    if rows and not objective:
        raise ValueError(f"{db_path}: no objective stored; pass one")
    checked, drifted = [], []
    for row in rows:
        losses = measure(objective_from_config(objective, row.task), row.params, repeats)
        new, std = loss_stats(losses)
        drift = drift_of(row.loss, new)
        flagged = drift is not None and abs(drift) > threshold
        again = TuningRow(
            task_id=row.task_id,
            task=row.task,
            params=row.params,
            loss=new,
            loss_std=std,
            repeats=losses,
            method=row.method,
            algorithm=row.algorithm,
            evaluations=row.evaluations,
            source=row.source,
            reason="revalidated",
            config_hash=row.config_hash,
            package_version=row.package_version,
            fingerprint=fp,
        )
        with TuningDB(db_path) as db, db.transaction():
            db.add_revalidation(
                row, new, losses, drift, threshold, flagged, differences(row.fingerprint, fp), fp
            )
            db.add(again)
        checked.append(row.task_id)
        if flagged:
            drifted.append(row)
    retuned = []
    if retune_dir is not None and drifted:
        retuned = retune(db_path, drifted, Path(retune_dir), objective, budget, seed, fp)
    return {"checked": checked, "drifted": [r.task_id for r in drifted], "retuned": retuned}


def retune(
    db_path: str | Path,
    rows: list[TuningRow],
    out: Path,
    objective: Any,
    budget: int,
    seed: int,
    fingerprint: Mapping[str, Any],
) -> list[str]:
    """TLA2 from the stored model on each row's task; its best is offered to the database
    (reason ``retuned``). Returns the task ids whose current row it became."""
    from propulate.models.lcm import LCM
    from propulate.models.transfer import run_tla2
    from propulate.tuningdb.ingest import update

    with TuningDB(db_path) as db:
        spec, model = db.get_meta("campaign"), db.get_meta("lcm")
    if model is None:
        raise ValueError(f"{db_path}: no model stored; cannot re-tune drifted tasks")
    space, task_space = campaign_spaces(spec)
    base = LCM.from_dict(model)
    if not isinstance(objective, str):  # a command objective's mapping: bind per task
        from propulate.user_objective.loading import objective_from_config

        spec_objective = objective

        def objective(params: dict[str, Any], task: dict[str, Any]) -> Any:
            return objective_from_config(spec_objective, task)(params)

    stamp = utc_now().replace(":", "")
    runs = []
    for row in rows:
        run = out / row.task_id / stamp
        settings = TransferSettings(tla2_budget=budget, seed=seed)
        run_tla2(base, space, task_space, row.task_id, dict(row.task), objective, run, settings)
        runs.append(run)
    result = update(
        db_path,
        spec,
        runs,
        reason="retuned",
        fingerprint=fingerprint,
        measured_here=True,
        chash=rows[0].config_hash,
    )
    (out / f"{stamp}.json").write_text(json.dumps(result, indent=1) + "\n")
    return result["added"]
