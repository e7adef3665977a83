"""``python -m propulate status``: one line per run directory, on finished and running runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

import pytest

from propulate.cli.status import find_runs, format_status, run_status
from propulate.compat.history import EvaluationLog
from propulate.runs.lease import LEASE_DIR, LeaseInfo, this_host
from propulate.runs.summary import RunSummary, write_summary
from tests.dashboard_utils import start_run

META = {"task": None, "run": "seed0", "method": "propulate"}


def write_run(
    out: Path,
    losses: dict[int, list[float | None]],
    session: str = "s1",
    start: float = 1000.0,
    budget: int | None = 10,
    time_limit: float | None = None,
) -> None:
    """A run directory: run.json, and per rank one log of evaluations 1 s apart."""
    start_run(out, budget, time_limit, start)
    for rank, values in losses.items():
        with EvaluationLog(out, rank, session, META) as log:
            for i, loss in enumerate(values):
                # parameters named like the log's own fields must not confuse the scan
                log.append(
                    {"status": "ok", "loss": 1.0, "x": i},
                    loss,
                    island=0,
                    generation=i,
                    start=start + i,
                    seconds=1.0,
                    error=None if loss is not None else "RuntimeError: x",
                )


def test_finished_run(tmp_path: Path) -> None:
    out = tmp_path / "results" / "sphere" / "seed0"
    write_run(out, {0: [3.0, None, 1.5, 2.0, 0.5], 1: [4.0, None, 0.25, 9.0, 1.0]})
    with EvaluationLog(out, 2, "s1", META) as log:  # stopped by the run: not a failure
        log.append(
            {"x": 0},
            None,
            island=0,
            generation=0,
            start=1004.0,
            seconds=0.5,
            error="evaluation interrupted (signal)",
            status="interrupted",
        )
    write_summary(
        out,
        RunSummary(
            task=None,
            run="seed0",
            method="propulate",
            evaluations=11,
            failures=2,
            stop_reason="budget",
        ),
    )
    st = run_status(out)
    assert (st.evaluations, st.failures, st.best_loss, st.budget) == (11, 2, 0.25, 10)
    assert st.finished and st.stop_reason == "budget" and st.eta is None
    assert st.rate == pytest.approx(11 / 5.0)  # 11 records from t=1000 to t=1005
    line = format_status(st, tmp_path / "results")
    assert line == "sphere/seed0  11/10 evals  2 failed  best 0.25  2.2/s  ETA -  stopped (budget)"


def test_running_run_with_a_torn_line_and_an_older_summary(tmp_path: Path) -> None:
    out = tmp_path / "run"
    now = time.time()
    # a first session that finished (with its summary), then a resumed one still writing
    write_run(out, {0: [5.0, 6.0]}, session="s1", start=now - 100, budget=4)
    write_summary(out, RunSummary(task=None, run="seed0", method="propulate", stop_reason="budget"))
    past = now - 50
    os.utime(out / "summary.json", (past, past))
    write_run(
        out, {0: [2.0], 1: [None, 3.0]}, session="s2", start=now - 4, budget=20, time_limit=3600
    )
    with open(out / "evals" / "s2-r00001.jsonl", "a") as fh:
        fh.write('{"task":null,"run":"seed0","params":{"x":')  # a writer killed mid-line
    st = run_status(out, now=now)
    assert (st.evaluations, st.failures, st.best_loss, st.budget) == (5, 1, 2.0, 20)
    assert not st.finished
    assert st.rate == pytest.approx(3 / 2.0)  # the latest session: 3 records in 2 s
    assert st.eta == pytest.approx(15 / 1.5)  # budget left at that rate (before the time limit)
    line = format_status(st)
    assert line.endswith("5/20 evals  1 failed  best 2  1.5/s  ETA 10s  running")
    # hours later, with nothing new, it may have been killed
    assert format_status(run_status(out, now=now + 7200)).endswith(
        "ETA 0s  running? (no record for 2h00m)"
    )


def test_find_runs_and_the_command(tmp_path: Path) -> None:
    results = tmp_path / "results"
    write_run(results / "b" / "seed1", {0: [1.0]}, budget=None)
    write_run(results / "a" / "seed0", {0: [2.0, 3.0]})
    (results / "notarun").mkdir()
    assert find_runs(results) == [results / "a" / "seed0", results / "b" / "seed1"]
    assert find_runs(results / "a" / "seed0") == [results / "a" / "seed0"]
    code = (
        "import sys\nfrom propulate.cli import main\nstatus = main(sys.argv[1:])\n"
        "heavy = [m for m in ('pandas', 'mpi4py.MPI', 'scipy', 'numpy') if m in sys.modules]\n"
        "print('imported:', heavy)\nsys.exit(status)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, "status"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("a/seed0  2/10 evals  0 failed  best 2  ")
    assert lines[1].startswith("b/seed1  1/- evals  0 failed  best 1  1/s  ETA -  running")
    assert lines[2] == "imported: []"
    proc = subprocess.run(
        [sys.executable, "-m", "propulate", "status", "nowhere"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == "propulate status: error: nowhere is not a directory"


# ----------------------------------------------------------------------------- owners
def owned(out: Path, **fields: object) -> LeaseInfo:
    """Write a lease for ``out`` as its owner would (``fields`` override a live one's)."""
    now = time.time()
    info = LeaseInfo(
        **{
            "generation": 1,
            "host": this_host(),
            "pid": os.getpid(),
            "started": now - 30,
            "heartbeat": now,
            "expiry": 60.0,
            "token": "t1",
            **fields,
        }
    )
    (out / LEASE_DIR).mkdir(parents=True, exist_ok=True)
    (out / LEASE_DIR / "00000001.json").write_text(json.dumps(asdict(info)))
    return info


def test_a_run_with_a_live_owner_is_running_even_after_an_old_summary(tmp_path: Path) -> None:
    out = tmp_path / "run"
    now = time.time()
    write_run(out, {0: [5.0, 6.0]}, start=now - 20, budget=10)
    write_summary(out, RunSummary(task=None, run="seed0", method="propulate", stop_reason="budget"))
    owned(out)
    line = format_status(run_status(out))
    assert line.endswith(f"running ({this_host()}:{os.getpid()})"), line
    assert "ETA -" not in line


def test_a_killed_run_is_orphaned(tmp_path: Path) -> None:
    out = tmp_path / "run"
    write_run(out, {0: [5.0, 6.0]}, start=time.time() - 900, budget=10)
    owned(out, host="node7", pid=4242, heartbeat=time.time() - 600)  # heartbeat stopped
    line = format_status(run_status(out))
    assert "ETA -  orphaned (owner node7:4242 gone, last heartbeat 10m00s ago, no summary" in line
    # on this host a dead process is gone at once, whatever its heartbeat says
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    owned(out, pid=int(dead.stdout))
    assert "orphaned (owner" in format_status(run_status(out))


def test_a_stopped_run_says_why_from_the_summary_or_its_last_records(tmp_path: Path) -> None:
    out = tmp_path / "run"
    write_run(out, {0: [5.0, None, None]}, start=time.time() - 100, budget=10)
    owned(out, released=True, heartbeat=time.time() - 90)
    line = format_status(run_status(out))
    assert line.endswith("ETA -  stopped (last record failed: RuntimeError: x; no summary)"), line
    write_summary(
        out, RunSummary(task=None, run="seed0", method="propulate", stop_reason="failures")
    )
    assert format_status(run_status(out)).endswith("ETA -  stopped (failures)")
    spent = tmp_path / "spent"
    write_run(spent, {0: [1.0, 2.0], 1: [3.0]}, start=time.time() - 100, budget=3)
    owned(spent, released=True)
    assert format_status(run_status(spent)).endswith("stopped (budget spent; no summary)")
