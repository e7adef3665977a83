"""Tests of :mod:`propulate.compat.history`: the JSONL evaluation log, its reader and best-so-far."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from propulate.compat.history import (
    EVAL_DIR,
    META_COLUMNS,
    EvaluationLog,
    best_so_far,
    iter_records,
    log_files,
    new_session_id,
    read_history,
    tally,
)
from propulate.runs.columns import parameter_column
from tests.history_utils import META, append


def test_append_writes_one_flushed_json_line_per_record(tmp_path: Path) -> None:
    log = EvaluationLog(tmp_path, rank=3, session="abcd", meta=META)
    assert log.path == tmp_path / EVAL_DIR / "abcd-r00003.jsonl"
    rec = log.append(
        {"x": np.float64(0.25), "n": np.int64(7), "act": "tanh", "flag": np.bool_(True)},
        np.float32(1.5),
        island=np.int64(1),
        generation=np.int32(4),
        start=np.float64(100.0),
        seconds=2,
    )
    assert rec == {
        **META,
        "island": 1,
        "rank": 3,
        "generation": 4,
        "session": "abcd",
        "seq": 0,
        "params": {"x": 0.25, "n": 7, "act": "tanh", "flag": True},
        "loss": 1.5,
        "status": "ok",
        "error": None,
        "start": 100.0,
        "seconds": 2.0,
    }
    assert type(rec["params"]["n"]) is int and type(rec["params"]["x"]) is float
    lines = log.path.read_text().splitlines()  # readable before close: flushed
    assert len(lines) == 1
    assert json.loads(lines[0]) == rec
    append(log, 2.0, start=101.0)
    assert log.seq == 2
    assert [json.loads(line)["seq"] for line in log.path.read_text().splitlines()] == [0, 1]
    log.close()


@pytest.mark.parametrize(
    ("loss", "error", "fragment"),
    [
        (math.nan, None, "nan"),
        (math.inf, None, "inf"),
        (-math.inf, None, "inf"),
        (np.float64("nan"), None, "nan"),
        (None, None, "None"),
        (1.0, "ValueError: boom", "boom"),
    ],
)
def test_failures_are_recorded_with_null_loss(
    tmp_path: Path, loss: Any, error: str | None, fragment: str
) -> None:
    with EvaluationLog(tmp_path, 0, session="s") as log:
        rec = append(log, loss, start=1.0, error=error)
    assert rec["status"] == "failed" and rec["loss"] is None
    assert fragment in rec["error"]
    (back,) = iter_records(tmp_path)
    assert back == rec
    df = read_history(tmp_path)
    assert df.loc[0, "status"] == "failed" and math.isnan(df.loc[0, "loss"])
    assert fragment in df.loc[0, "error"]


def test_non_finite_parameter_values_become_null(tmp_path: Path) -> None:
    with EvaluationLog(tmp_path, 0, session="s") as log:
        rec = append(log, 1.0, start=0.0, x=np.float64("inf"))
    assert rec["params"]["x"] is None
    assert next(iter_records(tmp_path))["params"]["x"] is None


def test_round_trip_through_read_history(tmp_path: Path) -> None:
    with EvaluationLog(tmp_path, 0, session="s1", meta=META) as log:
        written = [
            append(log, np.float64(3.0), start=10.0, x=np.float64(0.1)),
            append(log, float("nan"), start=11.0, x=0.2),
            append(log, 1.0, start=12.0, x=np.float32(0.5), island=2),
        ]
    assert list(iter_records(tmp_path)) == written
    df = read_history(tmp_path)
    assert len(df) == 3
    meta_cols = [c for c in META_COLUMNS if c in df.columns]
    assert list(df.columns) == meta_cols + ["x", "n", "act"]
    assert df.attrs["parameters"] == ["x", "n", "act"]
    # the optional fields appear only when some record has them
    optional = ("traceback", "details", "curve", "state")
    assert meta_cols == [c for c in META_COLUMNS if c not in optional]
    assert df["x"].tolist() == [0.1, 0.2, 0.5]
    assert df["n"].tolist() == [3, 3, 3] and df["act"].tolist() == ["relu"] * 3
    assert df["loss"].tolist()[0] == 3.0 and math.isnan(df["loss"][1]) and df["loss"][2] == 1.0
    assert df["status"].tolist() == ["ok", "failed", "ok"]
    assert df["island"].tolist() == [0, 0, 2]
    assert (df["task"] == "t1").all() and (df["method"] == "evolve").all()
    assert pd.api.types.is_float_dtype(df["loss"])


def test_log_files_and_path_forms(tmp_path: Path) -> None:
    for rank in (1, 0):
        with EvaluationLog(tmp_path, rank, session="s") as log:
            append(log, float(rank), start=float(rank))
    files = log_files(tmp_path)
    assert [f.name for f in files] == ["s-r00000.jsonl", "s-r00001.jsonl"]
    assert log_files(files[1]) == [files[1]]
    assert log_files(tmp_path / EVAL_DIR) == files
    assert len(read_history(files[1])) == 1
    assert len(read_history(str(tmp_path))) == 2
    assert len(read_history([files[0], files[1]])) == 2
    assert len(list(iter_records([tmp_path, tmp_path]))) == 4  # two runs given as a list


def test_sessions_get_distinct_files(tmp_path: Path) -> None:
    a, b = EvaluationLog(tmp_path, 0), EvaluationLog(tmp_path, 0)
    assert a.session != b.session and a.path != b.path
    assert len(new_session_id()) == 8
    a.close()
    b.close()
    # Re-opening an existing session appends.
    with EvaluationLog(tmp_path, 0, session="same") as log:
        append(log, 1.0, start=0.0)
    with EvaluationLog(tmp_path, 0, session="same") as log:
        append(log, 2.0, start=1.0)
    assert [r["loss"] for r in iter_records(log.path)] == [1.0, 2.0]


def test_sessions_and_ranks_are_concatenated_and_ordered_by_start(tmp_path: Path) -> None:
    # Two sessions (a start and a resume) of two ranks each, with interleaved start times.
    starts = {
        ("s1", 0): [0.0, 2.0, 4.0],
        ("s1", 1): [1.0, 3.0, 4.0],
        ("s2", 0): [10.0, 12.0],
        ("s2", 1): [11.0, 12.0],
    }
    for (session, rank), times in starts.items():
        with EvaluationLog(tmp_path, rank, session=session, meta=META) as log:
            for t in times:
                append(log, t * 10, start=t)
    df = read_history(tmp_path)
    assert len(df) == 10
    assert df["start"].tolist() == sorted(t for ts in starts.values() for t in ts)
    assert df["start"].is_monotonic_increasing
    assert set(df["session"]) == {"s1", "s2"} and set(df["rank"]) == {0, 1}
    # Ties in start are broken by rank, then sequence number.
    ties = df[df["start"] == 4.0]
    assert ties["rank"].tolist() == [0, 1]
    ties = df[df["start"] == 12.0]
    assert ties["rank"].tolist() == [0, 1]
    assert list(df.index) == list(range(10))
    assert (df["loss"] == df["start"] * 10).all()


def test_empty_history(tmp_path: Path) -> None:
    df = read_history(tmp_path)
    assert df.empty and list(df.columns) == list(META_COLUMNS)
    out = best_so_far(df)
    assert out.empty and {"evaluation", "elapsed", "best_loss"} <= set(out.columns)


def test_best_so_far_running_minimum_ignores_failures(tmp_path: Path) -> None:
    # (loss, start, seconds): finish times order the rows differently from start times.
    evals = [
        (math.nan, 100.0, 1.0),  # finishes at 101, failed first
        (5.0, 100.0, 5.0),  # 105
        (7.0, 101.0, 1.0),  # 102
        (None, 103.0, 0.5),  # 103.5, failed
        (2.0, 104.0, 4.0),  # 108
        (math.inf, 105.0, 1.0),  # 106, failed: must not count as a best
        (3.0, 106.0, 0.5),  # 106.5
    ]
    with EvaluationLog(tmp_path, 0, session="s") as log:
        for loss, start, seconds in evals:
            append(log, loss, start=start, seconds=seconds)
    out = best_so_far(read_history(tmp_path))
    assert out["finish"].tolist() == [101.0, 102.0, 103.5, 105.0, 106.0, 106.5, 108.0]
    assert out["evaluation"].tolist() == list(range(1, 8))
    assert out["elapsed"].tolist() == [1.0, 2.0, 3.5, 5.0, 6.0, 6.5, 8.0]
    best = out["best_loss"].tolist()
    assert math.isnan(best[0])
    assert best[1:] == [7.0, 7.0, 5.0, 5.0, 3.0, 2.0]
    assert out["best_loss"].dropna().is_monotonic_decreasing


def test_best_so_far_all_failed_and_input_untouched(tmp_path: Path) -> None:
    with EvaluationLog(tmp_path, 0, session="s") as log:
        append(log, math.nan, start=0.0)
        append(log, None, start=1.0)
    df = read_history(tmp_path)
    columns = list(df.columns)
    out = best_so_far(df)
    assert out["best_loss"].isna().all()
    assert list(df.columns) == columns  # a copy is returned


def test_parameters_named_like_log_columns_keep_their_values_apart(tmp_path: Path) -> None:
    # the user's parameters "status", "rank", "loss" and "kind" sit beside the log's own fields
    params = {"status": "on", "rank": 7, "loss": "l1", "kind": "fast", "param.x": 1.5}
    with EvaluationLog(tmp_path, 3, session="s", meta=META) as log:
        rec = log.append(params, 0.25, island=0, generation=0, start=1.0, seconds=0.5)
        log.append(
            {**params, "rank": 8},
            None,
            island=0,
            generation=1,
            start=2.0,
            seconds=0.5,
            error="RuntimeError: x",
        )
    assert rec["params"] == params and rec["status"] == "ok" and rec["rank"] == 3
    df = read_history(tmp_path)
    names = ["param.status", "param.rank", "param.loss", "kind", "param.param.x"]
    assert df.attrs["parameters"] == names
    assert [parameter_column(n) for n in params] == names
    assert df["status"].tolist() == ["ok", "failed"]
    assert df["param.status"].tolist() == ["on", "on"]
    assert df["rank"].tolist() == [3, 3] and df["param.rank"].tolist() == [7, 8]
    assert df["loss"].tolist()[0] == 0.25 and df["param.loss"].tolist() == ["l1", "l1"]
    assert df["kind"].tolist() == ["fast", "fast"] and df["param.param.x"].tolist() == [1.5] * 2
    assert list(df.columns)[-len(names) :] == names


def test_traceback_details_and_status_of_a_failure(tmp_path: Path) -> None:
    with EvaluationLog(tmp_path, 0, session="s") as log:
        ok = append(log, 1.0, start=0.0)
        slow = append(
            log,
            None,
            start=1.0,
            error="timed out after 2 s",
            status="timeout",
            details={"limit": np.float64(2.0)},
        )
        boom = append(
            log,
            None,
            start=2.0,
            error="ValueError: boom",
            traceback="Traceback (most recent call last):\nValueError: boom\n",
        )
        claims_ok = append(log, 3.0, start=3.0, status="interrupted")
    assert "traceback" not in ok and "details" not in ok
    assert slow["status"] == "timeout" and slow["details"] == {"limit": 2.0}
    assert boom["status"] == "failed" and boom["traceback"].startswith("Traceback")
    assert claims_ok["status"] == "interrupted" and claims_ok["loss"] is None
    assert claims_ok["error"] == "evaluation interrupted"
    assert list(iter_records(tmp_path)) == [ok, slow, boom, claims_ok]
    df = read_history(tmp_path)
    assert df["status"].tolist() == ["ok", "timeout", "failed", "interrupted"]
    assert df["traceback"].notna().tolist() == [False, False, True, False]
    assert df.attrs["parameters"] == ["x", "n", "act"]
    counts = tally(tmp_path)
    # an evaluation the run's own stop interrupted is not a failure of the objective
    assert (counts.evaluations, counts.failures) == (4, 2)
    assert counts.first_start == 0.0 and counts.last_end == 4.0 and counts.span == 4.0


def test_tally_of_no_records(tmp_path: Path) -> None:
    counts = tally(tmp_path)
    assert (counts.evaluations, counts.failures, counts.span) == (0, 0, 0.0)
    assert read_history(tmp_path).attrs["parameters"] == []


def test_importing_the_log_writer_does_not_import_pandas() -> None:
    code = (
        "import sys, propulate.compat.history, propulate\n"
        "print(sorted(m for m in ('pandas', 'scipy.stats', 'GPy') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "[]"


def test_parameters_are_written_exactly_whatever_their_type(tmp_path: Path) -> None:
    """Every value reads back identical, the sign of a zero included; numpy scalars as Python
    numbers; what orjson does not encode (an integer past 64 bits, keys that are not strings,
    a mapping that is not a dict) through the standard library, as the same JSON."""
    from types import MappingProxyType

    values = [0.1, -0.0, 0.0, 1e-300, 1e-05, 1e16, 123456789.123, 7, True, None, 'a"b', "é\u2028",
              2**70, np.float32(0.5), np.int64(3), np.float64("nan")]  # fmt: skip
    with EvaluationLog(tmp_path, 0, session="s") as log:
        for i, v in enumerate(values):
            rec = log.append(
                {"p": v, "q": 0.1}, 1.0, island=0, generation=i, start=0.0, seconds=0.0
            )
            assert rec["params"]["q"] == 0.1
        log.append({1: 0.5, 2.5: "x"}, 1.0, island=0, generation=99, start=0.0, seconds=0.0)
        log.append(MappingProxyType({"m": 0.25}), 1.0, island=0, generation=99, start=0.0,
                   seconds=0.0)  # fmt: skip
    records = list(iter_records(tmp_path))
    back = [r["params"]["p"] for r in records[: len(values)]]
    assert back[:13] == values[:13] and back[13:] == [0.5, 3, None]
    assert math.copysign(1.0, back[1]) == -1.0 and math.copysign(1.0, back[2]) == 1.0
    assert type(back[7]) is int and back[8] is True and type(back[14]) is int
    assert records[-2]["params"] == {"1": 0.5, "2.5": "x"}
    assert records[-1]["params"] == {"m": 0.25}
