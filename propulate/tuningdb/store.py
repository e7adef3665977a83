"""The tuning database: one SQLite file per campaign, versioned rows, transactional writers.

``results/<campaign>/tuning.sqlite`` holds, per task, every configuration that was the task's
best at some point. Rows are never updated or deleted (triggers refuse it): a newer result is a
new row with the next ``version`` of its task, and :meth:`TuningDB.current` returns each task's
highest version.
Every write runs in one ``BEGIN IMMEDIATE`` transaction in WAL mode, so a reader (``suggest``,
the report) sees either all of an update or none of it, and never waits for a writer.

The schema (tables ``results``, ``revalidations`` and ``meta``) is in
:mod:`propulate.tuningdb.schema`, the rows (:class:`TuningRow`) in :mod:`propulate.tuningdb.rows`.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from propulate.runs.fingerprint import canonical_json, fingerprint_hash
from propulate.tuningdb.rows import ROW_COLUMNS, TuningRow, row_from_values, task_key, utc_now
from propulate.tuningdb.schema import SCHEMA_VERSION, statements

__all__ = [
    "BUSY_TIMEOUT",
    "DB_FILE",
    "SCHEMA_VERSION",
    "TuningDB",
    "TuningRow",
    "task_key",
    "utc_now",
]

#: File name of the database inside a campaign's results directory.
DB_FILE = "tuning.sqlite"
#: Seconds a writer waits for another writer's transaction before giving up.
BUSY_TIMEOUT = 60.0


class TuningDB:
    """A campaign's tuning database (created on first write).

    Parameters
    ----------
    path : path
        The SQLite file, or a campaign results directory holding ``tuning.sqlite``.
    readonly : bool
        Open for reading only; a missing file is then a ``FileNotFoundError``.
    """

    def __init__(self, path: str | Path, readonly: bool = False) -> None:
        path = Path(path)
        self.path = path / DB_FILE if path.is_dir() else path
        self.readonly = readonly
        if readonly:
            if not self.path.is_file():
                raise FileNotFoundError(f"{self.path}: no tuning database")
            uri = f"{self.path.resolve().as_uri()}?mode=ro"
            self.conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT, isolation_level=None)
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT, isolation_level=None)
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            with self.transaction():
                self._create()

    def _create(self) -> None:
        for statement in statements():
            self.conn.execute(statement)
        self.conn.execute(
            "INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (json.dumps(SCHEMA_VERSION),)
        )

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()

    def __enter__(self) -> TuningDB:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ transactions
    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction (``BEGIN IMMEDIATE``): committed as a whole when the block
        ends, rolled back when it raises. Another writer waits up to :data:`BUSY_TIMEOUT`."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: every query in the block sees the same committed state."""
        self.conn.execute("BEGIN")
        try:
            yield self.conn
        finally:
            self.conn.execute("COMMIT")

    # ------------------------------------------------------------------ meta
    def get_meta(self, key: str, default: Any = None) -> Any:
        """A stored metadata value (JSON-decoded), or ``default``."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else default

    def set_meta(self, key: str, value: Any) -> None:
        """Store a metadata value (inside the caller's transaction if there is one)."""

        def put() -> None:
            self.conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, json.dumps(value)))

        if self.conn.in_transaction:
            put()
        else:
            with self.transaction():
                put()

    # ------------------------------------------------------------------ results
    def _insert(self, row: TuningRow) -> TuningRow:
        (version,) = self.conn.execute(
            "SELECT COALESCE(MAX(version), 0) + 1 FROM results WHERE task_key = ?", (row.key,)
        ).fetchone()
        row.version, row.created = int(version), row.created or utc_now()
        cur = self.conn.execute(
            "INSERT INTO results (task_key, task_id, task, version, params, loss, loss_std, "
            "repeats, method, algorithm, evaluations, source, reason, config_hash, "
            "package_version, created, fingerprint, fingerprint_hash) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                row.key,
                row.task_id,
                canonical_json(row.task),
                row.version,
                canonical_json(row.params),
                row.loss,
                row.loss_std,
                json.dumps(row.repeats),
                row.method,
                row.algorithm,
                int(row.evaluations),
                row.source,
                row.reason,
                row.config_hash,
                row.package_version,
                row.created,
                canonical_json(row.fingerprint),
                row.fingerprint_hash,
            ),
        )
        row.id = int(cur.lastrowid or 0)
        return row

    def add(self, row: TuningRow) -> TuningRow:
        """Store ``row`` as its task's next version (inside the caller's transaction if any)."""
        if self.conn.in_transaction:
            return self._insert(row)
        with self.transaction():
            return self._insert(row)

    def offer(self, row: TuningRow) -> bool:
        """Store ``row`` as a new version if it improves on its task's current one.

        It does when the task has no row yet, when the current row was measured on another
        machine (different fingerprint), or when its loss is lower. Offering the same result
        twice therefore adds it once. Runs inside the caller's transaction if there is one.
        """
        current = self.current_row(row.task)
        better = (
            current is None
            or current.fingerprint_hash != row.fingerprint_hash
            or (row.loss is not None and (current.loss is None or row.loss < current.loss))
        )
        if better:
            self.add(row)
        return better

    def current_row(self, task: Mapping[str, Any]) -> TuningRow | None:
        """The current (highest) version of a task's row, or ``None``."""
        values = self.conn.execute(
            f"SELECT {', '.join(ROW_COLUMNS)} FROM results WHERE task_key = ? "
            "ORDER BY version DESC LIMIT 1",
            (task_key(task),),
        ).fetchone()
        return row_from_values(values) if values else None

    def current(self) -> list[TuningRow]:
        """Every task's current row, ordered by task id (one consistent snapshot)."""
        rows = self.conn.execute(
            f"SELECT {', '.join('r.' + c for c in ROW_COLUMNS)} FROM results r "
            "JOIN (SELECT task_key, MAX(version) AS v FROM results GROUP BY task_key) c "
            "ON r.task_key = c.task_key AND r.version = c.v ORDER BY r.task_id, r.task_key"
        ).fetchall()
        return [row_from_values(v) for v in rows]

    def versions(self, task: Mapping[str, Any] | None = None) -> list[TuningRow]:
        """Every row (of one task, or of all), oldest first."""
        where, args = ("WHERE task_key = ?", (task_key(task),)) if task is not None else ("", ())
        rows = self.conn.execute(
            f"SELECT {', '.join(ROW_COLUMNS)} FROM results {where} ORDER BY id", args
        ).fetchall()
        return [row_from_values(v) for v in rows]

    # ------------------------------------------------------------------ revalidations
    def add_revalidation(
        self,
        row: TuningRow,
        new_loss: float | None,
        repeats: list[float],
        drift: float | None,
        threshold: float,
        drifted: bool,
        changes: list[str],
        fingerprint: Mapping[str, Any],
    ) -> None:
        """Record a re-measurement of the stored row ``row`` on the machine ``fingerprint``."""

        def put() -> None:
            self.conn.execute(
                "INSERT INTO revalidations (result_id, task_key, task_id, created, old_loss, "
                "new_loss, repeats, drift, threshold, drifted, changes, fingerprint_hash) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    row.id,
                    row.key,
                    row.task_id,
                    utc_now(),
                    row.loss,
                    new_loss,
                    json.dumps(repeats),
                    drift,
                    threshold,
                    int(drifted),
                    json.dumps(changes),
                    fingerprint_hash(fingerprint),
                ),
            )

        if self.conn.in_transaction:
            put()
        else:
            with self.transaction():
                put()

    def revalidations(self) -> list[dict[str, Any]]:
        """Every re-measurement, oldest first, as dicts (the report's drift table)."""
        cols = (
            "id",
            "result_id",
            "task_id",
            "created",
            "old_loss",
            "new_loss",
            "repeats",
            "drift",
            "threshold",
            "drifted",
            "changes",
            "fingerprint_hash",
        )
        out = []
        for values in self.conn.execute(
            f"SELECT {', '.join(cols)} FROM revalidations ORDER BY id"
        ).fetchall():
            data = dict(zip(cols, values, strict=True))
            data["repeats"] = json.loads(data["repeats"])
            data["changes"] = json.loads(data["changes"])
            data["drifted"] = bool(data["drifted"])
            out.append(data)
        return out
