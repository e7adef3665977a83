"""Fill the tuning database from a campaign's run directories.

Every run directory (evolve, MLA, TLA1, TLA2) has a ``summary.json`` (read with
:func:`propulate.runs.summary.read_summary`) and a ``task.json``. :func:`update` takes the best run
per task, with every measured loss of its best configuration as repeats, and offers it to the
database (:meth:`propulate.tuningdb.store.TuningDB.offer`): a task gains a new version only
when the result improves on its current row or the current row was measured on another
machine. All of one update is one transaction.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from propulate.methods import stage_of
from propulate.runs.fingerprint import config_hash, digest, machine_fingerprint
from propulate.runs.summary import SUMMARY_FILE, read_summary
from propulate.space import SearchSpace
from propulate.tuningdb.store import TuningDB, TuningRow
from propulate.tuningdb.suggest import JOINT_META


def package_version() -> str:
    """``propulate.__version__``."""
    from propulate import __version__

    return __version__


def loss_stats(repeats: list[float]) -> tuple[float | None, float | None]:
    """Mean and sample standard deviation (``None`` with fewer than two) of measured losses."""
    if not repeats:
        return None, None
    std = statistics.stdev(repeats) if len(repeats) > 1 else None
    return statistics.fmean(repeats), std


def measurements(
    directory: str | Path, space: SearchSpace, params: Mapping[str, Any]
) -> list[float]:
    """Every measured loss of ``params`` in a run directory: a command objective's repeated
    runs (the record's ``details.losses``) where it has them, else each successful
    evaluation's loss."""
    from propulate.runs.log import iter_records
    from propulate.runs.summary import record_loss

    out: list[float] = []
    for rec in iter_records(directory):
        if record_loss(rec) is None:
            continue
        try:
            if space.canonical(rec["params"]) != params:
                continue
        except (KeyError, TypeError, ValueError):
            continue
        runs = (rec.get("details") or {}).get("losses")
        if isinstance(runs, list) and runs and all(isinstance(v, int | float) for v in runs):
            out += [float(v) for v in runs]
        else:
            out.append(float(rec["loss"]))
    return out


def read_best(directory: str | Path, space: SearchSpace) -> TuningRow | None:
    """A run directory's best configuration as a row without provenance, or ``None`` when the
    run has no summary, no task or no successful evaluation.

    The row's loss is the run's best loss (as the objective reported it, e.g. the median of a
    command's repeated runs); its repeats are every measurement of the configuration.
    """
    from propulate.user_objective import read_task

    directory = Path(directory)
    summary = read_summary(directory)
    if summary is None or summary.best_params is None or summary.best_loss is None:
        return None
    if not math.isfinite(summary.best_loss) or not (directory / "task.json").is_file():
        return None
    spec = read_task(directory / "task.json")
    best = space.canonical(summary.best_params)
    repeats = measurements(directory, space, best) or [float(summary.best_loss)]
    return TuningRow(
        task_id=summary.task or str(spec["id"]),
        task=dict(spec["task"]),
        params=best,
        loss=float(summary.best_loss),
        loss_std=loss_stats(repeats)[1],
        repeats=repeats,
        method=stage_of(summary.method) or summary.method,
        algorithm=summary.method,
        evaluations=int(summary.evaluations),
        source=str(directory),
        fingerprint=dict(summary.machine) if summary.machine else {},
        pareto={"objectives": summary.objectives, "points": summary.pareto}
        if summary.objectives and summary.pareto
        else None,
    )


def run_directories(paths: Iterable[str | Path]) -> list[Path]:
    """Run directories (with a ``summary.json``), a folder of them (MLA's output) expanded."""
    out: list[Path] = []
    for path in map(Path, paths):
        if (path / SUMMARY_FILE).is_file() or not path.is_dir():
            out.append(path)
        else:
            out += sorted(p for p in path.iterdir() if (p / SUMMARY_FILE).is_file())
    return out


def best_per_task(directories: Iterable[str | Path], space: SearchSpace) -> list[TuningRow]:
    """The lowest-loss row per task over the run directories, folders of run directories
    included (ties: the first directory); with several objectives it holds the Pareto set of
    all the task's runs."""
    from propulate.tuningdb.pareto_set import merge

    best: dict[str, TuningRow] = {}
    for d in run_directories(directories):
        row = read_best(d, space)
        if row is None or row.loss is None:
            continue
        held = best.get(row.key)
        if held is None or held.loss is None or row.loss < held.loss:
            if held is not None:
                row.pareto = merge(row.pareto, held.pareto)
            best[row.key] = row
        else:
            held.pareto = merge(held.pareto, row.pareto)
    return list(best.values())


def store_campaign(db: TuningDB, campaign: Mapping[str, Any]) -> None:
    """Store the campaign's spaces (``name``, ``objective``, ``parameters``, ``constraint``,
    ``task_space``) and its declared ``objectives`` (with their weights) so that ``suggest``
    can answer from the database alone, its ``loss`` meaning what the campaign's does."""
    keys = ("name", "objective", "parameters", "constraint", "task_space", "objectives")
    db.set_meta("campaign", {k: campaign[k] for k in keys if campaign.get(k) is not None})


def fit_model_meta(
    db_path: str | Path,
    model_path: str | Path,
    space: SearchSpace,
    task_space: SearchSpace,
    seed: int = 0,
    transfer_model: str = "auto",
) -> dict[str, Any] | None:
    """The metadata that stores the campaign's LCM, TLA1's predictor fitted from it, the joint
    model over task values and parameters fitted on its training points (:data:`JOINT_META`,
    with several training tasks and ``transfer_model`` joint, as ``transfer tla1`` chooses) and
    the Sobol indices of its training tasks
    (:mod:`propulate.tuningdb.explain`), or ``None`` when the database holds this model file
    already (by content hash).

    Fitting takes seconds (GPy), so it runs before the update's transaction opens.
    """
    from propulate.models.lcm import LCM
    from propulate.tuningdb.predictor import fit_predictor, posterior_data

    text = Path(model_path).read_text()
    model_hash = digest(text)
    if Path(db_path).exists():
        with TuningDB(db_path) as db:
            if db.get_meta("lcm_hash") == model_hash:
                return None
    from propulate.tuningdb.explain import META_KEY, sensitivity_meta

    model = LCM.from_dict(json.loads(text))
    meta = {
        "lcm": model.to_dict(),
        "lcm_hash": model_hash,
        "lcm_posterior": posterior_data(model, task_space),
        "tla1": fit_predictor(model, space, task_space, seed),
    }
    meta[META_KEY] = sensitivity_meta(model)  # None without SALib: computed on request then
    # suggest's prediction for an unseen task: TLA1 on the joint model over task values and
    # parameters when the campaign transfers on it (TransferSettings.model joint), fitted here
    # as ``transfer tla1`` fits it; else on the LCM
    meta[JOINT_META] = None
    if transfer_model == "joint" and model.n_tasks > 1:
        from propulate.models.joint_transfer import as_joint
        from propulate.transfer.joint_posterior import JointPosterior

        joint = as_joint(model, space, task_space, seed).to_dict()
        # the band's calibration, computed once here instead of in every suggest
        joint["band"] = JointPosterior(joint).calibration()
        meta[JOINT_META] = joint
    return meta


def campaign_spaces(campaign: Mapping[str, Any]) -> tuple[SearchSpace, SearchSpace | None]:
    """Parameter space (with its constraint) and task space of a campaign spec."""
    space = SearchSpace(campaign["parameters"], campaign.get("constraint"))
    task_space = SearchSpace(campaign["task_space"]) if campaign.get("task_space") else None
    return space, task_space


def update(
    db_path: str | Path,
    campaign: Mapping[str, Any],
    runs: Iterable[str | Path],
    config: Mapping[str, Any] | str | Path | None = None,
    model: str | Path | None = None,
    seed: int = 0,
    reason: str = "tuned",
    fingerprint: Mapping[str, Any] | None = None,
    chash: str | None = None,
    measured_here: bool = False,
    paired: Iterable[str | Path] = (),
    transfer_model: str = "auto",
) -> dict[str, Any]:
    """Offer the best run of every task to the database, in one transaction.

    Parameters
    ----------
    db_path : path
        The database file (created if missing) or the campaign's results directory.
    campaign : mapping
        The campaign spec (``parameters``, ``task_space``, ``constraint``, ``objective``).
    runs : paths
        Run directories (each with ``summary.json`` and ``task.json``).
    config : mapping or path, optional
        The campaign config whose hash goes into the rows' provenance (default: ``campaign``).
    model : path, optional
        The campaign's LCM file; stored with TLA1's predictor for ``suggest``.
    seed : int
        The seed TLA1's predictor is fitted with (the campaign's transfer seed).
    reason : str
        The rows' ``reason`` (``tuned``, or ``retuned`` after drift).
    fingerprint : mapping, optional
        The machine of runs whose summary names none (default: :func:`machine_fingerprint`).
    chash : str, optional
        The config hash to record, instead of hashing ``config``.
    measured_here : bool
        The runs were measured by this process (re-tuning): record ``fingerprint`` for all of
        them, whatever their summaries say.
    paired : paths, optional
        Paired re-measurement files (:mod:`propulate.remeasure.paired`, one per task): where their
        rounds found another configuration faster than a task's best by tuning loss, that
        one is stored with the evidence (:mod:`propulate.tuningdb.paired_rows`).
    transfer_model : str
        The campaign's ``transfer.model``: with ``joint`` (and several training tasks)
        ``suggest`` predicts unseen tasks on the joint model, else on the LCM.

    Returns
    -------
    dict
        ``added``: task ids that gained a version, ``kept``: task ids whose current row stayed,
        ``model``: whether the model was (re)stored; with ``paired`` files also ``paired``: task
        ids whose row the paired rounds chose over the tuning's pick.
    """
    from propulate.tuningdb.paired_rows import apply_paired, read_comparisons

    space, task_space = campaign_spaces(campaign)
    comparisons = read_comparisons(paired)
    rows = [
        apply_paired(r, comparisons[r.task_id], space) if r.task_id in comparisons else r
        for r in best_per_task(runs, space)
    ]
    fp = dict(fingerprint if fingerprint is not None else machine_fingerprint())
    chash = chash or config_hash(config if config is not None else campaign)
    version = package_version()
    meta = None
    if model is not None and task_space is not None:
        meta = fit_model_meta(db_path, model, space, task_space, seed, transfer_model)
    added, kept = [], []
    with TuningDB(db_path) as db, db.transaction():
        store_campaign(db, campaign)
        for key, value in (meta or {}).items():
            db.set_meta(key, value)
        for row in rows:
            if task_space is not None:
                row.task = task_space.canonical(row.task)
            # the machine that measured the run (its summary says), else the one updating
            row.fingerprint = fp if measured_here or not row.fingerprint else row.fingerprint
            row.config_hash, row.package_version = chash, version
            row.reason = "paired" if row.reason == "paired" else reason
            (added if db.offer(row) else kept).append(row.task_id)
    out: dict[str, Any] = {"added": sorted(added), "kept": sorted(kept), "model": meta is not None}
    if comparisons:
        out["paired"] = sorted(r.task_id for r in rows if r.reason == "paired")
    return out
