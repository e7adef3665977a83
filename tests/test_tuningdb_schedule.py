"""New tasks from a file and the scheduled-run wrapper (its lock)."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest

from propulate.space import SearchSpace
from propulate.tuningdb.newtasks import read_new_tasks, task_id_of

SCRIPT = Path(__file__).resolve().parents[1] / "workflow" / "scripts" / "scheduled_run.sh"
TASK_SPACE = SearchSpace(
    {"m": {"type": "int", "low": 200, "high": 1500}, "n": {"type": "int", "low": 200, "high": 1500}}
)


def test_new_tasks_from_csv_and_yaml(tmp_path: Path) -> None:
    assert read_new_tasks(tmp_path / "missing.csv", TASK_SPACE) == {}
    csv = tmp_path / "new.csv"
    csv.write_text("m,n\n1400, 400\n# a comment\n800,800\n1400,400\n")
    assert read_new_tasks(csv, TASK_SPACE) == {
        "m1400_n400": {"m": 1400, "n": 400},
        "m800_n800": {"m": 800, "n": 800},
    }
    csv.write_text("id,m,n\nbig,1500,1500\n")
    assert read_new_tasks(csv, TASK_SPACE) == {"big": {"m": 1500, "n": 1500}}
    yml = tmp_path / "new.yaml"
    yml.write_text("- {m: 300, n: 300}\n- {id: wide, m: 300, n: 1200}\n")
    assert list(read_new_tasks(yml, TASK_SPACE)) == ["m300_n300", "wide"]
    yml.write_text("tall: {m: 1400, n: 400}\n")
    assert read_new_tasks(yml, TASK_SPACE) == {"tall": {"m": 1400, "n": 400}}
    yml.write_text("- {m: 3000, n: 300}\n")
    with pytest.raises(ValueError, match=r"new.yaml: task 1: task is outside the task space"):
        read_new_tasks(yml, TASK_SPACE)
    yml.write_text("- {m: 300}\n")
    with pytest.raises(ValueError, match=r"missing \['n'\]"):
        read_new_tasks(yml, TASK_SPACE)
    assert task_id_of({"t": 0.25, "kind": "a b"}) == "t0.25_kinda-b"


def _fake_snakemake(tmp_path: Path, sleep: float = 0.0) -> Path:
    fake = tmp_path / "snakemake"
    fake.write_text(f'#!/bin/sh\necho "$@" >> {tmp_path}/calls\nsleep {sleep}\n')
    fake.chmod(0o755)
    return fake


def _run(tmp_path: Path, config: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "SNAKEMAKE": str(tmp_path / "snakemake"),
        "PYTHON": sys.executable,
        "WORKDIR": str(tmp_path),
    }
    return subprocess.run(
        ["bash", str(SCRIPT), str(config), *extra],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def test_scheduled_wrapper_runs_the_scheduled_target_once_at_a_time(tmp_path: Path) -> None:
    _fake_snakemake(tmp_path)
    config = tmp_path / "c.yaml"
    config.write_text("name: demo\n")
    done = _run(tmp_path, config, "--profile", "slurm")
    assert done.returncode == 0, done.stderr
    call = (tmp_path / "calls").read_text().split()
    assert call[0] == "scheduled" and "--profile" in call and str(config) in call
    assert call[-2:] == ["--forcerun", "tuningdb_revalidate"]
    assert "ended with status 0" in (tmp_path / "results/demo/logs/scheduled.log").read_text()
    # while another scheduled run holds the lock, a second one does nothing
    with open(tmp_path / "results/demo/scheduled.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        skipped = _run(tmp_path, config)
    assert skipped.returncode == 0 and "still running; skipped" in skipped.stderr
    assert len((tmp_path / "calls").read_text().splitlines()) == 1
    assert _run(tmp_path, tmp_path / "none.yaml").returncode == 2
