"""Resuming a campaign whose evolve job was killed: the re-run keeps the first attempt's
evaluations and spends only the rest of the budget."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.workflow_utils import SNAKEMAKE, _env, copy_workflow, snakemake, write_config

pytestmark = pytest.mark.skipif(not SNAKEMAKE.exists(), reason="snakemake not installed")

#: An objective that counts its calls (one line per call in $COUNT_FILE, over all ranks and
#: attempts) and, once, SIGKILLs itself on the $KILL_AT-th call: the evolve job fails ("job"
#: mode), or Snakemake ($SNAKEMAKE_PID) is killed first, as a crash of the machine would
#: ("snakemake" mode). The other ranks of that attempt (same parent: the MPI launcher's proxy)
#: wait in their next call until that parent is gone, so the kill point does not depend on timing.
COUNTING_OBJECTIVE = """
import os
import signal
import time


def loss(params):
    path = os.environ["COUNT_FILE"]
    with open(path, "a") as fh:
        fh.write(f"{os.getpid()}\\n")
    with open(path) as fh:
        calls = sum(1 for _ in fh)
    marker = path + ".killed"
    if calls >= int(os.environ["KILL_AT"]):
        # The marker appears with its content (a hard link of a written file), so another rank
        # never reads it empty; the first link wins.
        mine = f"{marker}.{os.getpid()}"
        with open(mine, "w") as fh:
            fh.write(str(os.getppid()))
        try:
            os.link(mine, marker)
        except FileExistsError:
            os.unlink(mine)
        else:
            os.unlink(mine)
            if os.environ["KILL_MODE"] == "snakemake":
                os.kill(int(os.environ["SNAKEMAKE_PID"]), signal.SIGKILL)
            os.kill(os.getpid(), signal.SIGKILL)
    if os.path.exists(marker):
        with open(marker) as fh:
            parent = fh.read()
        if parent == str(os.getppid()):  # the killed attempt: wait for the launcher's clean-up
            while parent == str(os.getppid()):
                time.sleep(0.05)
            os._exit(9)
    return (params["x"] - 0.3) ** 2
"""

BUDGET, RANKS, KILL_AT = 40, 2, 15


def _records(run: Path) -> list[str]:
    return [
        line for f in sorted((run / "evals").glob("*.jsonl")) for line in f.read_text().splitlines()
    ]


def _wait_until_gone(count_file: str, timeout: float = 120.0) -> None:
    """Wait until no process of an attempt (its environment names ``count_file``) is left."""
    needle = f"COUNT_FILE={count_file}".encode()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        alive = []
        for proc in Path("/proc").iterdir():
            try:
                if proc.name.isdigit() and needle in (proc / "environ").read_bytes().split(b"\0"):
                    alive.append(proc.name)
            except OSError:
                continue
        if not alive:
            return
        time.sleep(0.2)
    raise AssertionError(f"processes of the killed attempt still alive: {alive}")


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["job", "snakemake"])
def test_a_killed_evolve_job_resumes(tmp_path: Path, mode: str) -> None:
    """A re-run after a killed evolve job keeps the first attempt's evaluations and spends the
    rest of the budget: at most budget + 2 x ranks objective calls in all."""
    workdir = copy_workflow(tmp_path / "wf")
    (workdir / "counting.py").write_text(COUNTING_OBJECTIVE)
    config = {
        "name": "resume",
        "objective": "counting:loss",
        "parameters": {"x": {"type": "float", "low": 0.0, "high": 1.0}},
        "evolve": {"max_evaluations": BUDGET, "time_limit": 120, "pop_size": 4},
    }
    cfg = write_config(workdir, config)
    count = tmp_path / "calls.txt"
    env = _env()
    env.update(COUNT_FILE=str(count), KILL_AT=str(KILL_AT), KILL_MODE=mode)
    env["PYTHONPATH"] = os.pathsep.join([str(workdir), env["PYTHONPATH"]])
    run = workdir / "results" / "resume" / "runs" / "resume" / "propulate-s1"
    target = str((run / "summary.json").relative_to(workdir))
    args = (target, "--cores", str(RANKS), "--configfile", cfg)

    # The shell hands its pid to Snakemake, which replaces it (exec): $SNAKEMAKE_PID.
    first = subprocess.run(
        ["sh", "-c", 'export SNAKEMAKE_PID=$$; exec "$0" "$@"', str(SNAKEMAKE), *args],
        cwd=workdir,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=240,
        start_new_session=True,
        check=False,
    )
    # In "snakemake" mode Snakemake itself was killed (SIGKILL: returncode -9).
    killed = -signal.SIGKILL if mode == "snakemake" else 1
    assert first.returncode == killed, first.stdout[-3000:]
    assert (tmp_path / "calls.txt.killed").exists()
    _wait_until_gone(str(count))
    kept = _records(run)
    # The launcher's clean-up may reach a waiting rank as SIGTERM first: its evaluation is then
    # recorded as interrupted, which is right; the completed ones are those before the kill.
    status = [json.loads(line)["status"] for line in kept]
    ok = status.count("ok")
    assert KILL_AT - RANKS <= ok < KILL_AT, f"{status}\n{first.stdout[-3000:]}"
    assert len(kept) - ok <= RANKS - 1 and set(status) <= {"ok", "interrupted"}, status
    assert not (run / "summary.json").exists()

    if (
        mode == "snakemake"
    ):  # its lock stays, the job is marked incomplete: its lock stays, the job is marked incomplete
        assert snakemake(workdir, "--unlock", "--configfile", cfg, env=env).returncode == 0
        args = (*args, "--rerun-incomplete")
    second = snakemake(workdir, *args, env=env)
    assert second.returncode == 0, second.stdout[-3000:]
    calls = len(count.read_text().splitlines())
    assert calls <= BUDGET + 2 * RANKS, f"{calls} objective calls"
    final = _records(run)
    assert set(kept) <= set(final), "the first attempt's records must be kept"
    summary = json.loads((run / "summary.json").read_text())
    assert summary["evaluations"] >= BUDGET


@pytest.mark.slow
def test_changed_settings_start_the_run_afresh(tmp_path: Path) -> None:
    """A re-run forced with the same settings resumes the finished run (no new calls); a changed
    breeding setting clears the run directory and spends the whole budget again."""
    workdir = copy_workflow(tmp_path / "wf")
    (workdir / "counting.py").write_text(COUNTING_OBJECTIVE)
    config = {
        "name": "fresh",
        "objective": "counting:loss",
        "parameters": {"x": {"type": "float", "low": 0.0, "high": 1.0}},
        "evolve": {"max_evaluations": 12, "time_limit": 120, "pop_size": 4},
    }
    count = tmp_path / "calls.txt"
    env = _env()
    env.update(COUNT_FILE=str(count), KILL_AT="1000000", KILL_MODE="job")
    env["PYTHONPATH"] = os.pathsep.join([str(workdir), env["PYTHONPATH"]])
    run = workdir / "results" / "fresh" / "runs" / "fresh" / "propulate-s1"
    target = str((run / "summary.json").relative_to(workdir))

    def calls_of(cfg: dict[str, Any], *extra: str) -> int:
        before = len(count.read_text().splitlines()) if count.exists() else 0
        name = write_config(workdir, cfg)
        proc = snakemake(workdir, target, "--cores", "2", "--configfile", name, *extra, env=env)
        assert proc.returncode == 0, proc.stdout[-3000:]
        return len(count.read_text().splitlines()) - before

    assert calls_of(config) == 12
    first = _records(run)
    assert calls_of(config, "--forcerun", "evolve") == 0, "same settings: the run is resumed"
    assert _records(run) == first
    config["evolve"]["sigma_factor"] = 0.02
    assert calls_of(config) == 12, "new settings: a fresh run"
    assert not set(first) & set(_records(run))


#: An objective that counts its calls; from its 7th call on it waits until the file $GATE
#: exists, so the job it runs in outlives a killed Snakemake for as long as the test needs.
GATED_COUNTING = """
import os
import time


def loss(params):
    path = os.environ["COUNT_FILE"]
    with open(path, "a") as fh:
        fh.write(f"{os.getpid()}\\n")
    with open(path) as fh:
        calls = sum(1 for _ in fh)
    while calls > 6 and not os.path.exists(os.environ["GATE"]):
        time.sleep(0.05)
    time.sleep(0.02)
    return (params["x"] - 0.3) ** 2
"""


@pytest.mark.slow
def test_a_rerun_after_a_killed_snakemake_waits_for_the_orphaned_job(tmp_path: Path) -> None:
    """Snakemake is SIGKILLed while its evolve job runs: the job goes on (orphaned). The
    README's re-run (--unlock, then --rerun-incomplete) starts at once; its job waits for the
    orphan's lease instead of spending the budget a second time, and writes a summary of all
    records."""
    budget = 50
    workdir = copy_workflow(tmp_path / "wf")
    (workdir / "gatedcount.py").write_text(GATED_COUNTING)
    config = {
        "name": "orphan",
        "objective": "gatedcount:loss",
        "parameters": {"x": {"type": "float", "low": 0.0, "high": 1.0}},
        "evolve": {"max_evaluations": budget, "time_limit": 200, "pop_size": 4},
    }
    cfg = write_config(workdir, config)
    count, gate = tmp_path / "calls.txt", tmp_path / "gate"
    env = _env()
    env.update(COUNT_FILE=str(count), GATE=str(gate))
    env["PYTHONPATH"] = os.pathsep.join([str(workdir), env["PYTHONPATH"]])
    run = workdir / "results" / "orphan" / "runs" / "orphan" / "propulate-s1"
    log = workdir / "results" / "orphan" / "logs" / "evolve" / "orphan" / "propulate-s1.log"
    target = str((run / "summary.json").relative_to(workdir))
    args = (target, "--cores", str(RANKS), "--configfile", cfg)

    def start(*extra: str, output: int = subprocess.PIPE) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [str(SNAKEMAKE), *args, *extra],
            cwd=workdir,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )

    def wait_for(check: Any, what: str) -> None:
        deadline = time.monotonic() + 180
        while not check():
            assert time.monotonic() < deadline, f"timed out waiting for {what}"
            time.sleep(0.05)

    first = start(output=subprocess.DEVNULL)  # its orphaned job would hold a pipe open
    try:
        wait_for(lambda: count.exists() and len(count.read_text().splitlines()) >= 6, "calls")
        os.kill(first.pid, signal.SIGKILL)  # Snakemake only: its evolve job goes on
        first.wait(timeout=30)
        assert snakemake(workdir, "--unlock", "--configfile", cfg, env=env).returncode == 0
        second = start("--rerun-incomplete")
        # The re-run's job meets the orphan's lease and waits for it ...
        waiting = "propulate-s1: waiting for its owner"
        wait_for(lambda: log.exists() and waiting in log.read_text(), "the wait")
        gate.touch()  # ... until the orphan, let go on, has spent the budget and released it
        out, _ = second.communicate(timeout=240)
        assert second.returncode == 0, out[-3000:]
    finally:
        gate.touch()
        _wait_until_gone(str(count))
    calls = len(count.read_text().splitlines())
    assert calls <= budget + RANKS, f"{calls} objective calls for a budget of {budget}"
    records = [json.loads(line) for line in _records(run)]
    params = [r["params"]["x"] for r in records]
    assert len(set(params)) == len(params), "a configuration was evaluated twice"
    summary = json.loads((run / "summary.json").read_text())
    assert summary["evaluations"] == len(records) >= budget
    best = min(r["loss"] for r in records if r["loss"] is not None)
    assert summary["best_loss"] == pytest.approx(best)
