"""A run's summary (``DIR/summary.json``): built from its records by one function for every
method, written and read in one place.

Every method (the island model, random search, Optuna, MLA, TLA1/TLA2) writes it through
:func:`write_summary` and every consumer (the report, the status command, the tuning database)
reads it through :func:`read_summary`; :func:`summarize` derives it from the records, so counts,
failures (:func:`propulate.runs.status.is_failure`) and the best mean the same everywhere.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from propulate.runs.declared_objectives import Objectives
from propulate.runs.files import read_json, write_json
from propulate.runs.log import Record, clean_mapping, iter_records
from propulate.runs.status import PRUNED, has_loss, is_failure

SUMMARY_FILE = "summary.json"


@dataclass
class RunSummary:
    """What a finished (or stopped) run reports.

    Attributes
    ----------
    task : str or None
        Task id (``None`` for an objective without tasks).
    run : str
        Run id, e.g. ``"seed1"``.
    method : str
        A method of :data:`propulate.methods.METHODS` (``propulate``, ``random``, ``optuna``,
        ``mla``, ``tla1``, ``tla2``, ...).
    seed : int or None
        The run's seed.
    parameters : list of str
        The parameter names of the run's space, in the space's order.
    best_params : dict or None
        The best configuration found (``None`` when no evaluation gave a loss).
    best_loss : float or None
        Its loss.
    evaluations : int
        Evaluations recorded over all sessions of the run (failed ones included).
    failures : int
        Failed evaluations among them (:func:`propulate.runs.status.is_failure`: not those the
        run's own stop interrupted, nor pruned ones).
    pruned : int
        Evaluations a pruner stopped early (status ``pruned``: neither failures nor losses).
    wall_time : float
        Seconds from the first evaluation's start to the last one's end, over all sessions.
    evaluations_per_second : float
        ``evaluations / wall_time`` (0 when ``wall_time`` is 0).
    ranks : int
        MPI ranks of the last session.
    stop_reason : str or None
        Why the last session stopped (``budget``, ``time limit``, ``signal``, ...).
    machine : dict or None
        Fingerprint of the machine the run's last session measured on (CPU model, cores,
        BLAS and MPI libraries, hostname pattern); filled in by :func:`write_summary`.
    objectives : dict or None
        The declared objectives, name to ``"min"`` or ``"max"`` (``None``: one loss).
    pareto : list of dict or None
        With declared objectives: the Pareto set, every successful evaluation no other one
        dominates, as ``{"params": ..., "objectives": {name: value}}``, ordered by the first
        objective (best first). ``best_params``/``best_loss`` are then the best by the first
        objective.
    bred : dict or None
        For a run of ``--propagator auto``: how many of the records each of its members bred
        (their state ``{"auto": name}``), e.g. ``{"probe": 79, "ga": 1921}``: the landscape
        probe, a race's switch and a polish show there (``None``: no such records).
    """

    task: str | None
    run: str
    method: str
    seed: int | None = None
    parameters: list[str] = field(default_factory=list)
    best_params: dict[str, Any] | None = None
    best_loss: float | None = None
    evaluations: int = 0
    failures: int = 0
    pruned: int = 0
    wall_time: float = 0.0
    evaluations_per_second: float = 0.0
    ranks: int = 1
    stop_reason: str | None = None
    machine: dict[str, Any] | None = None
    objectives: dict[str, str] | None = None
    pareto: list[dict[str, Any]] | None = None
    bred: dict[str, int] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The summary as JSON-ready data (``objectives`` and ``pareto`` only when declared,
        ``bred`` only for a run of ``--propagator auto``)."""
        data = asdict(self)
        if self.objectives is None:
            del data["objectives"], data["pareto"]
        if self.bred is None:
            del data["bred"]
        return data

    def json_line(self, *names: str) -> str:
        """One JSON line of the named fields, in that order (what the CLI prints per run)."""
        return json.dumps({name: getattr(self, name) for name in names})

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunSummary:
        """Read a summary written by :meth:`to_dict` (unknown keys are ignored)."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


def record_loss(record: Record) -> float | None:
    """The loss of a record that has one (status ``ok``, a finite number), else ``None``."""
    loss = record.get("loss")
    if not has_loss(record.get("status", "ok")) or isinstance(loss, bool):
        return None
    if not isinstance(loss, int | float) or loss - loss != 0:
        return None
    return float(loss)


def summarize(
    records: Iterable[Record],
    *,
    task: str | None = None,
    run: str | None = None,
    method: str | None = None,
    seed: int | None = None,
    parameters: list[str] | None = None,
    ranks: int = 1,
    stop_reason: str | None = None,
    objectives: str | Mapping[str, str] | Objectives | None = None,
) -> RunSummary:
    """The summary of a run from all its records (every session), in one pass.

    Parameters
    ----------
    records : iterable of Record
        The run's records (e.g. :func:`propulate.runs.log.iter_records` of its directory).
    task, run, method : str, optional
        The run's identity; each one not given is the first value the records hold.
    seed : int, optional
        The run's seed.
    parameters : list of str, optional
        The space's parameter names in order (default: the records' names, first seen first).
    ranks : int
        MPI ranks of the last session.
    stop_reason : str, optional
        Why the last session stopped.
    objectives : str or mapping, optional
        The declared objectives (:mod:`propulate.runs.declared_objectives`): the summary then holds
        the Pareto set of the records' objective values.

    Returns
    -------
    RunSummary
        Counts over all records; the best is the record of lowest loss (the first one read on
        ties); ``wall_time`` spans the first start to the last end.
    """
    count = failures = pruned = 0
    best: Record | None = None
    best_loss = 0.0
    first = last = None
    names: dict[str, None] = {}
    found: dict[str, Any] = {}
    declared = Objectives.maybe(objectives)
    front: list[Record] = []
    bred: dict[str, int] = {}
    for rec in records:
        count += 1
        state = rec.get("state")
        if isinstance(state, dict) and isinstance(who := state.get("auto"), str):
            bred[who] = bred.get(who, 0) + 1
        failures += is_failure(rec.get("status"))
        pruned += rec.get("status") == PRUNED
        loss = record_loss(rec)
        if loss is not None and (best is None or loss < best_loss):
            best, best_loss = rec, loss
        if declared is not None and loss is not None and isinstance(rec.get("objectives"), dict):
            front.append(rec)
        try:
            start = float(rec["start"])
            end = start + float(rec["seconds"])
        except (KeyError, TypeError, ValueError):
            pass
        else:
            first = start if first is None else min(first, start)
            last = end if last is None else max(last, end)
        if parameters is None:
            names.update(dict.fromkeys(rec["params"]))
        for key in ("task", "run", "method"):
            if key not in found and rec.get(key) is not None:
                found[key] = rec[key]
    span = 0.0 if first is None or last is None else max(last - first, 0.0)
    task = task if task is not None else found.get("task")
    return RunSummary(
        task=None if task is None else str(task),
        run=str(run if run is not None else found.get("run", "")),
        method=str(method if method is not None else found.get("method", "")),
        seed=seed,
        parameters=list(parameters) if parameters is not None else list(names),
        best_params=clean_mapping(best["params"]) if best is not None else None,
        best_loss=best_loss if best is not None else None,
        evaluations=count,
        failures=failures,
        pruned=pruned,
        wall_time=span,
        evaluations_per_second=count / span if span > 0 else 0.0,
        ranks=ranks,
        stop_reason=stop_reason,
        objectives=None if declared is None else declared.as_dict(),
        pareto=None if declared is None else pareto_set(front, declared),
        bred=bred or None,
    )


def pareto_set(records: list[Record], objectives: Objectives) -> list[dict[str, Any]]:
    """The records no other one dominates, as ``{"params", "objectives"}``, ordered by the
    first objective (records missing one of the objectives are left out)."""
    from propulate.runs.dominance import pareto_mask

    names = objectives.names
    usable = [r for r in records if all(n in r["objectives"] for n in names)]
    if not usable:
        return []
    points = [objectives.oriented(r["objectives"]) for r in usable]
    mask = pareto_mask(points)
    keep = sorted((p, i) for i, p in enumerate(points) if mask[i])
    return [
        {
            "params": clean_mapping(usable[i]["params"]),
            "objectives": {n: usable[i]["objectives"][n] for n in names},
        }
        for _, i in keep
    ]


def summarize_directory(directory: str | Path, **identity: Any) -> RunSummary:
    """:func:`summarize` over every record of a run directory."""
    return summarize(iter_records(directory), **identity)


def write_summary(directory: str | Path, summary: RunSummary) -> Path:
    """Write ``DIR/summary.json`` atomically (a reader never sees half a file).

    The summary is written by the process that ran the evaluations, so it records this
    machine's fingerprint (``machine``) unless the summary names one: the tuning database
    attributes each result to the machine that measured it.
    """
    if summary.machine is None:
        from propulate.runs.fingerprint import machine_fingerprint

        summary.machine = machine_fingerprint()
    return write_json(Path(directory) / SUMMARY_FILE, summary.to_dict())


def read_summary(directory: str | Path) -> RunSummary | None:
    """The summary of a run directory, or ``None`` when it has none (yet) or it is unreadable
    (not JSON, or missing required fields)."""
    data = read_json(Path(directory) / SUMMARY_FILE)
    if data is None:
        return None
    try:
        return RunSummary.from_dict(data)
    except TypeError:
        return None


@dataclass
class Tally:
    """Counts and time span of a run's records (no best, no pandas).

    Attributes
    ----------
    evaluations : int
        Records (failed ones included).
    failures : int
        Failed records (:func:`propulate.runs.status.is_failure`).
    first_start : float or None
        Earliest start (Unix time, seconds); ``None`` without records.
    last_end : float or None
        Latest ``start + seconds``; ``None`` without records.
    """

    evaluations: int = 0
    failures: int = 0
    first_start: float | None = None
    last_end: float | None = None

    @property
    def span(self) -> float:
        """Seconds from the first start to the last end (0 without records)."""
        if self.first_start is None or self.last_end is None:
            return 0.0
        return max(self.last_end - self.first_start, 0.0)


def tally(paths: str | Path | Iterable[str | Path]) -> Tally:
    """Count the records of one or more run directories or log files."""
    out = Tally()
    for rec in iter_records(paths):
        out.evaluations += 1
        out.failures += is_failure(rec.get("status"))
        try:
            start, end = float(rec["start"]), float(rec["start"]) + float(rec["seconds"])
        except (KeyError, TypeError, ValueError):
            continue
        out.first_start = start if out.first_start is None else min(out.first_start, start)
        out.last_end = end if out.last_end is None else max(out.last_end, end)
    return out
