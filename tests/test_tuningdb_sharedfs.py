"""The tuning database where campaigns live: a shared file system without SQLite's shared
memory (issue: WAL needs an mmap of ``-shm`` that NFS, Lustre and GPFS do not keep coherent).

Readers polling while a writer process publishes versions, a writer SIGKILLed mid-update, a
database written in WAL mode converted once, and the whole cycle on a FUSE pass-through mount
with direct I/O (no shared ``mmap``), where WAL fails with "disk I/O error".
"""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from propulate.tuningdb.rows import TuningRow
from propulate.tuningdb.schema import statements
from propulate.tuningdb.store import TuningDB
from propulate.tuningdb.versions import is_wal

FP = {"cpu": "test", "cores": 2}

#: A writer process: BATCHES transactions of SIZE rows each; with HOLD it stops inside its
#: first transaction (after writing its rows) and touches READY.
WRITER = """
import sys, time
from pathlib import Path
from propulate.tuningdb.rows import TuningRow
from propulate.tuningdb.store import TuningDB

db_path, batches, size, hold = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
with TuningDB(db_path) as db:
    for b in range(batches):
        with db.transaction():
            for i in range(size):
                db.add(TuningRow(task_id=f"t{b}_{i}", task={"t": b * 1000 + i}, params={"x": i},
                       loss=float(i), method="evolve", algorithm="propulate", evaluations=1,
                       fingerprint={"cpu": "test", "cores": 2}))
            if hold != "-":
                Path(hold).write_text("ready")
                time.sleep(120)
        time.sleep(0.02)
"""

#: A reader process: polls the row count, touches READY after its first look, stops once STOP
#: exists; prints every count it saw.
READER = """
import sys, time
from pathlib import Path
from propulate.tuningdb.store import TuningDB

db_path, ready, stop = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
seen = []
end = time.monotonic() + 120
with TuningDB(db_path, readonly=True) as db:
    while time.monotonic() < end:
        with db.snapshot():
            seen.append(len(db.versions()))
        ready.touch()
        if stop.exists():
            break
        time.sleep(0.002)
print(" ".join(map(str, seen)))
"""


def row(i: int, version_of: int | None = None) -> TuningRow:
    return TuningRow(
        task_id=f"a{i if version_of is None else version_of}",
        task={"t": i if version_of is None else version_of},
        params={"x": i},
        loss=float(i),
        method="evolve",
        algorithm="propulate",
        evaluations=3,
        fingerprint=FP,
    )


def python(code: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def concurrent_readers_see_whole_versions(db: Path) -> None:
    """Two reader processes poll while a writer process publishes 15 versions of 7 rows."""
    with TuningDB(db) as first:
        first.add(row(0))
    flags = db.parent / "flags"
    flags.mkdir(exist_ok=True)
    stop = flags / "stop"
    stop.unlink(missing_ok=True)
    ready = [flags / f"ready{i}" for i in range(2)]
    readers = [python(READER, str(db), str(r), str(stop)) for r in ready]
    deadline = time.monotonic() + 60
    while not all(r.exists() for r in ready) and time.monotonic() < deadline:
        time.sleep(0.02)
    t = time.monotonic()
    writer = python(WRITER, str(db), "15", "7", "-")
    _, err = writer.communicate(timeout=120)
    writing = time.monotonic() - t
    time.sleep(0.2)
    stop.touch()
    assert writer.returncode == 0, err
    counts = []
    for reader in readers:
        out, err = reader.communicate(timeout=120)
        assert reader.returncode == 0, err
        counts.append([int(n) for n in out.split()])
    for seen in counts:
        assert all((n - 1) % 7 == 0 for n in seen), sorted(set(seen))  # never half an update
        assert seen == sorted(seen)  # a reader never goes back to an older version
        assert len(set(seen)) > 2, "the readers never polled during the writes"
    assert max(max(seen) for seen in counts) == 1 + 15 * 7
    assert writing < 20, f"the writer took {writing:.1f} s: readers held it up"


# ----------------------------------------------------------------------------- local file system
def test_readers_polling_during_writes_see_whole_versions(tmp_path: Path) -> None:
    concurrent_readers_see_whole_versions(tmp_path / "tuning.sqlite")


def test_a_writer_killed_mid_update_leaves_the_previous_version(tmp_path: Path) -> None:
    db = tmp_path / "tuning.sqlite"
    with TuningDB(db) as first:
        first.add(row(0))
        first.add(row(1))
    ready = tmp_path / "ready"
    writer = python(WRITER, str(db), "1", "50", str(ready))
    deadline = time.monotonic() + 60
    while not ready.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert ready.exists(), writer.stderr.read() if writer.poll() is not None else "no ready"
    with TuningDB(db, readonly=True) as reader:  # read while the writer is inside its update
        assert len(reader.versions()) == 2
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait(timeout=30)
    leftovers = list(tmp_path.glob(".tuning.sqlite.*.tmp"))
    assert len(leftovers) == 1  # the unpublished version of the killed writer
    with TuningDB(db, readonly=True) as reader:
        assert [r.task_id for r in reader.versions()] == ["a0", "a1"]
    # The next writer takes the lease over (its owner's process is gone), removes the
    # leftover and writes.
    t = time.monotonic()
    with TuningDB(db) as second:
        second.add(row(2))
    assert time.monotonic() - t < 10
    assert not list(tmp_path.glob(".tuning.sqlite.*.tmp"))
    with TuningDB(db, readonly=True) as reader:
        assert [r.task_id for r in reader.versions()] == ["a0", "a1", "a2"]


def wal_database(path: Path) -> list[tuple]:
    """A database as the WAL-mode store wrote it, with rows still in its ``-wal`` file (a
    writer that did not checkpoint). Returns its rows."""
    with TuningDB(path) as db:  # the schema and two tasks with versions, via the store
        db.add(row(0))
        db.add(row(5, version_of=0))
        db.add(row(1))
    conn = sqlite3.connect(path, isolation_level=None)
    assert conn.execute("PRAGMA journal_mode=WAL").fetchone() == ("wal",)
    conn.execute("PRAGMA wal_autocheckpoint=0")
    for statement in statements():
        conn.execute(statement)
    conn.execute(
        "INSERT INTO results (task_key, task_id, task, version, params, loss, loss_std, repeats, "
        "method, algorithm, evaluations, source, reason, config_hash, package_version, created, "
        "fingerprint, fingerprint_hash) SELECT task_key, task_id, task, version + 1, params, "
        "loss - 1, loss_std, repeats, method, algorithm, evaluations, source, 'tuned', "
        "config_hash, package_version, created, fingerprint, fingerprint_hash FROM results "
        "WHERE task_id = 'a1'"
    )
    rows = conn.execute("SELECT * FROM results ORDER BY id").fetchall()
    # Keep the -wal file as a killed writer leaves it: copy the files while the connection
    # is open (closing it would checkpoint and remove the WAL).
    keep = path.with_name("wal-copy")
    keep.mkdir()
    for suffix in ("", "-wal"):
        shutil.copy2(path.with_name(path.name + suffix), keep / (path.name + suffix))
    conn.close()
    path.unlink()
    for suffix in ("", "-wal"):
        shutil.copy2(keep / (path.name + suffix), path.with_name(path.name + suffix))
    return rows


def test_a_wal_database_is_converted_once_with_its_rows_and_versions(tmp_path: Path) -> None:
    db = tmp_path / "tuning.sqlite"
    rows = wal_database(db)
    assert is_wal(db) and db.with_name("tuning.sqlite-wal").stat().st_size > 0
    assert len(rows) == 4
    with TuningDB(db) as writer:  # the next writer converts it
        assert not is_wal(db)
        assert not db.with_name("tuning.sqlite-wal").exists()
        current = {r.task_id: (r.version, r.loss) for r in writer.current()}
        assert current == {"a0": (2, 5.0), "a1": (2, 0.0)}
        writer.add(row(7, version_of=1))
    with open(db, "rb") as fh:
        assert fh.read(20)[18:20] == b"\x01\x01"  # rollback journal mode
    conn = sqlite3.connect(f"{db.as_uri()}?mode=ro&immutable=1", uri=True)
    after = conn.execute("SELECT * FROM results ORDER BY id").fetchall()
    conn.close()
    assert after[:4] == rows and after[4][4] == 3  # rows intact; the new row is version 3


# ----------------------------------------------------------------------------- FUSE, direct I/O
@pytest.fixture
def no_mmap_mount(tmp_path: Path) -> Iterator[Path]:
    """A bindfs pass-through mount with direct I/O: files there cannot be ``mmap``-ed shared.

    Skipped where bindfs cannot mount (no FUSE device, no permission) unless
    ``PROPULATE_REQUIRE_FUSE=1`` (CI installs bindfs with ci/fuse/install.sh): then it fails.
    """
    source, mount = tmp_path / "backing", tmp_path / "mnt"
    source.mkdir()
    mount.mkdir()
    required = os.environ.get("PROPULATE_REQUIRE_FUSE") == "1"
    bindfs = shutil.which("bindfs")
    problem = None
    if bindfs is None:
        problem = "bindfs is not installed (bash ci/fuse/install.sh)"
    else:
        proc = subprocess.run(
            [bindfs, "-o", "direct_io", str(source), str(mount)],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        if proc.returncode != 0:
            problem = f"bindfs cannot mount: {proc.stderr.strip()}"
    if problem:
        if required:
            pytest.fail(problem)
        pytest.skip(problem)
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True, check=False)


def test_the_mount_has_no_shared_mmap_so_wal_fails_there(no_mmap_mount: Path) -> None:
    conn = sqlite3.connect(no_mmap_mount / "wal.sqlite")
    conn.execute("PRAGMA journal_mode=WAL")
    with pytest.raises(sqlite3.OperationalError, match="disk I/O error"):
        conn.execute("CREATE TABLE t (x)")
    conn.close()


def test_the_database_works_on_a_file_system_without_shared_mmap(no_mmap_mount: Path) -> None:
    db = no_mmap_mount / "tuning.sqlite"
    concurrent_readers_see_whole_versions(db)
    shown = subprocess.run(
        [
            sys.executable,
            "-m",
            "propulate",
            "tuningdb",
            "show",
            "--db",
            str(no_mmap_mount),
            "--all",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert shown.returncode == 0, shown.stderr
    assert len(shown.stdout.splitlines()) == 1 + 15 * 7
    assert not list(no_mmap_mount.glob("tuning.sqlite-*"))  # no -wal, -shm or -journal
