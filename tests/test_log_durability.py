"""What kills, readers during a run and the end of a run see of the evaluation log: a torn
last line and garbage are skipped, a line is readable before the writer closes, and closing
syncs the file (in the background when the writer asks for it early)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from propulate.compat.history import EvaluationLog, iter_records, read_history
from tests.history_utils import META, append


def test_torn_last_line_is_skipped(tmp_path: Path) -> None:
    log = EvaluationLog(tmp_path, 0, session="s")
    for i in range(3):
        append(log, float(i), start=float(i))
    log.close()
    data = log.path.read_bytes()
    # Simulate a kill in the middle of writing the last record.
    log.path.write_bytes(data[: len(data) - 15])
    recs = list(iter_records(tmp_path))
    assert [r["seq"] for r in recs] == [0, 1]
    assert len(read_history(tmp_path)) == 2
    # A complete JSON object without its newline is also an unfinished write.
    log.path.write_bytes(data[:-1])
    assert [r["seq"] for r in iter_records(tmp_path)] == [0, 1]
    # Cut right after a newline: nothing lost.
    log.path.write_bytes(data)
    assert [r["seq"] for r in iter_records(tmp_path)] == [0, 1, 2]


def test_garbage_lines_are_skipped(tmp_path: Path) -> None:
    with EvaluationLog(tmp_path, 0, session="s") as log:
        append(log, 1.0, start=0.0)
        log._fh.write(b'{"half": \n[1, 2]\n{"no_params": 1}\n')  # type: ignore[union-attr]
        append(log, 2.0, start=1.0)
    assert [r["loss"] for r in iter_records(tmp_path)] == [1.0, 2.0]


def test_record_is_readable_by_another_process_before_close(tmp_path: Path) -> None:
    log = EvaluationLog(tmp_path, 0, session="live", meta=META)
    append(log, 0.5, start=1.0)
    append(log, math.nan, start=2.0)
    reader = (
        "import json, sys\n"
        "from propulate.compat.history import iter_records\n"
        "print(json.dumps([r['loss'] for r in iter_records(sys.argv[1])]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", reader, str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert json.loads(out.stdout) == [0.5, None]
    assert log._fh is not None  # the writer was still open
    log.close()


def test_close_is_idempotent_and_writing_after_close_fails(tmp_path: Path) -> None:
    log = EvaluationLog(tmp_path, 0)
    append(log, 1.0, start=0.0)
    log.sync()
    log.close()
    log.close()
    with pytest.raises(ValueError, match="closed"):
        append(log, 2.0, start=1.0)
    assert len(list(iter_records(tmp_path))) == 1


def test_sync_soon_puts_the_file_on_disk_once_and_close_waits_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        time.sleep(0.05)  # a slow disk: close must still wait for the sync it started
        real(fd)
        synced.append(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    log = EvaluationLog(tmp_path, 0)
    append(log, 1.0, start=0.0)
    log.sync_soon()
    log.sync_soon()  # one in flight: not another
    log.close()
    assert len(synced) == 1  # done before close returned, and not repeated
    # lines written after the sync started are synced by close
    log = EvaluationLog(tmp_path, 1)
    append(log, 1.0, start=0.0)
    log.sync_soon()
    append(log, 2.0, start=1.0)
    log.close()
    assert len(synced) == 3
    assert len(list(iter_records(tmp_path))) == 3


def test_a_failed_background_sync_is_raised_by_close(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fsync(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fsync", fsync)
    log = EvaluationLog(tmp_path, 0)
    append(log, 1.0, start=0.0)
    log.sync_soon()
    with pytest.raises(OSError, match="Input/output"):
        log.close()
    log.close()  # closed all the same
