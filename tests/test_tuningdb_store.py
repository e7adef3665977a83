"""The tuning database's store (versioned rows that are never changed or deleted, transactions,
readers during a write) and the machine fingerprint.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from propulate.runs.fingerprint import (
    FIELDS,
    OVERRIDE_ENV,
    config_hash,
    cpu_model,
    differences,
    hostname_pattern,
    machine_fingerprint,
)
from propulate.tuningdb.store import TuningDB, TuningRow
from tests.tuningdb_utils import MACHINE_A, MACHINE_B


def row(
    task: float,
    loss: float | None,
    fp: dict[str, Any] = MACHINE_A,
    x: float = 0.5,
    task_id: str = "a",
) -> TuningRow:
    return TuningRow(
        task_id=task_id,
        task={"t": task},
        params={"x": x},
        loss=loss,
        method="evolve",
        algorithm="propulate",
        evaluations=10,
        fingerprint=fp,
    )


# ---------------------------------------------------------------------------- store
def test_rows_are_versioned_and_never_overwritten(tmp_path: Path) -> None:
    with TuningDB(tmp_path / "t.sqlite") as db:
        assert db.offer(row(0.5, 2.0))
        assert not db.offer(row(0.5, 3.0, x=0.1))  # worse on the same machine
        assert not db.offer(row(0.5, 2.0))  # the same result again
        assert db.offer(row(0.5, 1.0, x=0.2))  # better: version 2
        assert db.offer(row(0.5, 5.0, MACHINE_B, x=0.3))  # other machine: version 3
        assert db.offer(row(1.0, 4.0, task_id="b"))
        current = {r.task_id: r for r in db.current()}
        assert (current["a"].version, current["a"].loss, current["a"].params) == (
            3,
            5.0,
            {"x": 0.3},
        )
        assert current["b"].version == 1
        history = db.versions({"t": 0.5})
        assert [(r.version, r.loss) for r in history] == [(1, 2.0), (2, 1.0), (3, 5.0)]
        assert history[0].fingerprint == MACHINE_A and history[0].created.endswith("Z")


def test_rows_cannot_be_changed_or_deleted(tmp_path: Path) -> None:
    import sqlite3

    with TuningDB(tmp_path) as db:
        db.add(row(0.5, 1.0))
        for statement in ("UPDATE results SET loss = 0", "DELETE FROM results"):
            with pytest.raises(sqlite3.DatabaseError, match="never"), db.transaction() as conn:
                conn.execute(statement)
        with pytest.raises(sqlite3.DatabaseError, match="readonly"):  # only in a transaction
            db.conn.execute("DELETE FROM results")
        assert [r.loss for r in db.versions()] == [1.0]


def test_a_failed_transaction_leaves_nothing(tmp_path: Path) -> None:
    with TuningDB(tmp_path) as db:
        with pytest.raises(RuntimeError), db.transaction():
            db.add(row(0.5, 1.0))
            raise RuntimeError("interrupted")
        assert db.current() == []


def test_a_reader_polling_during_a_write_never_sees_half_an_update(tmp_path: Path) -> None:
    path = tmp_path / "tuning.sqlite"
    batch = 60
    with TuningDB(path) as db:
        db.add(row(0.0, 1.0, task_id="seed"))
    started, done = threading.Event(), threading.Event()
    seen: list[int] = []
    polls_during_write: list[int] = []

    def write() -> None:
        with TuningDB(path) as db, db.transaction():
            started.set()
            for i in range(batch):
                db.add(row(0.01 * (i + 1), float(i), task_id=f"t{i:03d}"))
                time.sleep(0.002)
        done.set()

    writer = threading.Thread(target=write)
    writer.start()
    started.wait(30)
    with TuningDB(path, readonly=True) as reader:
        while not done.is_set():
            n = len(reader.current())
            seen.append(n)
            polls_during_write.append(n)
            time.sleep(0.001)
        writer.join()
        seen.append(len(reader.current()))
    assert polls_during_write, "the reader never polled while the write was open"
    assert set(seen) <= {1, 1 + batch}, sorted(set(seen))
    assert seen[-1] == 1 + batch


# ---------------------------------------------------------------------------- fingerprint
def test_fingerprint_fields_hostname_pattern_and_override(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert hostname_pattern("node0123.cluster.example") == "node#"
    assert hostname_pattern("gpu12-b3") == "gpu#-b#"
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nmodel name\t: Fancy  CPU 9000\n")
    assert cpu_model(info) == "Fancy CPU 9000"
    fp = machine_fingerprint()
    assert set(FIELDS) <= set(fp) and fp["cores"] == os.cpu_count()
    assert fp["blas"] != "none" and fp["mpi"] not in ("none", "unknown")
    monkeypatch.setenv(OVERRIDE_ENV, json.dumps({"blas": "fake 9"}))
    assert machine_fingerprint()["blas"] == "fake 9"
    assert differences(fp, machine_fingerprint()) == [f"blas: {fp['blas']} -> fake 9"]
    assert config_hash({"a": 1, "b": [1, 2]}) == config_hash({"b": [1, 2], "a": 1})
    assert config_hash({"a": 1}) != config_hash({"a": 2})
