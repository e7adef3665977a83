"""The tuning database: one SQLite file per campaign, versioned rows, one writer at a time.

``results/<campaign>/tuning.sqlite`` holds, per task, every configuration that was the task's
best at some point. Rows are never updated or deleted (triggers refuse it): a newer result is a
new row with the next ``version`` of its task, and :meth:`TuningDB.current` returns each task's
highest version.

The file is safe on a cluster's shared file system (NFS, Lustre, GPFS;
:mod:`propulate.tuningdb.versions`): a writer holds a lease beside the database, writes each
transaction into a copy and renames the copy into place; a reader opens the current file
read-only and immutable, without locks or shared memory. So a reader (``suggest``, the report)
sees either all of an update or none of it, never waits for a writer and never delays one.

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
from propulate.runs.lease import EXPIRY, HEARTBEAT
from propulate.tuningdb import evidence, versions
from propulate.tuningdb.rows import ROW_COLUMNS, TuningRow, row_from_values, task_key, utc_now
from propulate.tuningdb.schema import SCHEMA_VERSION, statements
from propulate.tuningdb.versions import BUSY_TIMEOUT, Version

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


class TuningDB:
    """A campaign's tuning database (created on first write).

    Parameters
    ----------
    path : path
        The SQLite file, or a campaign results directory holding ``tuning.sqlite``.
    readonly : bool
        Open for reading only; a missing file is then a ``FileNotFoundError``. A reader takes
        no lock: it reads the version current when it opened or last looked (each query
        outside :meth:`snapshot` moves to a newer version if one was written).
    lease_heartbeat, lease_expiry : float
        A writer's lease timings in seconds (:mod:`propulate.runs.lease`): another writer
        waits while this one renews its lease, and takes over once it stopped renewing for
        ``lease_expiry`` seconds (at once when it ran on the same host and its process is
        gone).
    """

    def __init__(
        self,
        path: str | Path,
        readonly: bool = False,
        *,
        lease_heartbeat: float = HEARTBEAT,
        lease_expiry: float = EXPIRY,
    ) -> None:
        path = Path(path)
        self.path = path / DB_FILE if path.is_dir() else path
        self.readonly = readonly
        self.conn: sqlite3.Connection | None = None  # type: ignore[assignment]
        self._version: Version | None = None
        self._held = False
        if readonly:
            if not self.path.is_file():
                raise FileNotFoundError(f"{self.path}: no tuning database")
            self._open()
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        versions.hold(self.path, lease_heartbeat, lease_expiry)
        self._held = True
        try:
            with versions.write_lock(self.path):
                versions.remove_leftovers(self.path)  # versions of writers that died
                if versions.is_wal(self.path):
                    versions.convert_wal(self.path, self._lease)
            if not self.path.exists():
                with self.transaction():
                    self._create()
            else:
                self._open()
        except BaseException:
            self.close()
            raise

    @property
    def _lease(self) -> Any:
        return versions.lease_of(self.path)

    def _open(self) -> None:
        """(Re)open the version now at the path, read-only."""
        if self.conn is not None:
            self.conn.close()
        self._version = Version.of(self.path)
        if versions.is_wal(self.path):  # not converted yet: read it as SQLite's WAL allows
            self.conn = versions.open_legacy(self.path)
        else:
            self.conn = versions.open_version(self.path)

    def _fresh(self) -> sqlite3.Connection:
        """The connection, moved to a newer version first when one was published (outside a
        transaction or snapshot)."""
        if not self.conn.in_transaction:
            now = Version.of(self.path)
            if now is not None and now != self._version:
                self._open()
        return self.conn

    def _create(self) -> None:
        for statement in statements():
            self.conn.execute(statement)
        self.conn.execute(
            "INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (json.dumps(SCHEMA_VERSION),)
        )

    def close(self) -> None:
        """Close the connection (and give the writers' lease back)."""
        if self.conn is not None:
            self.conn.close()
        if self._held:
            self._held = False
            versions.let_go(self.path)

    def __enter__(self) -> TuningDB:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ transactions
    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction: the block changes a private copy of the current version,
        published as a whole (renamed into place) when the block ends, dropped when it raises.
        Another writer of the same database waits for its lease."""
        if self.readonly:
            raise sqlite3.OperationalError(f"{self.path}: opened read-only")
        lock = versions.write_lock(self.path)
        with lock:
            versions.mark_writer(self.path, True)
            tmp, conn = versions.start_version(self.path)
            old, self.conn = self.conn, conn
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    yield conn
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")
                conn.close()
                versions.publish(tmp, self.path, self._lease)
            except BaseException:
                conn.close()
                tmp.unlink(missing_ok=True)
                self.conn = old
                raise
            finally:
                versions.mark_writer(self.path, False)
            self.conn = old
            self._open()

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: every query in the block sees the same version."""
        conn = self._fresh()
        conn.execute("BEGIN")
        try:
            yield conn
        finally:
            conn.execute("COMMIT")

    # ------------------------------------------------------------------ meta
    def get_meta(self, key: str, default: Any = None) -> Any:
        """A stored metadata value (JSON-decoded), or ``default``."""
        row = self._fresh().execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
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
        if row.pareto:
            self.conn.execute(
                "INSERT INTO pareto (result_id, objectives, points) VALUES (?, ?, ?)",
                (row.id, json.dumps(row.pareto["objectives"]), json.dumps(row.pareto["points"])),
            )
        if row.evidence:
            evidence.write(self.conn, row.id, row.evidence)
        return row

    def pareto_of(self, row: TuningRow) -> dict[str, Any] | None:
        """The Pareto set stored with ``row`` (``None``: one objective, or a database from
        before Pareto sets)."""
        try:
            found = (
                self._fresh()
                .execute("SELECT objectives, points FROM pareto WHERE result_id = ?", (row.id,))
                .fetchone()
            )
        except sqlite3.OperationalError:  # no pareto table yet
            return None
        if found is None:
            return None
        return {"objectives": json.loads(found[0]), "points": json.loads(found[1])}

    def evidence_of(self, row: TuningRow) -> dict[str, Any] | None:
        """The paired re-measurement stored with ``row`` (:mod:`propulate.tuningdb.evidence`)."""
        return evidence.read(self._fresh(), row.id)

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
        A row the paired rounds chose (reason ``paired``) replaces another configuration
        whatever the losses, and one they beat does not come back for a lower tuning loss.
        """
        current = self.current_row(row.task)
        if current is None or current.fingerprint_hash != row.fingerprint_hash:
            better = True
        elif row.reason == "paired":
            better = current.params != row.params
        else:
            lower = row.loss is not None and (current.loss is None or row.loss < current.loss)
            better = lower and not evidence.beaten(self.evidence_of(current), row.params)
        if better:
            self.add(row)
        return better

    def current_row(self, task: Mapping[str, Any]) -> TuningRow | None:
        """The current (highest) version of a task's row, or ``None``."""
        values = (
            self._fresh()
            .execute(
                f"SELECT {', '.join(ROW_COLUMNS)} FROM results WHERE task_key = ? "
                "ORDER BY version DESC LIMIT 1",
                (task_key(task),),
            )
            .fetchone()
        )
        return row_from_values(values) if values else None

    def current(self) -> list[TuningRow]:
        """Every task's current row, ordered by task id (one consistent snapshot)."""
        rows = (
            self._fresh()
            .execute(
                f"SELECT {', '.join('r.' + c for c in ROW_COLUMNS)} FROM results r "
                "JOIN (SELECT task_key, MAX(version) AS v FROM results GROUP BY task_key) c "
                "ON r.task_key = c.task_key AND r.version = c.v ORDER BY r.task_id, r.task_key"
            )
            .fetchall()
        )
        return [row_from_values(v) for v in rows]

    def versions(self, task: Mapping[str, Any] | None = None) -> list[TuningRow]:
        """Every row (of one task, or of all), oldest first."""
        where, args = ("WHERE task_key = ?", (task_key(task),)) if task is not None else ("", ())
        rows = (
            self._fresh()
            .execute(f"SELECT {', '.join(ROW_COLUMNS)} FROM results {where} ORDER BY id", args)
            .fetchall()
        )
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
        for values in (
            self._fresh()
            .execute(f"SELECT {', '.join(cols)} FROM revalidations ORDER BY id")
            .fetchall()
        ):
            data = dict(zip(cols, values, strict=True))
            data["repeats"] = json.loads(data["repeats"])
            data["changes"] = json.loads(data["changes"])
            data["drifted"] = bool(data["drifted"])
            out.append(data)
        return out
