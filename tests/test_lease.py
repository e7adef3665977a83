"""One owner per run directory (``propulate.runs.lease``): the lease itself, and ``evolve``
jobs that share an ``--out`` (concurrent, refused, and taken over after a SIGKILL)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from propulate.compat.history import iter_records
from propulate.runs.lease import Lease, LeaseHeld, current, this_host
from propulate.runs.summary import read_summary
from tests.mpi_utils import mpiexec, popen_mpi, run_mpi

SPACE = """\
parameters:
  x: {type: float, low: -1, high: 1}
  y: {type: float, low: -1, high: 1}
"""
OBJECTIVE = """\
import os
import time


def loss(p):
    while not os.path.exists(os.environ.get("GATE", "/")):  # held until the test opens it
        time.sleep(0.02)
    time.sleep(SLEEP)
    return (p["x"] - 0.3) ** 2 + p["y"] ** 2
"""
FAST = ["--lease-heartbeat", "0.2", "--lease-expiry", "2"]


# ----------------------------------------------------------------------------- the lease
def test_a_second_lease_waits_or_refuses_and_a_release_frees_it(tmp_path: Path) -> None:
    first = Lease(tmp_path, heartbeat=0.05, expiry=0.5)
    first.acquire()
    with pytest.raises(LeaseHeld, match=rf"is owned by .*:{os.getpid()} \(started"):
        Lease(tmp_path, heartbeat=0.05, expiry=0.5).acquire(wait=False)
    time.sleep(0.8)  # a live heartbeat keeps the lease past its expiry
    with pytest.raises(LeaseHeld):
        Lease(tmp_path, heartbeat=0.05, expiry=0.5).acquire(wait=False)
    assert current(tmp_path).beats >= 5
    first.release()
    assert current(tmp_path).released
    second = Lease(tmp_path, heartbeat=0.05, expiry=0.5)
    second.acquire(wait=False)
    assert current(tmp_path).generation == 2
    second.release()


def test_a_lease_whose_heartbeat_stopped_is_taken_over_after_its_expiry(tmp_path: Path) -> None:
    stalled = Lease(tmp_path, heartbeat=0.05, expiry=0.6)
    stalled.acquire()
    stalled._stop.set()  # the owner hangs: no more heartbeats, no release
    stalled._thread.join()
    waited: list[str] = []
    t = time.monotonic()
    taker = Lease(tmp_path, heartbeat=0.05, expiry=0.6)
    taker.acquire(on_wait=lambda owner: waited.append(owner.token))
    assert time.monotonic() - t >= 0.6
    assert waited == [stalled.info.token]  # said once whom it waits for
    assert not stalled.renew()  # the stalled owner notices it lost the lease
    taker.release()


def test_of_jobs_that_take_a_free_lease_at_once_exactly_one_wins(tmp_path: Path) -> None:
    leases = [Lease(tmp_path, heartbeat=0.05, expiry=0.5) for _ in range(8)]
    barrier = threading.Barrier(len(leases))
    won: list[Lease] = []

    def take(lease: Lease) -> None:
        barrier.wait()
        if lease.try_acquire() is None:
            won.append(lease)

    threads = [threading.Thread(target=take, args=(lease,)) for lease in leases]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(won) == 1
    won[0].release()


def test_lease_timings_are_checked() -> None:
    with pytest.raises(ValueError, match="at least twice"):
        Lease("x", heartbeat=1.0, expiry=1.5)


# ----------------------------------------------------------------------------- evolve jobs
def setup(tmp_path: Path, sleep: float) -> list[str]:
    (tmp_path / "space.yaml").write_text(SPACE)
    (tmp_path / "slowloss.py").write_text(OBJECTIVE.replace("SLEEP", str(sleep)))
    return ["-m", "propulate", "evolve", "--objective", "slowloss:loss", "--space", "space.yaml"]


def check_run(out: Path, budget: int) -> list[dict]:
    """Every record once, the budget spent exactly, the summary describing all records."""
    recs = list(iter_records(out))
    params = [json.dumps(r["params"], sort_keys=True) for r in recs]
    assert len(set(params)) == len(params), "a configuration was evaluated twice"
    assert len(recs) == budget
    summary = read_summary(out)
    assert summary is not None and summary.evaluations == len(recs)
    best = min(r["loss"] for r in recs if r["loss"] is not None)
    assert summary.best_loss == pytest.approx(best)
    return recs


@pytest.mark.mpi
@pytest.mark.slow
def test_two_evolve_jobs_on_one_directory_spend_the_budget_once(tmp_path: Path) -> None:
    base = setup(tmp_path, 0.01) + ["--out", "dup", "--max-evaluations", "50", *FAST]
    gate = tmp_path / "gate"
    env = {"PYTHONPATH": str(tmp_path), "GATE": str(gate)}
    first = popen_mpi(2, base, cwd=tmp_path, env=env)  # held at the gate: it stays the owner
    try:
        deadline = time.monotonic() + 60
        while current(tmp_path / "dup") is None and time.monotonic() < deadline:
            time.sleep(0.05)
        refused = run_mpi(2, [*base, "--no-wait"], cwd=tmp_path, env=env, check=False)
        with open(tmp_path / "second.err", "w") as err_file:
            second = subprocess.Popen(
                [mpiexec(), "-n", "2", sys.executable, *base],
                cwd=tmp_path,
                env={**os.environ, **env},
                stdout=subprocess.DEVNULL,
                stderr=err_file,
            )
        waiting = "waiting for run directory dup: owned by"
        while waiting not in (tmp_path / "second.err").read_text():
            assert time.monotonic() < deadline + 60, "the second job never waited"
            time.sleep(0.05)
    finally:
        gate.touch()
    _, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    assert second.wait(timeout=120) == 0, (tmp_path / "second.err").read_text()
    lines = [line for line in refused.stderr.splitlines() if "owned by" in line]
    assert refused.returncode == 2 and len(lines) == 1, refused.stderr
    assert f"run directory dup is owned by {this_host()}:" in lines[0]
    # The second job said once whom it waited for, then found the budget spent.
    assert (tmp_path / "second.err").read_text().count(waiting) == 1
    check_run(tmp_path / "dup", 50)


@pytest.mark.mpi
@pytest.mark.slow
def test_a_killed_owner_is_taken_over_after_its_lease_expires(tmp_path: Path) -> None:
    base = setup(tmp_path, 0.1) + ["--out", "run", "--max-evaluations", "40", *FAST]
    out = tmp_path / "run"
    # The first owner stands for a job on another node: its process cannot be looked up here,
    # so only the expiry of its heartbeat frees the directory.
    env = {"PYTHONPATH": str(tmp_path), "PROPULATE_LEASE_HOST": "node-elsewhere"}
    env["GATE"] = str(tmp_path)  # open
    first = popen_mpi(2, base, cwd=tmp_path, env=env)
    deadline = time.monotonic() + 60
    while len(list(iter_records(out))) < 6 and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(first.pid, signal.SIGKILL)
    killed = time.time()
    first.communicate(timeout=30)
    before = {json.dumps(r["params"], sort_keys=True) for r in iter_records(out)}
    assert 6 <= len(before) < 40 and read_summary(out) is None
    second = run_mpi(2, base, cwd=tmp_path, env={"PYTHONPATH": str(tmp_path)}, timeout=120)
    assert "waiting for run directory run: owned by node-elsewhere:" in second.stderr
    lease = current(out)
    assert lease.generation == 2 and lease.released
    assert lease.started - killed >= 2.0 - 0.3  # not before the old lease expired
    recs = check_run(out, 40)
    assert before <= {json.dumps(r["params"], sort_keys=True) for r in recs}  # nothing lost
