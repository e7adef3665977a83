"""``python -m propulate status [DIR]``: one line per run directory, fast, while runs go on.

A run directory is a directory holding ``evals/``. For each one found under ``DIR`` (default
``results/``) the command prints::

    PATH  EVALUATIONS/BUDGET evals  FAILED failed  best LOSS  RATE/s  ETA ...  STATE

* for a run that declared objectives ``best LOSS`` is what it reached in their terms: the size
  and hypervolume of its Pareto set for several (``pareto set 12, hypervolume 0.97``), the
  best value in its own sign for one (``best accuracy 0.99999``) (:mod:`propulate.runs.front`);
* the budget comes from ``run.json`` (``-`` when the run has none);
* the rate is the evaluations per second of the latest session, from its first start to its
  last end;
* the ETA is the time left until the budget is spent at that rate, or until the time limit of
  the latest start, whichever comes first;
* the state comes from the run directory's owner (its lease under ``lease/``, see
  :mod:`propulate.runs.lease`):

  - ``running (HOST:PID)``: the owner is alive (its heartbeat is fresh);
  - ``stopped (REASON)``: no live owner, and ``summary.json`` is at least as new as the last
    record (REASON is its stop reason); without such a summary, REASON comes from the last
    records (``budget spent``, the last failure's error, ``interrupted``);
  - ``orphaned (...)``: the owner is gone (killed, node lost) without writing a summary; a new
    ``evolve`` on the directory resumes it.

  A directory without a lease (written before leases, or by a stage that takes none) shows
  ``stopped`` when its summary is current, else ``running`` (``running?`` when no record
  arrived for a while).

It reads the logs without pandas, MPI or a JSON parser per line: a regular expression takes
the ``loss`` and ``status`` of each record (records are written by
:class:`propulate.compat.history.EvaluationLog`, which puts them right after the parameters; other
lines are parsed); only the first and last line of each file are parsed for the times.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from propulate.runs.lease import LeaseInfo
from propulate.runs.lease import current as current_lease
from propulate.runs.log import EVAL_DIR
from propulate.runs.status import NOT_FAILED as _NOT_FAILED

#: The top-level ``loss`` and ``status`` of a record: they follow the (flat) ``params`` object.
RECORD = re.compile(rb'\},"loss":(null|-?[0-9][0-9.eE+-]*),"status":"([a-z]+)"')
#: The member of ``auto`` that bred a record (its state, as the log writes it).
BRED = re.compile(rb'"auto":"([^"]+)"')

#: Seconds without a new record after which a run without summary is shown as ``running?``.
QUIET = 600.0

#: Statuses that are not failures (:data:`propulate.compat.history.NOT_FAILED`), as bytes.
NOT_FAILED = tuple(s.encode() for s in _NOT_FAILED)


def add_directory_argument(p: argparse.ArgumentParser) -> None:
    """The optional ``DIR`` (default ``results``) that ``status`` and ``dashboard`` read."""
    p.add_argument(
        "directory",
        nargs="?",
        type=Path,
        default=Path("results"),
        metavar="DIR",
        help="a run directory or a folder of them (default: results)",
    )


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``status`` subcommand."""
    p = sub.add_parser(
        "status",
        help="one line per run directory: progress, best, ETA",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_directory_argument(p)
    p.set_defaults(func=run)


@dataclass
class RunStatus:
    """What :func:`run_status` finds in one run directory.

    Attributes
    ----------
    path : Path
        The run directory.
    evaluations, failures : int
        Complete records, and the failed ones (status ``failed`` or ``timeout``).
    best_loss : float or None
        The smallest loss of a successful record.
    budget : int or None
        ``max_evaluations`` of the latest start (``run.json``).
    rate : float or None
        Evaluations per second of the latest session.
    eta : float or None
        Seconds left (``None``: unknown or finished).
    finished : bool
        Whether ``summary.json`` is at least as new as the last record.
    stop_reason : str or None
        The summary's stop reason.
    quiet : float
        Seconds since the last record was written.
    owner : LeaseInfo or None
        The directory's newest lease (``None``: it never had one).
    owner_alive : bool
        Whether that owner looks alive (heartbeat fresh, not released, process not gone).
    last_error : str or None
        The error of the newest failed record (for a run stopped without a summary).
    last_status : str or None
        The status of the newest record.
    reached : str or None
        For a run that declared objectives (``run.json``), what it reached in their terms
        (:func:`propulate.runs.front.describe`: the Pareto set's size and hypervolume, a
        maximised objective in its own sign); shown instead of the best loss.
    method : str or None
        What ``--propagator auto`` chose (``run.json``), e.g. ``auto: cma, raced ga``.
    members : tuple of str
        The members of ``auto`` that bred (first choice, challenger, the method that polishes,
        the landscape probe and the method it may pick); empty with one member.
    """

    path: Path
    evaluations: int = 0
    failures: int = 0
    best_loss: float | None = None
    budget: int | None = None
    rate: float | None = None
    eta: float | None = None
    finished: bool = False
    stop_reason: str | None = None
    quiet: float = 0.0
    owner: LeaseInfo | None = None
    owner_alive: bool = False
    last_error: str | None = None
    last_status: str | None = None
    reached: str | None = None
    method: str | None = None
    members: tuple[str, ...] = ()

    @property
    def state(self) -> str:
        """``running (...)``, ``stopped (...)``, ``orphaned (...)`` (or, without a lease,
        ``running``/``running?``)."""
        if self.owner_alive:
            assert self.owner is not None
            return f"running ({self.owner.host}:{self.owner.pid})"
        if self.finished:
            return f"stopped ({self.stop_reason})" if self.stop_reason else "stopped"
        if self.owner is None:  # no lease: guess from the records' age
            if self.quiet > QUIET:
                return f"running? (no record for {_duration(self.quiet)})"
            return "running"
        if self.owner.released:
            return f"stopped ({self._why()}; no summary)"
        return (
            f"orphaned (owner {self.owner.host}:{self.owner.pid} gone, last heartbeat "
            f"{_duration(self.quiet_owner)} ago, no summary; evolve on it resumes the run)"
        )

    @property
    def quiet_owner(self) -> float:
        """Seconds since the owner's last heartbeat."""
        return max(time.time() - self.owner.heartbeat, 0.0) if self.owner else 0.0

    def _why(self) -> str:
        if self.budget is not None and self.evaluations >= int(self.budget):
            return "budget spent"
        if self.last_status in ("failed", "timeout") and self.last_error:
            error = " ".join(self.last_error.split())
            return f"last record {self.last_status}: {error[:120]}"
        return f"last record {self.last_status}" if self.last_status else "no records"


def find_runs(directory: Path) -> list[Path]:
    """The run directories (holding ``evals/``) at or under ``directory``, sorted."""
    if (directory / EVAL_DIR).is_dir():
        return [directory]
    return sorted(p.parent for p in directory.rglob(EVAL_DIR) if p.is_dir())


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def _times(line: bytes) -> tuple[float, float] | None:
    """Start and end of one record line."""
    try:
        rec = json.loads(line)
        return float(rec["start"]), float(rec["start"]) + float(rec["seconds"])
    except (ValueError, KeyError, TypeError):
        return None


def _scan(data: bytes) -> tuple[int, int, float | None, bytes, bytes]:
    """Records, failures, best loss, first and last complete line of one log file's content."""
    end = data.rfind(b"\n")  # a torn last line (a writer killed mid-line) is not a record
    data = data[: end + 1]
    if not data.strip():
        return 0, 0, None, b"", b""
    first = data[: data.find(b"\n")]
    last = data[data.rfind(b"\n", 0, len(data) - 1) + 1 : -1]
    pairs = RECORD.findall(data)
    if len(pairs) != data.count(b"\n"):  # blank lines, or records written by other means
        pairs = [_fields(line) for line in data.split(b"\n") if line.strip()]
        pairs = [p for p in pairs if p is not None]
    losses = [float(loss) for loss, status in pairs if status == b"ok" and loss != b"null"]
    finite = [v for v in losses if math.isfinite(v)]
    failures = sum(status not in NOT_FAILED for _, status in pairs)
    return len(pairs), failures, min(finite) if finite else None, first, last


def _fields(line: bytes) -> tuple[bytes, bytes] | None:
    """The loss and status of one line, by the pattern or else by parsing it (``None``: no
    record)."""
    m = RECORD.search(line)
    if m:
        return m.group(1), m.group(2)
    try:
        rec = json.loads(line)
    except ValueError:
        return None
    if not isinstance(rec, dict) or "params" not in rec:
        return None
    loss = b"null" if rec.get("loss") is None else repr(float(rec["loss"])).encode()
    return loss, str(rec.get("status")).encode()


#: What :func:`run_status` needs of one log file: records, failures, best loss, first and last
#: complete line, modification time (see :func:`scan_file`).
FileScan = tuple[int, int, float | None, bytes, bytes, float]


def scan_file(file: Path) -> FileScan:
    """Read and scan one log file (:func:`_scan`), with its modification time."""
    data = file.read_bytes()
    return (*_scan(data), file.stat().st_mtime)


def run_status(
    path: Path, now: float | None = None, scan: Callable[[Path], FileScan] = scan_file
) -> RunStatus:
    """The status of the run directory ``path`` (reads its logs, ``run.json``, ``summary.json``).

    ``scan`` reads one log file; the dashboard passes one that caches what it read
    (:mod:`propulate.cli.dashboard_state`)."""
    now = time.time() if now is None else now
    out = RunStatus(path)
    files = sorted((path / EVAL_DIR).glob("*.jsonl"))
    sessions: dict[str, list[tuple[float, int, float | None, float | None]]] = {}
    newest = 0.0
    last_end = 0.0
    for file in files:
        try:
            count, failures, best, head, tail, mtime = scan(file)
        except OSError:
            continue
        out.evaluations += count
        out.failures += failures
        if best is not None and (out.best_loss is None or best < out.best_loss):
            out.best_loss = best
        first = _times(head) if count else None
        last = _times(tail) if count else None
        if last is not None and last[1] >= last_end:
            last_end = last[1]
            out.last_status, out.last_error = _outcome(tail)
        session = file.name.rsplit("-r", 1)[0]
        sessions.setdefault(session, []).append(
            (mtime, count, first[0] if first else None, last[1] if last else None)
        )
        newest = max(newest, mtime)  # a session that opened its logs is running
    meta = _read_json(path / "run.json")
    out.budget = meta.get("max_evaluations")
    out.method = _auto(meta.get("propagator"))
    if out.method:
        chosen = meta["propagator"]
        probe = ("probe", chosen.get("probe_pick")) if chosen.get("probe") else ()
        named = (chosen["first"], chosen.get("challenger"), chosen.get("then"), *probe)
        members = tuple(dict.fromkeys(m for m in named if m))
        out.members = members if len(members) > 1 else ()
    if meta.get("objectives"):
        out.reached = _reached(str(meta["objectives"]), files)
    summary_file = path / "summary.json"
    if summary_file.exists():
        summary = _read_json(summary_file)
        out.stop_reason = summary.get("stop_reason")
        out.finished = summary_file.stat().st_mtime >= newest
    out.quiet = max(now - newest, 0.0) if newest else 0.0
    out.owner = current_lease(path)
    out.owner_alive = out.owner is not None and out.owner.looks_alive(now)
    if out.owner_alive:
        out.finished = False  # a resumed run: the summary is the previous session's
    active = [s for s in sessions.values() if sum(c for _, c, _, _ in s)]
    if active:  # the latest session with records
        latest = max(active, key=lambda s: max(m for m, *_ in s))
        count = sum(c for _, c, _, _ in latest)
        starts = [s for _, _, s, _ in latest if s is not None]
        ends = [e for _, _, _, e in latest if e is not None]
        if count and starts and ends and max(ends) > min(starts):
            out.rate = count / (max(ends) - min(starts))
    if not out.finished and (out.owner is None or out.owner_alive):
        left: list[float] = []
        if out.budget is not None and out.rate:
            left.append(max(int(out.budget) - out.evaluations, 0) / out.rate)
        if meta.get("time_limit") is not None and meta.get("started"):
            left.append(max(float(meta["started"]) + float(meta["time_limit"]) - now, 0.0))
        out.eta = min(left) if left else None
    return out


def _reached(declared: str, files: list[Path]) -> str | None:
    """What a run of declared objectives reached (parses its successful records)."""
    from propulate.runs.declared_objectives import Objectives
    from propulate.runs.front import describe

    try:
        objectives = Objectives.parse(declared)
    except ValueError:
        return None
    values = []
    for file in files:
        try:
            lines = file.read_bytes().splitlines()
        except OSError:
            continue
        for line in lines:
            if b'"objectives"' not in line or b'"status":"ok"' not in line:
                continue
            try:
                found = json.loads(line).get("objectives")
            except (ValueError, AttributeError):
                continue
            if isinstance(found, dict):
                values.append(found)
    return describe(objectives, values)


def _auto(propagator: Any) -> str | None:
    """``auto: cma, raced ga`` (or ``auto: bo, then nm``, ``auto: cma, probed for ga``) for a
    run whose ``--propagator auto`` chose (``run.json``)."""
    if not isinstance(propagator, dict) or not propagator.get("first"):
        return None
    probed = f", probed for {propagator['probe_pick']}" if propagator.get("probe") else ""
    raced = f", raced {propagator['challenger']}" if propagator.get("challenger") else ""
    then = f", then {propagator['then']}" if propagator.get("then") else ""
    return f"auto: {propagator['first']}{probed}{raced}{then}"


def bred_in(data: bytes) -> Counter[str]:
    """How many of the record lines in ``data`` each member of ``auto`` bred (their state
    ``{"auto": name}``, as the log writes it)."""
    if b'"auto":"' not in data:
        return Counter()
    return Counter(m.group(1).decode() for m in BRED.finditer(data))


def bred_text(counts: Mapping[str, int], members: Sequence[str]) -> str:
    """`` (cma bred 1200, ga bred 300)``: what ``status`` and the dashboard add to the method of
    a run of ``auto`` with several ``members``."""
    return " (" + ", ".join(f"{m} bred {counts.get(m, 0)}" for m in members) + ")"


def auto_counts(path: Path, names: list[str]) -> dict[str, int]:
    """How many records of the run ``path`` each member of an ``auto`` race bred (their
    ``state``), e.g. ``{"cma": 1200, "ga": 300}``."""
    found: Counter[str] = Counter()
    for file in sorted((path / EVAL_DIR).glob("*.jsonl")):
        try:
            found += bred_in(file.read_bytes())
        except OSError:
            continue
    return {name: found[name] for name in names}


def _outcome(line: bytes) -> tuple[str | None, str | None]:
    """Status and error of one record line."""
    try:
        rec = json.loads(line)
        return rec.get("status"), rec.get("error")
    except (ValueError, AttributeError):
        return None, None


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    s = int(round(seconds))
    if s >= 3600:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    if s >= 60:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s}s"


def format_status(st: RunStatus, root: Path | None = None) -> str:
    """One line describing ``st`` (its path relative to ``root`` when below it)."""
    try:
        name = str(st.path.relative_to(root)) if root and st.path != root else str(st.path)
    except ValueError:
        name = str(st.path)
    budget = "-" if st.budget is None else str(st.budget)
    best = "-" if st.best_loss is None else f"{st.best_loss:.6g}"
    rate = "-" if st.rate is None else f"{st.rate:.3g}/s"
    running = st.owner_alive or (st.owner is None and not st.finished)
    best = st.reached or f"best {best}"
    method = f"  {st.method}" if st.method else ""
    return (
        f"{name}  {st.evaluations}/{budget} evals  {st.failures} failed  {best}  "
        f"{rate}  ETA {_duration(st.eta if running else None)}  {st.state}{method}"
    )


def run(args: argparse.Namespace) -> int:
    """Print one line per run directory under ``args.directory``."""
    from propulate.cli import UsageError

    root: Path = args.directory
    if not root.is_dir():
        raise UsageError(f"{root} is not a directory")
    runs = find_runs(root)
    if not runs:
        print(f"no run directories (holding {EVAL_DIR}/) under {root}")
        return 0
    try:
        for path in runs:
            st = run_status(path)
            line = format_status(st, root)
            if st.members:  # who bred how many records
                line += bred_text(auto_counts(path, list(st.members)), st.members)
            print(line, flush=True)
    except BrokenPipeError:  # e.g. `| head`: the reader has enough
        import os
        import sys

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0
