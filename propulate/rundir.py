"""A run directory's summary: one typed record, one writer, one reader.

Every method (the island model, random search, Optuna, MLA, TLA1/TLA2) writes
``DIR/summary.json`` through :func:`write_summary` and every consumer (the report, the status
command, the tests) reads it through :func:`read_summary`.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

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
        ``propulate``, ``random``, ``optuna``, ``mla``, ``tla1`` or ``tla2``.
    seed : int or None
        The run's seed.
    parameters : list of str
        The parameter names of the run's space, in the space's order.
    best_params : dict or None
        The best configuration found (``None`` when every evaluation failed).
    best_loss : float or None
        Its loss.
    evaluations : int
        Evaluations recorded over all sessions of the run (failed ones included).
    failures : int
        Failed evaluations among them.
    wall_time : float
        Seconds from the first evaluation's start to the last one's end, over all sessions.
    evaluations_per_second : float
        ``evaluations / wall_time`` (0 when ``wall_time`` is 0).
    ranks : int
        MPI ranks of the last session.
    stop_reason : str or None
        Why the last session stopped (``budget``, ``time limit``, ``signal``, ...).
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
    wall_time: float = 0.0
    evaluations_per_second: float = 0.0
    ranks: int = 1
    stop_reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The summary as JSON-ready data."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunSummary:
        """Read a summary written by :meth:`to_dict` (unknown keys are ignored)."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


def write_summary(directory: str | Path, summary: RunSummary) -> Path:
    """Write ``DIR/summary.json`` atomically (a reader never sees half a file)."""
    path = Path(directory) / SUMMARY_FILE
    tmp = path.with_name(f".{SUMMARY_FILE}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(summary.to_dict(), indent=2) + "\n")
    tmp.replace(path)
    return path


def read_summary(directory: str | Path) -> RunSummary | None:
    """The summary of a run directory, or ``None`` when it has none (yet) or it is unreadable."""
    path = Path(directory) / SUMMARY_FILE
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    if not isinstance(data, dict):
        return None
    return RunSummary.from_dict(data)
