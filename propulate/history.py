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
    :func:`read_history` for the table columns).
``loss``, ``status``, ``error``
    The loss (``null`` unless the evaluation succeeded); ``"ok"``, ``"failed"``, ``"timeout"``
    or ``"interrupted"``; and one line saying what went wrong (``null`` when ok).
``start``, ``seconds``
    Unix time at which the evaluation started, and how long it took in seconds.
``traceback``, ``details`` (optional)
    The full traceback of an objective that raised, and method-specific details of the
    evaluation (e.g. a command's exit code); present only when there is something to keep.

Lines are flushed to the operating system as soon as they are written, so a process killed with
SIGKILL loses at most the evaluation it was running; a partly written last line is skipped when
reading. Nothing is ever rewritten, so the cost of logging one evaluation is constant.
"""

from __future__ import annotations

import json
import math
import os
import secrets
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from propulate.evaluate import Outcome
from propulate.record import META_COLUMNS, parameter_column

if TYPE_CHECKING:  # pandas is imported by the readers only: workers start without it
    import pandas as pd

Record = dict[str, Any]

EVAL_DIR = "evals"

#: Statuses that are not failures of the objective: a loss, or a stop by the run itself (a
#: signal, the time limit) in the middle of an evaluation.
NOT_FAILED = ("ok", "interrupted")


def new_session_id() -> str:
    """A short random id naming one start of a run (its log files)."""
    return secrets.token_hex(4)


def _clean(value: Any) -> Any:
    """Make numpy scalars and non-finite floats JSON-safe."""
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


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
        # Line buffering would flush per newline too; an explicit flush keeps the contract visible.
        self._fh: TextIO | None = open(self.path, "a", encoding="utf-8")  # noqa: SIM115
        self.seq = 0
        self._encoder = json.JSONEncoder(separators=(",", ":"), allow_nan=False, default=_clean)

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
        """Write one evaluation and flush it; returns the record written.

        Parameters
        ----------
        params : mapping
            The configuration, parameter name to value.
        loss : float or None
            The loss; ``None``, NaN or infinite make the record a failure.
        island, generation : int
            Island index and the worker's generation counter.
        start : float
            Unix time (seconds) at which the evaluation started.
        seconds : float
            Its duration in seconds.
        error : str, optional
            One line saying what went wrong; makes the record a failure.
        status : str, optional
            The status of a failure (``"failed"``, ``"timeout"``, ``"interrupted"``; default
            ``"failed"``). A record is ``"ok"`` only with a finite loss and no error.
        traceback : str, optional
            The traceback of an objective that raised (kept only when given).
        details : mapping, optional
            JSON-ready details of the evaluation (kept only when non-empty).
        """
        failed = (
            error is not None
            or loss is None
            or not math.isfinite(loss)
            or status not in (None, "ok")
        )
        if failed and error is None:
            error = (
                f"loss is not a finite number: {loss!r}"
                if loss is None or not math.isfinite(loss)
                else f"evaluation {status}"
            )
        record: Record = {
            **self.meta,
            "island": int(island),
            "rank": self.rank,
            "generation": int(generation),
            "session": self.session,
            "seq": self.seq,
            "params": {k: _clean(v) for k, v in params.items()},
            "loss": None if failed else float(loss),  # type: ignore[arg-type]
            "status": (status if status not in (None, "ok") else "failed") if failed else "ok",
            "error": error,
            "start": float(start),
            "seconds": float(seconds),
        }
        if traceback is not None:
            record["traceback"] = traceback
        if details:
            record["details"] = {str(k): _clean(v) for k, v in details.items()}
        self.write(record)
        return record

    def record(
        self, params: Mapping[str, Any], outcome: Outcome, *, island: int = 0, generation: int
    ) -> Record:
        """Write one evaluation's :class:`~propulate.evaluate.Outcome` (loss or failure, its
        status, error, traceback and details, when and how long): the one way every method
        records what an evaluation gave."""
        return self.append(
            params,
            outcome.loss,
            island=island,
            generation=generation,
            start=outcome.start,
            seconds=outcome.seconds,
            error=outcome.error,
            status=outcome.status,
            traceback=outcome.traceback,
            details=outcome.details or None,
        )

    def write(self, record: Record) -> None:
        """Write a ready record (one line) and flush it to the operating system."""
        if self._fh is None:
            raise ValueError(f"evaluation log {self.path} is closed")
        self._fh.write(self._encoder.encode(record) + "\n")
        self._fh.flush()
        self.seq += 1

    def sync(self) -> None:
        """Ask the OS to put the file on disk (``fsync``); for the end of a run."""
        if self._fh is not None:
            self._fh.flush()
            os.fsync(self._fh.fileno())

    def close(self) -> None:
        """Flush, sync and close the file (idempotent)."""
        if self._fh is not None:
            try:
                self.sync()
            finally:
                self._fh.close()
                self._fh = None

    def __enter__(self) -> EvaluationLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


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


@dataclass
class Tally:
    """Counts and time span of a run's records.

    Attributes
    ----------
    evaluations : int
        Records (failed ones included).
    failures : int
        Failed records: status ``"failed"`` or ``"timeout"`` (not ``"interrupted"``, which the
        run's own stop caused).
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
    """Count the records of one or more run directories or log files (no pandas)."""
    out = Tally()
    for rec in iter_records(paths):
        out.evaluations += 1
        out.failures += rec.get("status") not in NOT_FAILED
        try:
            start, end = float(rec["start"]), float(rec["start"]) + float(rec["seconds"])
        except (KeyError, TypeError, ValueError):
            continue
        out.first_start = start if out.first_start is None else min(out.first_start, start)
        out.last_end = end if out.last_end is None else max(out.last_end, end)
    return out


def read_history(paths: str | Path | Iterable[str | Path]) -> pd.DataFrame:
    """Read a run's evaluation logs into a DataFrame, one row per evaluation.

    Parameters
    ----------
    paths : path or iterable of paths
        Run directories (holding ``evals/``) or single ``.jsonl`` files.

    Returns
    -------
    pandas.DataFrame
        The log's own columns (:data:`~propulate.record.META_COLUMNS`) present in the records,
        then one column per parameter, then any other field of the records; rows ordered by
        start time. ``loss`` is NaN for failed evaluations. A parameter's column is named as
        the parameter, except that a parameter named like a log column (``loss``, ``status``,
        ``rank``, ...) gets the column ``"param.<name>"``
        (:func:`~propulate.record.parameter_column`); ``df.attrs["parameters"]`` lists the
        parameter columns in the space's order. Other record fields named like a parameter
        column are left out. An empty frame (with the log's columns) when there are no records.
    """
    import pandas as pd

    rows = []
    columns: dict[str, str] = {}  # parameter name -> column, in first-seen (space) order
    extras: dict[str, None] = {}
    for rec in iter_records(paths):
        row = {}
        for key, value in rec.items():
            if key == "params":
                continue
            row[key] = value
            if key not in META_COLUMNS:
                extras.setdefault(key)
        for name, value in rec["params"].items():
            col = columns.get(name) or columns.setdefault(name, parameter_column(name))
            row[col] = value
        rows.append(row)
    if not rows:
        empty = pd.DataFrame(columns=list(META_COLUMNS))
        empty.attrs["parameters"] = []
        return empty
    params = list(columns.values())
    df = pd.DataFrame.from_records(rows)
    meta = [c for c in META_COLUMNS if c in df.columns]
    rest = [c for c in extras if c not in set(params)]
    df = df[meta + params + rest].copy()
    df["loss"] = pd.to_numeric(df["loss"], errors="coerce")
    df = df.sort_values(["start", "rank", "seq"], kind="stable").reset_index(drop=True)
    df.attrs["parameters"] = params
    return df


def best_so_far(df: pd.DataFrame) -> pd.DataFrame:
    """Add ``evaluation`` (1-based count), ``elapsed`` (seconds since the first start) and
    ``best_loss`` (running minimum over successful evaluations) to a frame from
    :func:`read_history`, ordered by finish time."""
    out = df.copy()
    out["finish"] = out["start"] + out["seconds"]
    out = out.sort_values("finish", kind="stable").reset_index(drop=True)
    out["evaluation"] = range(1, len(out) + 1)
    out["elapsed"] = out["finish"] - (out["start"].min() if len(out) else 0.0)
    best = out["loss"].fillna(float("inf")).cummin()
    out["best_loss"] = best.where(best < float("inf"))
    return out
