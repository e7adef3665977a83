"""What the dashboard shows, read from the files runs and Snakemake already write.

* Runs: :func:`propulate.cli.status.run_status` per run directory, with a
  :class:`LogCache` that remembers, per log file, how far it has read and what it found there.
  A log is append-only (:mod:`propulate.runs.log`), so a poll reads only the bytes appended
  since the last one; a file whose size and modification time are unchanged is not opened.
  The cache also keeps each improvement of the best loss (time, loss), found with the
  status command's regular expression; only an improving line is parsed as JSON; and, for
  ``--propagator auto``, how many records each member bred (their state ``{"auto": name}``:
  the landscape probe, a race's switch, a polish).
* Snakemake: its own log of the newest workflow run per config file
  (``.snakemake/log/*.snakemake.log`` in the directory Snakemake runs in): the job counts per
  rule of its "Job stats" table, the ``Finished jobid`` lines, the ``rule`` lines of jobs
  started and not finished, and ``Error in rule`` lines. Jobs done and pending are those of
  that workflow run (Snakemake plans only the jobs whose outputs are missing or outdated, so a
  re-run lists fewer); whether Snakemake still runs comes from its lock files
  (``.snakemake/locks/``).

Nothing here writes a file.
"""

from __future__ import annotations

import json
import math
import re
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from propulate.cli.status import (
    NOT_FAILED,
    RECORD,
    FileScan,
    bred_in,
    bred_text,
    find_runs,
    run_status,
)

#: Seconds between two searches for new run directories under the results folder.
RESCAN = 30.0


@dataclass
class _File:
    """What was read of one log file so far."""

    size: int = 0
    mtime: float = 0.0
    offset: int = 0
    count: int = 0
    failures: int = 0
    best: float | None = None
    first: bytes = b""
    last: bytes = b""
    improvements: list[tuple[float, float]] = field(default_factory=list)
    bred: Counter[str] = field(default_factory=Counter)


class LogCache:
    """Per log file: the scan of :func:`propulate.cli.status.run_status`, read incrementally."""

    def __init__(self) -> None:
        self._files: dict[Path, _File] = {}
        self.bytes_read = 0

    def scan(self, file: Path) -> FileScan:
        """The scan of ``file`` (records, failures, best, first and last line, mtime)."""
        st = file.stat()
        entry = self._files.get(file)
        if entry is None or st.st_size < entry.size:  # new, or rewritten: start over
            entry = self._files[file] = _File()
        if st.st_size != entry.size or st.st_mtime != entry.mtime:
            with file.open("rb") as fh:
                fh.seek(entry.offset)
                data = fh.read(st.st_size - entry.offset)
            self.bytes_read += len(data)
            end = data.rfind(b"\n")  # a torn last line waits for its end
            if end >= 0:
                self._add(entry, data[: end + 1])
                entry.offset += end + 1
            entry.size, entry.mtime = st.st_size, st.st_mtime
        return entry.count, entry.failures, entry.best, entry.first, entry.last, entry.mtime

    def bred(self, file: Path) -> Counter[str]:
        """How many records of ``file`` each member of ``auto`` bred."""
        entry = self._files.get(file)
        return Counter(entry.bred) if entry else Counter()

    def improvements(self, file: Path) -> list[tuple[float, float]]:
        """``(finish time, best loss)`` each time the best loss of ``file`` improved."""
        entry = self._files.get(file)
        return list(entry.improvements) if entry else []

    @staticmethod
    def _add(entry: _File, data: bytes) -> None:
        entry.bred.update(bred_in(data))
        for line in data.split(b"\n"):
            if not line.strip():
                continue
            m = RECORD.search(line)
            if m is None:  # not written by EvaluationLog: parse it
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if not isinstance(rec, dict) or "params" not in rec:
                    continue
                raw = rec.get("loss")
                loss_text = b"null" if raw is None else repr(float(raw)).encode()
                status = str(rec.get("status")).encode()
            else:
                loss_text, status = m.group(1), m.group(2)
            entry.count += 1
            entry.first = entry.first or line
            entry.last = line
            if status not in NOT_FAILED:
                entry.failures += 1
            if status != b"ok" or loss_text == b"null":
                continue
            loss = float(loss_text)
            if math.isfinite(loss) and (entry.best is None or loss < entry.best):
                entry.best = loss
                try:
                    rec = json.loads(line)
                    finish = float(rec["start"]) + float(rec["seconds"])
                except (ValueError, KeyError, TypeError):
                    continue
                entry.improvements.append((finish, loss))


def best_over_time(parts: list[list[tuple[float, float]]]) -> list[tuple[float, float]]:
    """The running best of several files' improvements, merged in time order."""
    out: list[tuple[float, float]] = []
    for t, loss in sorted(p for part in parts for p in part):
        if not out or loss < out[-1][1]:
            out.append((t, loss))
    return out


_STATS_ROW = re.compile(r"^(\S+)\s+(\d+)$")
_FINISHED = re.compile(r"Finished job(?:id)?:? (\d+) \(Rule: ([\w-]+)\)")
_STARTED = re.compile(r"^(?:local)?rule ([\w-]+):$")
_JOBID = re.compile(r"^\s+jobid: (\d+)$")
_ERROR = re.compile(r"^Error in rule ([\w-]+):")
_STEPS = re.compile(r"^(\d+) of (\d+) steps")
_CONFIG = re.compile(r"^\s+Config file\(s\): (.*)$")
_DATE = re.compile(r"^\s+Date: (.*)$")


def snakemake_progress(log: Path) -> dict[str, Any]:
    """Jobs of one Snakemake log: per rule planned and finished, running, failed."""
    total: dict[str, int] = {}
    done: dict[str, int] = {}
    started: dict[str, str] = {}  # jobid -> rule
    finished: set[str] = set()
    failed: list[str] = []
    steps = None
    config = date = ""
    in_stats = False
    rule = None
    for line in log.read_text(errors="replace").splitlines():
        if line.startswith("Job stats:"):
            in_stats = not total  # the first table plans the whole run
            continue
        if in_stats:
            m = _STATS_ROW.match(line.strip())
            if m and m.group(1) != "total":
                total[m.group(1)] = int(m.group(2))
            elif not line.strip() or line.strip().startswith("total"):
                in_stats = not line.strip().startswith("total") and not total
            continue
        if m := _STARTED.match(line):
            rule = m.group(1)
        elif (m := _JOBID.match(line)) and rule:
            started[m.group(1)] = rule
            rule = None
        elif m := _FINISHED.search(line):
            finished.add(m.group(1))
            done[m.group(2)] = done.get(m.group(2), 0) + 1
        elif m := _ERROR.match(line):
            failed.append(m.group(1))
        elif m := _STEPS.match(line):
            steps = (int(m.group(1)), int(m.group(2)))
        elif m := _CONFIG.match(line):
            config = ", ".join(re.findall(r"'([^']+)'", m.group(1))) or m.group(1)
        elif m := _DATE.match(line):
            date = m.group(1)
    running = sorted(r for j, r in started.items() if j not in finished)
    planned = sum(total.values())
    return {
        "log": log.name,
        "config": config,
        "campaign": _campaign_name(config.split(", ")[-1]) if config else None,
        "date": date,
        "planned": planned,
        "done": steps[0] if steps else sum(done.values()),
        "rules": [{"rule": r, "planned": n, "done": done.get(r, 0)} for r, n in total.items()],
        "running": running,
        "failed": failed,
        "modified": log.stat().st_mtime,
    }


def _campaign_name(config: str) -> str | None:
    """The ``name`` of a campaign config file (None when unreadable)."""
    import yaml

    try:
        data = yaml.safe_load(Path(config).read_text())
    except (OSError, yaml.YAMLError):
        return None
    return str(data["name"]) if isinstance(data, dict) and "name" in data else None


def snakemake_runs(
    snakemake_dir: Path, cache: dict[Path, tuple[float, int, dict[str, Any]]] | None = None
) -> list[dict[str, Any]]:
    """The newest Snakemake log per config file that ran jobs (not one of ``--report``, a dry
    run, ``--unlock``, nor one that had nothing to do), with its progress; newest first. Each
    has ``active``: whether Snakemake holds its locks (it runs) and this is its newest log.
    ``cache`` keeps each log's progress until its size or modification time change."""
    cache = {} if cache is None else cache
    logs = sorted((snakemake_dir / "log").glob("*.snakemake.log"), key=lambda p: p.name)
    newest: dict[str, dict[str, Any]] = {}
    for log in logs:
        try:
            st = log.stat()
            hit = cache.get(log)
            if hit is None or hit[:2] != (st.st_mtime, st.st_size):
                hit = cache[log] = (st.st_mtime, st.st_size, snakemake_progress(log))
        except OSError:
            continue
        info = dict(hit[2])
        if info["planned"] or info["done"] or info["running"]:  # not --report, -n, --unlock
            newest[info["config"]] = info
    locks = snakemake_dir / "locks"
    locked = locks.is_dir() and any(locks.iterdir())
    latest = max((i["log"] for i in newest.values()), default=None)  # names sort by time
    out = sorted(newest.values(), key=lambda i: -i["modified"])
    for info in out:
        info["active"] = bool(locked and info["log"] == latest)
    return out


class Live:
    """The dashboard's state of a results folder, recomputed cheaply on every poll."""

    def __init__(self, root: Path, snakemake_dir: Path | None = None) -> None:
        self.root = root
        self.snakemake_dir = snakemake_dir
        self.cache = LogCache()
        self._runs: list[Path] = []
        self._scanned = -math.inf
        self._lock = threading.Lock()
        self._snakemake: dict[Path, tuple[float, int, dict[str, Any]]] = {}

    def runs(self) -> list[Path]:
        """The run directories under the root (searched again every :data:`RESCAN` s)."""
        now = time.monotonic()
        if now - self._scanned > RESCAN:
            self._runs = find_runs(self.root)
            self._scanned = now
        return self._runs

    def state(self) -> dict[str, Any]:
        """Every run's progress, best loss over time and state; Snakemake's jobs."""
        with self._lock:
            now = time.time()
            runs = []
            for path in self.runs():
                try:
                    st = run_status(path, now, scan=self.cache.scan)
                except OSError:
                    continue
                files = sorted((path / "evals").glob("*.jsonl"))
                running = st.owner_alive or (st.owner is None and not st.finished)
                method = st.method
                if method and st.members:  # who bred how many records, as status says
                    bred = sum((self.cache.bred(f) for f in files), Counter())
                    method += bred_text(bred, st.members)
                runs.append(
                    {
                        "path": _relative(path, self.root),
                        "evaluations": st.evaluations,
                        "budget": st.budget,
                        "failures": st.failures,
                        "best": st.best_loss,
                        "rate": st.rate,
                        "eta": st.eta if running else None,
                        "state": st.state,
                        "method": method,
                        "best_over_time": best_over_time(
                            [self.cache.improvements(f) for f in files]
                        ),
                    }
                )
            jobs = snakemake_runs(self.snakemake_dir, self._snakemake) if self.snakemake_dir else []
            return {"time": now, "root": str(self.root), "runs": runs, "snakemake": jobs}


def _relative(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root)) if path != root else path.name
    except ValueError:
        return str(path)
