"""How the tuning database's file changes: whole versions renamed into place, one writer.

The database must live on a cluster's shared file system (NFS, Lustre, GPFS), written by a
scheduled job on one node while applications on other nodes read it. SQLite's WAL mode needs
shared memory (an ``mmap`` of the ``-shm`` file) that these file systems do not keep coherent
across hosts, and their byte-range locks are not always honoured. So:

* **One writer at a time**, by a lease (:mod:`propulate.runs.lease`: a file created with
  ``link``, renewed by a heartbeat) in ``<db>.lease/`` beside the database, not by SQLite's
  locks. Writers in one process share the lease (:func:`hold`).
* **A write builds the next version beside the current one**: the file is copied to
  ``.<db>.<token>.tmp``, changed there in one transaction (rollback journal in memory: no
  journal or shared-memory file on the shared file system), synced, and renamed over the
  database (:func:`publish`). ``rename`` is atomic on these file systems: a reader opens
  either the old or the new version, never half of one. A writer killed before the rename
  leaves the previous version in place and a temporary file that the next writer removes.
* **Readers open a version as immutable** (:func:`open_version`: SQLite's ``immutable=1``):
  no lock, no journal, no shared memory. The file they opened is never written again, so they
  read a consistent version for as long as they keep it open and never block the writer; a
  reader that lives on notices a newer version by the file's identity (:class:`Version`).
* **A database written in WAL mode** (by earlier versions of this package) is converted once,
  by its next writer, with SQLite's backup (every row, version and sequence intact) into a
  rollback-journal file renamed into place (:func:`convert_wal`).
"""

from __future__ import annotations

import os
import secrets
import shutil
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path

from propulate.runs.lease import EXPIRY, HEARTBEAT, Lease

#: Seconds a connection waits for SQLite's own locks (only ever held within this process).
BUSY_TIMEOUT = 60.0


def lease_name(path: Path) -> str:
    """The lease folder of the database ``path`` (beside it): ``<name>.lease``."""
    return f"{path.name}.lease"


def tmp_prefix(path: Path) -> str:
    """The name prefix of a writer's unpublished versions of ``path``."""
    return f".{path.name}."


def is_wal(path: Path) -> bool:
    """Whether ``path`` is a database in WAL mode (header bytes 18-19 are 2, or a ``-wal``
    file lies beside it)."""
    try:
        with open(path, "rb") as fh:
            header = fh.read(20)
    except OSError:
        return False
    wal_file = path.with_name(path.name + "-wal")
    return (len(header) == 20 and header[18] == 2) or wal_file.exists()


@dataclass(frozen=True)
class Version:
    """The identity of the file at a path (a rename makes a new one)."""

    inode: int
    device: int
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, path: Path) -> Version | None:
        """The identity of the file now at ``path`` (``None``: no file)."""
        try:
            st = os.stat(path)
        except OSError:
            return None
        return cls(st.st_ino, st.st_dev, st.st_size, st.st_mtime_ns)


def open_version(path: Path) -> sqlite3.Connection:
    """A read-only connection to the version now at ``path``: no lock, journal or shared
    memory (the file is never written in place)."""
    uri = f"{path.resolve().as_uri()}?mode=ro&immutable=1"
    return sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT, isolation_level=None)


def open_legacy(path: Path) -> sqlite3.Connection:
    """A read-only connection to a WAL-mode database not converted yet (needs WAL's shared
    memory, as before: the next writer converts the file)."""
    uri = f"{path.resolve().as_uri()}?mode=ro"
    return sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT, isolation_level=None)


def new_tmp(path: Path) -> Path:
    """A fresh name beside ``path`` for the next version."""
    return path.with_name(f"{tmp_prefix(path)}{os.getpid()}.{secrets.token_hex(4)}.tmp")


def start_version(path: Path) -> tuple[Path, sqlite3.Connection]:
    """Copy the current version (if any) to a temporary file and open it for writing."""
    tmp = new_tmp(path)
    if path.exists():
        shutil.copyfile(path, tmp)
    conn = sqlite3.connect(tmp, timeout=BUSY_TIMEOUT, isolation_level=None)
    conn.execute("PRAGMA journal_mode=MEMORY")  # private file: no journal on the shared FS
    return tmp, conn


def _fsync(path: Path, directory: bool = False) -> None:
    fd = os.open(path, os.O_RDONLY | (os.O_DIRECTORY if directory else 0))
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems cannot sync a directory; the rename is still atomic
    finally:
        os.close(fd)


def publish(tmp: Path, path: Path, lease: Lease) -> None:
    """Make the written temporary file the current version (atomic ``rename``), if this
    process still holds the lease.

    Raises
    ------
    RuntimeError
        When another writer took the lease over (this one stalled): nothing is published.
    """
    _fsync(tmp)
    if not lease.renew():
        tmp.unlink(missing_ok=True)
        raise RuntimeError(
            f"{path}: another writer took the database over (this writer's lease expired); "
            "the update was not written"
        )
    os.replace(tmp, path)
    _fsync(path.parent, directory=True)


def remove_leftovers(path: Path) -> int:
    """Remove unpublished versions of writers that died (call while holding the lease)."""
    removed = 0
    for stray in path.parent.glob(f"{tmp_prefix(path)}*.tmp"):
        stray.unlink(missing_ok=True)
        removed += 1
    return removed


def convert_wal(path: Path, lease: Lease) -> None:
    """Turn a WAL-mode database into a rollback-journal one with the same content.

    The WAL is read with ``locking_mode=EXCLUSIVE`` (its index then lives in this process's
    heap, not in shared memory), copied with SQLite's backup API into a new file, and that
    file is renamed into place; the ``-wal`` and ``-shm`` files are removed afterwards.
    """
    source = sqlite3.connect(path, timeout=BUSY_TIMEOUT, isolation_level=None)
    tmp = new_tmp(path)
    try:
        source.execute("PRAGMA locking_mode=EXCLUSIVE")
        target = sqlite3.connect(tmp, timeout=BUSY_TIMEOUT, isolation_level=None)
        try:
            source.backup(target)
            target.execute("PRAGMA journal_mode=DELETE")
        finally:
            target.close()
    finally:
        source.close()
    publish(tmp, path, lease)
    for suffix in ("-wal", "-shm"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)


# ------------------------------------------------------------------------- the writers' lease
_HELD: dict[Path, list] = {}  # database path -> [lease, users, write lock, writing thread]
_GUARD = threading.Lock()
_ACQUIRE = threading.Lock()


def hold(path: Path, heartbeat: float = HEARTBEAT, expiry: float = EXPIRY) -> Lease:
    """Take (or share, within this process) the writers' lease of the database ``path``;
    waits while a writer elsewhere holds it. Give it back with :func:`let_go`."""
    key = path.resolve()
    with _ACQUIRE:  # one acquisition at a time in this process (a second would wait on ours)
        with _GUARD:
            entry = _HELD.get(key)
            if entry is not None:
                entry[1] += 1
                return entry[0]
        lease = Lease(path.parent, heartbeat=heartbeat, expiry=expiry, name=lease_name(path))
        lease.acquire()
        with _GUARD:
            _HELD[key] = [lease, 1, threading.Lock(), None]
        return lease


def lease_of(path: Path) -> Lease:
    """The lease this process holds on the database ``path`` (taken with :func:`hold`)."""
    with _GUARD:
        return _HELD[path.resolve()][0]


def let_go(path: Path) -> None:
    """Give back a lease taken with :func:`hold` (released when its last user lets go)."""
    key = path.resolve()
    with _GUARD:
        entry = _HELD[key]
        entry[1] -= 1
        if entry[1]:
            return
        del _HELD[key]
    entry[0].release()


def write_lock(path: Path) -> threading.Lock:
    """The lock that orders this process's writers of ``path`` (one version at a time).

    Raises
    ------
    RuntimeError
        When the calling thread already writes ``path`` (a nested write would lose the inner
        one's rows when the outer one publishes).
    """
    key = path.resolve()
    with _GUARD:
        entry = _HELD[key]
        if entry[3] == threading.get_ident():
            raise RuntimeError(f"{path}: a write transaction is already open in this thread")
    return entry[2]


def mark_writer(path: Path, writing: bool) -> None:
    """Record which thread writes ``path`` now (see :func:`write_lock`)."""
    with _GUARD:
        _HELD[path.resolve()][3] = threading.get_ident() if writing else None
