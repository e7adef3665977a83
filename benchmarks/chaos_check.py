"""The invariants a campaign keeps whatever faults it met (issue 47), checked after a trial.

:func:`check_campaign` runs every check on a finished campaign's results folder and returns
one line per violation (an empty list: all hold). Each check is a function of its own, so a
test can break one invariant by hand and see that its check reports it:

- :func:`check_records`: every run's record lines are whole JSON records (only a last line
  cut short by a kill may be torn; the readers skip it);
- :func:`check_budgets`: the objective calls spent on each run are at most its budget plus one
  evaluation per rank (the one each rank may lose to a kill), and the run's records reach the
  budget;
- :func:`check_repeats`: no configuration is recorded twice in one run (no run of this
  campaign asks for repeats); configurations two ranks of one session bred and evaluated at
  the same moment are counted apart (the engine's documented limit, no fault's doing);
- :func:`check_summaries`: every ``summary.json`` describes all records of its run (count,
  failures, best loss);
- :func:`check_tuningdb`: the tuning database opens, passes SQLite's integrity check, holds
  exactly the versions published (one per task: the campaign updates it once; numbered 1..k
  without gaps), each current row is the best of its run, and no unpublished copy is left;
- :func:`check_status`: ``propulate status`` shows each run's record count and ``stopped``;
- :func:`check_report`: the report exists and is a whole HTML document;
- :func:`check_leases`: no lease (runs, campaign, tuning database) is left unreleased once
  the campaign ended (its owner is dead by then);
- :func:`check_evolve_logs`: each evolve job's log keeps the lines of every attempt (the
  ``prepare-run`` line of the first one, ``new``, and one per session of the run).
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

#: Relative tolerance when comparing losses written by different programs.
TOLERANCE = 1e-9


@dataclass
class Expected:
    """What the campaign was asked to do.

    Attributes
    ----------
    budgets : dict
        Run directory (relative to the campaign's results folder) to its budget in
        evaluations.
    ranks : dict
        Run directory to the MPI ranks (evaluating processes) of its job.
    training : list of str
        Training task ids.
    new : list of str
        New task ids.
    evolve_runs : list of str
        The evolve run directories (relative), whose logs :func:`check_evolve_logs` reads.
    """

    budgets: dict[str, int]
    ranks: dict[str, int]
    training: list[str]
    new: list[str]
    evolve_runs: list[str] = field(default_factory=list)


@dataclass
class Spent:
    """Objective calls per run directory, those beyond the budget, and the configurations
    ranks evaluated at the same moment (:func:`check_repeats`)."""

    calls: dict[str, int]
    beyond: dict[str, int]
    concurrent: list[str] = field(default_factory=list)

    @property
    def total_beyond(self) -> int:
        """Evaluations spent beyond the budget over all runs."""
        return sum(self.beyond.values())


def run_dirs(root: Path) -> list[Path]:
    """Every run directory under ``root`` (a directory holding ``evals/``), sorted."""
    return sorted(p.parent for p in root.rglob("evals") if p.is_dir())


def read_lines(run: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """A run's records, and one problem per line that is not a whole record.

    A last line without its newline (a write cut short by a kill) is no problem: the readers
    skip it, and the evaluation it held counts as lost.
    """
    records: list[dict[str, Any]] = []
    problems: list[str] = []
    for file in sorted((run / "evals").glob("*.jsonl")):
        text = file.read_text(encoding="utf-8", errors="replace")
        lines = text.split("\n")
        for number, line in enumerate(lines[:-1], 1):  # newline-terminated lines only
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                problems.append(f"{file}: line {number} is not JSON: {line[:80]!r}")
                continue
            if not isinstance(record, dict) or "params" not in record or "status" not in record:
                problems.append(f"{file}: line {number} is not a record: {line[:80]!r}")
                continue
            records.append(record)
    return records, problems


def check_records(root: Path) -> list[str]:
    """Every newline-terminated line of every run's logs is a whole record."""
    return [p for run in run_dirs(root) for p in read_lines(run)[1]]


def count_calls(calls_file: Path, root: Path) -> dict[str, int]:
    """Objective calls per run directory (relative to ``root``), from the calls file the
    campaign's objective appends to: one JSON line per call with the job's ``--out`` and the
    task's ``t`` (MLA's one job tunes every training task: its calls go to ``mla/<task>``)."""
    counts: Counter[str] = Counter()
    if not calls_file.exists():
        return {}
    ids = {}
    for task in (root / "tasks").glob("*.json"):
        spec = json.loads(task.read_text())
        ids[json.dumps(spec["task"]["t"])] = spec["id"]
    prefix = f"results/{root.name}/"
    for line in calls_file.read_text().splitlines():
        try:
            call = json.loads(line)
            run = str(call["out"]).removeprefix(prefix).rstrip("/")
            if run == "mla":
                run = f"mla/{ids.get(json.dumps(call['t']), '?')}"
        except (json.JSONDecodeError, KeyError, TypeError):
            continue  # a line cut short by a kill of the calling process
        counts[run] += 1
    return dict(counts)


def check_budgets(root: Path, expected: Expected, calls: dict[str, int]) -> tuple[list[str], Spent]:
    """At most budget + one evaluation per rank spent on each run; its records reach the budget."""
    problems: list[str] = []
    beyond: dict[str, int] = {}
    for run, budget in sorted(expected.budgets.items()):
        spent = calls.get(run, 0)
        beyond[run] = max(spent - budget, 0)
        allowed = budget + expected.ranks.get(run, 1)
        if spent > allowed:
            problems.append(
                f"{run}: {spent} objective calls for a budget of {budget} "
                f"(at most {allowed}: one more per rank)"
            )
        records, _ = read_lines(root / run)
        if len(records) < budget:
            problems.append(f"{run}: {len(records)} records for a budget of {budget}")
    unknown = sorted(set(calls) - set(expected.budgets))
    if unknown:
        problems.append(f"objective calls for runs the campaign does not have: {unknown}")
    return problems, Spent(calls=dict(calls), beyond=beyond)


def _key(params: dict[str, Any]) -> str:
    return json.dumps(params, sort_keys=True)


def _concurrent(records: list[dict[str, Any]]) -> bool:
    """Whether records of one configuration are evaluations that ran at the same time on
    different ranks of one session: the engine's documented limit (propulate.engine.breeder: two
    workers may breed the same child at the same moment, before either heard of the other's),
    not a repeat caused by a fault."""
    if len({r.get("session") for r in records}) != 1 or len(
        {r.get("rank") for r in records}
    ) != len(records):
        return False
    spans = sorted((float(r.get("start") or 0.0), float(r.get("seconds") or 0.0)) for r in records)
    return all(later < start + seconds for (start, seconds), (later, _) in pairwise(spans))


def check_repeats(root: Path) -> tuple[list[str], list[str]]:
    """No configuration recorded twice in one run (evaluations that ended, not interrupted).

    Returns the violations, and apart from them the configurations that ranks of one session
    evaluated at the same moment (:func:`_concurrent`; counted, not violations of a fault).
    """
    problems, concurrent = [], []
    for run in run_dirs(root):
        records, _ = read_lines(run)
        groups: dict[str, list[dict[str, Any]]] = {}
        for r in records:
            if r.get("status") != "interrupted":
                groups.setdefault(_key(r["params"]), []).append(r)
        for key, group in sorted(groups.items()):
            if len(group) < 2:
                continue
            where = f"{run.relative_to(root)}: {key} evaluated {len(group)} times"
            if _concurrent(group):
                concurrent.append(
                    f"{where}, at the same moment by ranks {[r.get('rank') for r in group]}"
                )
            else:
                problems.append(f"{where} (evaluated more than once)")
    return problems, concurrent


def _best(records: Iterable[dict[str, Any]]) -> float | None:
    losses = [
        float(r["loss"])
        for r in records
        if r.get("status") == "ok" and isinstance(r.get("loss"), int | float)
    ]
    return min(losses) if losses else None


def _close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=TOLERANCE, abs_tol=1e-12)


def check_summaries(root: Path) -> list[str]:
    """Every run's ``summary.json`` counts all its records and names their best loss."""
    from propulate.runs.status import is_failure

    problems = []
    for run in run_dirs(root):
        name = run.relative_to(root)
        path = run / "summary.json"
        if not path.exists():
            problems.append(f"{name}: no summary.json after the campaign")
            continue
        summary = json.loads(path.read_text())
        records, _ = read_lines(run)
        if summary.get("evaluations") != len(records):
            problems.append(
                f"{name}: summary counts {summary.get('evaluations')} evaluations, "
                f"the records are {len(records)}"
            )
        failures = sum(1 for r in records if is_failure(r.get("status")))
        if summary.get("failures") != failures:
            problems.append(
                f"{name}: summary counts {summary.get('failures')} failures, not {failures}"
            )
        if not _close(summary.get("best_loss"), _best(records)):
            problems.append(
                f"{name}: summary's best loss {summary.get('best_loss')} is not the records' "
                f"{_best(records)}"
            )
    return problems


def check_tuningdb(root: Path, expected: Expected) -> list[str]:
    """The database opens and holds exactly the versions its one update published."""
    from propulate.tuningdb.store import DB_FILE, TuningDB

    path = root / DB_FILE
    if not path.exists():
        return [f"{path}: missing after the campaign"]
    problems = []
    leftovers = sorted(p.name for p in root.glob(f".{DB_FILE}.*.tmp"))
    if leftovers:
        problems.append(f"unpublished versions of the tuning database left: {leftovers}")
    try:
        with TuningDB(path, readonly=True) as db:
            integrity = db.conn.execute("PRAGMA integrity_check").fetchone()[0]
            if integrity != "ok":
                problems.append(f"{path}: integrity check: {integrity}")
            rows = db.versions()
    except (sqlite3.Error, OSError) as err:
        return [*problems, f"{path}: does not open: {err}"]
    by_task: dict[str, list[int]] = {}
    for row in rows:
        by_task.setdefault(row.task_id, []).append(row.version)
    tasks = sorted(expected.training + expected.new)
    if sorted(by_task) != tasks:
        problems.append(f"tuning database holds tasks {sorted(by_task)}, expected {tasks}")
    for task, numbers in sorted(by_task.items()):
        if numbers != [1]:
            problems.append(f"tuning database: task {task} has versions {numbers}, expected [1]")
    for row in rows:
        source = Path(row.source) if row.source else None
        if source is None:
            continue
        source = source if source.is_absolute() else root.parents[1] / source
        summary = source / "summary.json"
        if not summary.exists():
            problems.append(f"tuning database: task {row.task_id}'s source {source} has no summary")
            continue
        best = json.loads(summary.read_text()).get("best_loss")
        if not _close(row.loss, best):
            problems.append(
                f"tuning database: task {row.task_id} stores loss {row.loss}, its run {source} "
                f"reports {best}"
            )
    return problems


#: A line of ``propulate status``: path, records/budget, and the state at the end.
STATUS_LINE = re.compile(r"^(\S+)\s+(\d+)/(\S+) evals\s.*\s{2}(\S+)(?: \(.*\))?$")


def check_status(root: Path) -> list[str]:
    """``propulate status`` agrees with the records: each run's count, and ``stopped``."""
    proc = subprocess.run(
        [sys.executable, "-m", "propulate", "status", str(root)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if proc.returncode != 0:
        return [f"propulate status failed ({proc.returncode}): {proc.stderr[-500:]}"]
    shown: dict[str, tuple[int, str]] = {}
    for line in proc.stdout.splitlines():
        m = STATUS_LINE.match(line)
        if m:
            shown[m.group(1)] = (int(m.group(2)), m.group(4))
    problems = []
    for run in run_dirs(root):
        name = str(run.relative_to(root))
        if name not in shown:
            problems.append(f"status does not show {name}: {proc.stdout[-500:]}")
            continue
        count, state = shown[name]
        records, _ = read_lines(run)
        if count != len(records):
            problems.append(
                f"status shows {count} evaluations for {name}, the records are {len(records)}"
            )
        if state != "stopped":
            problems.append(f"status shows {name} as {state}, not stopped")
    return problems


def check_report(root: Path) -> list[str]:
    """The report was built whole."""
    report = root / "report.html"
    if not report.exists():
        return [f"{report}: missing"]
    tail = report.read_bytes()[-200:].rstrip()
    return [] if tail.endswith(b"</html>") else [f"{report}: not a whole HTML document"]


def check_leases(root: Path) -> list[str]:
    """Every lease is released once the campaign ended (its owner is gone by then)."""
    from propulate.runs.lease import current

    problems = []
    for folder in sorted(p for p in root.rglob("*") if p.is_dir() and p.name.endswith("lease")):
        info = current(folder.parent, folder.name)
        if info is not None and not info.released:
            state = "dead" if info.process_gone() else "alive"
            problems.append(
                f"{folder.relative_to(root)}: lease {info.generation} still held by "
                f"{info.host}:{info.pid} ({state})"
            )
    return problems


#: ``prepare-run``'s line at the top of each evolve job's attempt.
PREPARED = re.compile(r"^\S+: (new|resume|restart)$", re.M)


def check_evolve_logs(root: Path, expected: Expected) -> list[str]:
    """Each evolve log keeps every attempt: it starts with the first attempt's ``new``, and
    holds a ``prepare-run`` line for each session that wrote records."""
    problems = []
    for run in expected.evolve_runs:
        task, name = Path(run).parts[-2:]
        log = root / "logs" / "evolve" / task / f"{name}.log"
        if not log.exists():
            problems.append(f"{log.relative_to(root)}: missing")
            continue
        attempts = PREPARED.findall(log.read_text(errors="replace"))
        sessions = {f.name.split("-r")[0] for f in (root / run / "evals").glob("*.jsonl")}
        if not attempts or attempts[0] != "new":
            problems.append(
                f"{log.relative_to(root)}: the first attempt's lines are gone (attempts shown: "
                f"{attempts})"
            )
        if len(attempts) < len(sessions):
            problems.append(
                f"{log.relative_to(root)}: {len(attempts)} attempts logged for "
                f"{len(sessions)} sessions of the run"
            )
    return problems


def check_campaign(root: Path, expected: Expected, calls_file: Path) -> tuple[list[str], Spent]:
    """Every invariant on a finished campaign; the violations, and the evaluations spent."""
    budget_problems, spent = check_budgets(root, expected, count_calls(calls_file, root))
    repeats, spent.concurrent = check_repeats(root)
    problems = [
        *check_records(root),
        *budget_problems,
        *repeats,
        *check_summaries(root),
        *check_tuningdb(root, expected),
        *check_status(root),
        *check_report(root),
        *check_leases(root),
        *check_evolve_logs(root, expected),
    ]
    return problems, spent
