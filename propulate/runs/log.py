"""The append-only evaluation log: one JSON line per evaluation, flushed as it is written.

Layout of a run directory (the ``checkpoint_path`` of an optimizer, ``--out`` of the CLI)::

    DIR/evals/<session>-r<rank>.jsonl     one file per rank and session (a start or a resume)

Each line is one :data:`Record`, a JSON object with the keys

``task``, ``run``, ``method``
    What was tuned: the task id, the run id (e.g. the seed), the optimizer.
``island``, ``rank``, ``generation``
    Where and when: island index, MPI rank of the worker that evaluated it, the worker's
    generation counter.
``session``, ``seq``
    The writing session (a random id per start) and the line's number in its file; together
    with ``rank`` they identify an evaluation uniquely.
``params``
    The configuration, parameter name to value. Nested, so a parameter may have any name (see
    :func:`propulate.runs.table.read_history` for the table columns).
``loss``, ``status``, ``error``
    The loss (``null`` unless the status has one); a status of
    :data:`propulate.runs.status.STATUSES` (``"ok"``, ``"failed"``, ``"timeout"``,
    ``"interrupted"``, ``"pruned"``); and one line saying what went wrong or why the
    evaluation stopped (``null`` when ok).
``start``, ``seconds``
    Unix time at which the evaluation started, and how long it took in seconds.
``objectives`` (optional)
    A run with declared objectives (:mod:`propulate.runs.declared_objectives`): each objective's value
    in natural units, ``{name: value}``; the loss is then the first one signed for
    minimisation.
``traceback``, ``details``, ``curve``, ``state`` (optional)
    The full traceback of an objective that raised; method-specific details of the evaluation
    (e.g. a command's exit code); the intermediate values an objective reported, as
    ``[[step, value], ...]``; and the propagator's per-individual state (e.g. a particle's
    velocity), restored on resume. Present only when there is something to keep.

Lines are flushed to the operating system as soon as they are written, so a process killed with
SIGKILL loses at most the evaluation it was running; a partly written last line is skipped when
reading. Nothing is ever rewritten, so the cost of logging one evaluation is constant.

Lines are encoded with `orjson <https://github.com/ijl/orjson>`_, in a microsecond where the
standard library's encoder takes ten; what orjson does not encode (an integer past 64 bits) goes
through the standard library. Both write standard JSON (floats as the shortest text that reads
back as the same float, non-finite numbers as ``null``), which any JSON reader reads.
"""

from __future__ import annotations

import json
import math
import os
import secrets
import threading
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from propulate.runs.outcome import Outcome, outcome_from

Record = dict[str, Any]

EVAL_DIR = "evals"

_PLAIN = frozenset({int, str, bool, type(None)})


def new_session_id() -> str:
    """A short random id naming one start of a run (its log files)."""
    return secrets.token_hex(4)


def clean(value: Any) -> Any:
    """A JSON-safe value: numpy scalars as Python ones, non-finite floats as ``None``."""
    kind = type(value)
    if kind is float:
        return value if value - value == 0.0 else None
    if kind in _PLAIN:
        return value
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def clean_mapping(values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` with every value made JSON-safe (:func:`clean`), keys as strings."""
    return {str(k): clean(v) for k, v in values.items()}


def _deep_clean(value: Any) -> Any:
    kind = type(value)
    if kind is list:
        for v in value:
            if type(v) is not float or v - v != 0.0:
                break
        else:  # finite floats only (a propagator's vector in a child's state): JSON-safe as is
            return value
    if kind is dict or isinstance(value, Mapping):
        return {str(k): _deep_clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_deep_clean(v) for v in value]
    return clean(value)


class EvaluationLog:
    """Writer of one rank's evaluation records for one session.

    Parameters
    ----------
    directory : path
        The run directory; files go to ``directory/evals``.
    rank : int
        The writing MPI rank (part of the file name).
    session : str, optional
        Session id shared by all ranks of one start (default: a fresh random id).
    meta : mapping, optional
        Fields written into every record (``task``, ``run``, ``method``).
    """

    def __init__(
        self,
        directory: str | Path,
        rank: int,
        session: str | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        self.directory = Path(directory)
        self.rank = int(rank)
        self.session = session or new_session_id()
        self.meta = dict(meta or {})
        folder = self.directory / EVAL_DIR
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / f"{self.session}-r{self.rank:05d}.jsonl"
        # Unbuffered: each line goes to the operating system in the write that makes it.
        self._fh: BinaryIO | None = open(self.path, "ab", buffering=0)  # noqa: SIM115
        self._last = b""
        self.seq = 0
        self._encode = json.JSONEncoder(
            separators=(",", ":"), allow_nan=False, default=clean
        ).encode
        self._syncing: threading.Thread | None = None  # a sync started by sync_soon
        self._synced_at = -1  # lines written when it started (-1: none started)
        self._sync_errors: list[OSError] = []

    def record(
        self,
        params: Mapping[str, Any],
        outcome: Outcome,
        *,
        island: int = 0,
        generation: int,
        state: Mapping[str, Any] | None = None,
    ) -> None:
        """Write one evaluation's :class:`~propulate.runs.outcome.Outcome` and flush it: the
        one way every method records what an evaluation gave.

        The fields go in the key order of :data:`Record`; this runs once per evaluation of
        every method.

        Parameters
        ----------
        params : mapping
            The configuration, parameter name to value (numpy scalars become Python numbers,
            non-finite floats ``null``).
        outcome : Outcome
            Its loss or failure, status, error, traceback, details, intermediate values, when
            it started and how long it took; written as it is (the outcome already decided
            what it is).
        island, generation : int
            Island index and the worker's generation counter.
        state : mapping, optional
            The propagator's per-individual state (JSON-ready; kept only when given).
        """
        start, seconds = outcome.start, outcome.seconds
        rec = {
            **self.meta,
            "island": int(island),
            "rank": self.rank,
            "generation": int(generation),
            "session": self.session,
            "seq": self.seq,
            "params": params,
            "loss": outcome.loss,
            "status": outcome.status,
            "error": outcome.error,
            "start": start if type(start) is float else float(start),
            "seconds": seconds if type(seconds) is float else float(seconds),
        }
        if outcome.values is not None:
            rec["objectives"] = outcome.values
        if outcome.traceback is not None:
            rec["traceback"] = outcome.traceback
        if outcome.details:
            rec["details"] = outcome.details
        if outcome.curve:
            rec["curve"] = outcome.curve
        if state:
            rec["state"] = state
        self._write_line(self._line(rec))

    def _line(self, record: Record) -> bytes:
        """One record as a line of JSON: numpy numbers as Python ones (:func:`clean`),
        non-finite floats as ``null``, keys as strings."""
        try:
            return orjson.dumps(record, default=clean, option=orjson.OPT_APPEND_NEWLINE)
        except (TypeError, ValueError):  # beyond orjson: an int past 64 bits, a key not a str
            return (self._encode(_deep_clean(record)) + "\n").encode()

    def append(
        self,
        params: Mapping[str, Any],
        loss: float | None,
        *,
        island: int,
        generation: int,
        start: float,
        seconds: float,
        error: str | None = None,
        status: str | None = None,
        traceback: str | None = None,
        details: Mapping[str, Any] | None = None,
    ) -> Record:
        """Write one evaluation given as its parts (:func:`~propulate.runs.outcome.outcome_from`
        decides what they make: a ``None``, NaN or infinite loss, an error or a status other
        than ``"ok"`` is not a loss). Returns the record written, as a reader reads it."""
        outcome = outcome_from(loss, status, error, traceback, details)
        outcome.start, outcome.seconds = start, seconds
        self.record(params, outcome, island=island, generation=generation)
        return self.last_record()

    def last_record(self) -> Record:
        """The last record written, parsed back (for tests and tools, not the hot path)."""
        return json.loads(self._last)

    def write(self, record: Record) -> None:
        """Write a ready record (one line) and flush it to the operating system."""
        self._write_line(self._line(record))

    def _write_line(self, data: bytes) -> None:
        if self._fh is None:
            raise ValueError(f"evaluation log {self.path} is closed")
        done = self._fh.write(data) or 0
        while done < len(data):  # a write the system took only in part
            done += self._fh.write(memoryview(data)[done:]) or 0
        self._last = data
        self.seq += 1

    def sync(self) -> None:
        """Ask the OS to put the file on disk (``fsync``); for the end of a run."""
        if self._fh is not None:
            os.fsync(self._fh.fileno())

    def sync_soon(self) -> None:
        """Start :meth:`sync` in the background, for a writer done writing that has other
        things to finish first (a worker's drain): :meth:`close` waits for it, and syncs again
        only if lines were written since. An ``fsync`` takes milliseconds; the last of a run's
        steps need not wait for it."""
        if self._fh is None or self._syncing is not None:
            return
        fd, self._synced_at = self._fh.fileno(), self.seq
        self._syncing = threading.Thread(
            target=_fsync_keeping_error, args=(fd, self._sync_errors), name="propulate-log-sync"
        )
        self._syncing.start()

    def close(self) -> None:
        """Flush, sync and close the file (idempotent)."""
        if self._fh is None:
            return
        try:
            if self._syncing is not None:
                self._syncing.join()
                self._syncing = None
                if self._sync_errors:
                    raise self._sync_errors.pop()
            if self.seq != self._synced_at:  # no sync started, or lines written since
                self.sync()
        finally:
            self._fh.close()
            self._fh = None

    def __enter__(self) -> EvaluationLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _fsync_keeping_error(fd: int, errors: list[OSError]) -> None:
    """``os.fsync(fd)``, its error kept in ``errors`` (for the thread of :meth:`sync_soon`)."""
    try:
        os.fsync(fd)
    except OSError as err:
        errors.append(err)


def log_files(path: str | Path) -> list[Path]:
    """The JSONL files of a run directory (or the file itself), sorted by name."""
    p = Path(path)
    if p.is_file():
        return [p]
    folder = p / EVAL_DIR if (p / EVAL_DIR).is_dir() else p
    return sorted(folder.glob("*.jsonl"))


def iter_records(paths: str | Path | Iterable[str | Path]) -> Iterator[Record]:
    """Yield the records of one or more run directories or log files.

    Lines that are not complete JSON objects (a write cut short by a kill) are skipped.
    """
    if isinstance(paths, str | Path):
        paths = [paths]
    for path in paths:
        for file in log_files(path):
            with open(file, encoding="utf-8") as fh:
                for line in fh:
                    if not line.endswith("\n"):
                        break  # torn last line of a killed writer
                    try:
                        rec = json.loads(line)
                    except json.JSONDecodeError:
                        continue
                    if isinstance(rec, dict) and "params" in rec:
                        yield rec
