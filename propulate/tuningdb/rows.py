"""A tuning database row: one version of one task's best configuration, and its identity.

:class:`TuningRow` is what :class:`propulate.tuningdb.store.TuningDB` stores and returns;
:func:`task_key` is a task's identity (the database's ``task_key`` column) and
:func:`row_from_values` reads a row back from the ``results`` table's columns.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from propulate.runs.fingerprint import canonical_json, fingerprint_hash

__all__ = [
    "JSON_COLUMNS",
    "ROW_COLUMNS",
    "TuningRow",
    "row_from_values",
    "task_key",
    "utc_now",
]


def task_key(task: Mapping[str, Any]) -> str:
    """The identity of a task: its values as canonical JSON (ids are labels only)."""
    return canonical_json(dict(task))


def utc_now() -> str:
    """The current UTC time as ISO 8601 with seconds (``2026-12-03T11:24:16Z``)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


@dataclass
class TuningRow:
    """One version of one task's best configuration.

    Attributes
    ----------
    task_id : str
        The task's id in its campaign (e.g. ``train00``, ``tall``).
    task : dict
        The task's values.
    params : dict
        The configuration.
    loss : float or None
        Its loss in the objective's units (mean over ``repeats`` when there are several).
    method : str
        The stage that found it: ``evolve``, ``mla``, ``tla1`` or ``tla2``.
    algorithm : str
        The run's method as its summary names it (``propulate``, ``random``, ``optuna``, ...).
    evaluations : int
        Evaluations of the run that found it.
    repeats : list of float
        Every measured loss of this configuration (several for a repeated measurement).
    loss_std : float or None
        Sample standard deviation of ``repeats`` (``None`` with fewer than two).
    source : str or None
        The run directory it was read from.
    reason : str
        ``tuned`` (from a campaign's runs), ``revalidated`` (re-measured on a changed machine),
        ``retuned`` (TLA2 after drift) or ``paired`` (the paired re-measurement found another
        configuration faster than the tuning's pick).
    config_hash, package_version, created : str
        Provenance: hash of the campaign config, ``propulate.__version__``, UTC date.
    fingerprint : dict
        The machine it was measured on (:func:`propulate.runs.fingerprint.machine_fingerprint`).
    version, id : int
        Set by the database: the task's version number (1, 2, ...) and the row's id.
    pareto : dict or None
        A task tuned for several objectives: its Pareto set, ``{"objectives": {name:
        direction}, "points": [{"params", "objectives"}, ...]}`` (the ``pareto`` table;
        :mod:`propulate.tuningdb.pareto_set`); ``None`` for one objective.
    evidence : dict or None
        The paired re-measurement that chose this configuration, or confirmed it
        (:func:`propulate.remeasure.verdict.verdict`; the ``evidence`` table); ``None`` without
        one. A row the paired rounds chose over the tuning's pick has reason ``paired``.
    """

    task_id: str
    task: dict[str, Any]
    params: dict[str, Any]
    loss: float | None
    method: str
    algorithm: str
    evaluations: int
    repeats: list[float] = field(default_factory=list)
    loss_std: float | None = None
    source: str | None = None
    reason: str = "tuned"
    config_hash: str | None = None
    package_version: str = ""
    created: str = ""
    fingerprint: dict[str, Any] = field(default_factory=dict)
    version: int = 0
    id: int = 0
    pareto: dict[str, Any] | None = None
    evidence: dict[str, Any] | None = None

    @property
    def key(self) -> str:
        """The task's identity (:func:`task_key`)."""
        return task_key(self.task)

    @property
    def fingerprint_hash(self) -> str:
        """Short hash of :attr:`fingerprint`."""
        return fingerprint_hash(self.fingerprint)

    def to_dict(self) -> dict[str, Any]:
        """The row as JSON-ready data (with its fingerprint hash)."""
        return {**asdict(self), "fingerprint_hash": self.fingerprint_hash}


#: Columns of the ``results`` table read back into a :class:`TuningRow`, in query order.
ROW_COLUMNS = (
    "id",
    "task_id",
    "task",
    "version",
    "params",
    "loss",
    "loss_std",
    "repeats",
    "method",
    "algorithm",
    "evaluations",
    "source",
    "reason",
    "config_hash",
    "package_version",
    "created",
    "fingerprint",
)
#: Those of them stored as JSON text.
JSON_COLUMNS = ("task", "params", "repeats", "fingerprint")


def row_from_values(values: Sequence[Any]) -> TuningRow:
    """A row read from the ``results`` table.

    Parameters
    ----------
    values : sequence
        The values of :data:`ROW_COLUMNS`, in that order.

    Returns
    -------
    TuningRow
        The row, its JSON columns decoded.
    """
    data = dict(zip(ROW_COLUMNS, values, strict=True))
    for name in JSON_COLUMNS:
        data[name] = json.loads(data[name])
    return TuningRow(**data)
