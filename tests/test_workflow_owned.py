"""MLA and transfer jobs own their run directories (propulate.campaign.owned): after a killed
Snakemake the README's re-run waits for the orphaned job and resumes from its records instead of
deleting its folder and spending the budget a second time."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from propulate.campaign.owned import run_owned
from propulate.runs.lease import current
from tests.workflow_utils import SNAKEMAKE, _env, copy_workflow, snakemake, write_config

#: An objective that counts its calls per stage ($COUNT_FILE.<stage>); at MLA's 2nd call it
#: SIGKILLs Snakemake ($SNAKEMAKE_PID), once, and MLA's later calls wait for the file $GATE, so
#: the orphaned MLA job is still running when the re-run's MLA job starts.
KILLS_SNAKEMAKE = """
import os
import signal
import sys
import time

from propulate.problems.demo import demo_loss


def loss(params, task):
    stage = "mla" if "mla" in sys.argv else "other"
    path = os.environ["COUNT_FILE"] + "." + stage
    with open(path, "a") as fh:
        fh.write(f"{os.getpid()} {params['x']!r}\\n")
    with open(path) as fh:
        calls = sum(1 for _ in fh)
    if stage == "mla" and calls == 2:
        os.kill(int(os.environ["SNAKEMAKE_PID"]), signal.SIGKILL)
    while stage == "mla" and calls > 2 and not os.path.exists(os.environ["GATE"]):
        time.sleep(0.05)
    return demo_loss(params, task)
"""

BUDGET = 4


def _wait_for(check, what: str, timeout: float = 180.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


@pytest.mark.slow
@pytest.mark.skipif(not SNAKEMAKE.exists(), reason="snakemake not installed")
def test_a_rerun_waits_for_the_orphaned_mla_job_and_spends_nothing_twice(tmp_path: Path) -> None:
    """Regression (found by benchmarks/chaos.py, seed 2: 8 MLA calls per task for a budget of
    4, 4 TLA2 calls for 2): Snakemake SIGKILLed while MLA runs, then --unlock and
    --rerun-incomplete. The re-run's MLA job waits for the orphan's lease, then finds the
    budget spent: every configuration is evaluated once."""
    workdir = copy_workflow(tmp_path / "wf")
    (workdir / "killsnake.py").write_text(KILLS_SNAKEMAKE)
    config = {
        "name": "owned",
        "objective": "killsnake:loss",
        "parameters": {"x": {"type": "float", "low": 0.0, "high": 1.0}},
        "task_space": {"t": {"type": "float", "low": 0.0, "high": 10.0}},
        "training_tasks": {"latin_hypercube": {"n": 2, "seed": 0}},
        "evolve": {"seeds": [1], "max_evaluations": 8, "time_limit": 60, "pop_size": 4},
        "mla": {"budget": BUDGET, "initial": 2},
    }
    cfg = write_config(workdir, config)
    count, gate = tmp_path / "calls", tmp_path / "gate"
    env = _env()
    env.update(COUNT_FILE=str(count), GATE=str(gate))
    env["PYTHONPATH"] = os.pathsep.join([str(workdir), env["PYTHONPATH"]])
    root = workdir / "results" / "owned"
    args = ("results/owned/mla/job.done", "--cores", "2", "--configfile", cfg)
    first = subprocess.Popen(
        ["sh", "-c", 'export SNAKEMAKE_PID=$$; exec "$0" "$@"', str(SNAKEMAKE), *args],
        cwd=workdir,
        env=env,
        stdout=subprocess.DEVNULL,  # the orphaned job would hold a pipe open
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    second = None
    try:
        assert first.wait(timeout=240) == -signal.SIGKILL
        assert snakemake(workdir, "--unlock", "--configfile", cfg, env=env).returncode == 0
        second = subprocess.Popen(
            [str(SNAKEMAKE), *args, "--rerun-incomplete"],
            cwd=workdir,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        log = root / "logs" / "mla.log"
        _wait_for(lambda: log.exists() and "waiting for its owner" in log.read_text(), "the wait")
        gate.touch()
        out, _ = second.communicate(timeout=240)
        assert second.returncode == 0, out[-3000:]
    finally:
        gate.touch()
        if second is not None and second.poll() is None:
            second.kill()
    calls = (tmp_path / "calls.mla").read_text().splitlines()
    assert len(calls) == 2 * BUDGET, calls  # the orphan's, none by the re-run
    for task in ("train00", "train01"):
        run = root / "mla" / task
        records = [json.loads(line) for f in (run / "evals").glob("*.jsonl") for line in f.open()]
        assert len(records) == BUDGET
        assert len({r["params"]["x"] for r in records}) == BUDGET
        assert json.loads((run / "summary.json").read_text())["evaluations"] == BUDGET
    lease = current(root / "mla")
    assert lease is not None and lease.released and lease.generation == 2


def test_run_owned_holds_the_lease_while_its_command_runs(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """The command runs with the directory's lease held (live, by this process) and its exit
    status is returned; the lease is released after it; changed settings clear the folder."""
    out = tmp_path / "run"
    probe = (
        "import json, sys; from propulate.runs.lease import current; "
        "info = current(sys.argv[1]); print(json.dumps([info.released, info.pid])); "
        "sys.exit(3)"
    )
    status = run_owned(out, "a", [], [sys.executable, "-c", probe, str(out)])
    assert status == 3
    assert capfd.readouterr().out.splitlines()[-1] == json.dumps([False, os.getpid()])
    assert (out / "campaign-job.json").exists()
    lease = current(out)
    assert lease is not None and lease.released and lease.pid == os.getpid()
    (out / "evals").mkdir()
    assert run_owned(out, "a", [], ["true"]) == 0 and (out / "evals").exists()  # resumed
    assert run_owned(out, "b", [], ["true"]) == 0 and not (out / "evals").exists()  # cleared
