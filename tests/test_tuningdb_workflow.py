"""The tuning database in the Snakemake workflow: filled by a campaign, extended by a scheduled
run for the tasks appended to the new-tasks file, re-validated when the fingerprint changes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from propulate.tuningdb.store import TuningDB
from tests.workflow_utils import SNAKEMAKE, TINY, _env, copy_workflow, job_counts, snakemake

pytestmark = pytest.mark.skipif(not SNAKEMAKE.exists(), reason="snakemake not installed")

CONFIG = {**TINY, "name": "sched", "new_tasks_file": "new_tasks.csv"}


def _snapshot(results: Path) -> dict[str, float]:
    """Modification times of every run's summary and of the campaign's products."""
    files = [
        *results.glob("runs/*/*/summary.json"),
        *results.glob("transfer/*/*/summary.json"),
        results / "model" / "lcm.json",
        results / "report.html",
        results / "summary.csv",
    ]
    return {str(f.relative_to(results)): f.stat().st_mtime for f in files}


def _scheduled(workdir: Path, env: dict[str, str]) -> str:
    """One scheduled run through the wrapper script; returns its log."""
    script = workdir / "workflow" / "scripts" / "scheduled_run.sh"
    proc = subprocess.run(
        ["bash", str(script), "sched.yaml"],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    log = (workdir / "results" / "sched" / "logs" / "scheduled.log").read_text()
    assert proc.returncode == 0, proc.stderr + log[-5000:]
    return log.rsplit("scheduled_run:", 2)[-2]  # this run's part of the log


@pytest.mark.slow
def test_campaign_then_scheduled_run_for_two_appended_tasks(tmp_path: Path) -> None:
    import yaml

    workdir = copy_workflow(tmp_path / "wf")
    (workdir / "sched.yaml").write_text(yaml.safe_dump(CONFIG, sort_keys=False))
    proc = snakemake(workdir, "--cores", "2", "--configfile", "sched.yaml", timeout=600)
    assert proc.returncode == 0, proc.stdout[-5000:]
    results = workdir / "results" / "sched"
    with TuningDB(results, readonly=True) as db:
        before = db.versions()
    assert sorted(r.task_id for r in before) == ["t_new", "train00", "train01"]
    assert "Tuning database" in (results / "report.html").read_text()
    stamps = _snapshot(results)

    (workdir / "new_tasks.csv").write_text("t\n2.5\n8.25\n")
    env = {**_env(), "PYTHON": sys.executable, "SNAKEMAKE": str(SNAKEMAKE)}
    log = _scheduled(workdir, env)
    assert job_counts(log) == {
        "listed_task": 2,
        "transfer": 2,
        "tuningdb_update": 1,
        "tuningdb_revalidate": 1,
        "scheduled": 1,
    }, log[-3000:]
    for task in ("t2.5", "t8.25"):  # TLA2 only
        assert (results / "transfer" / task / "tla2" / "summary.json").is_file()
        assert not (results / "transfer" / task / "tla1").exists()
    now = _snapshot(results)
    assert {k: now[k] for k in stamps} == stamps  # every other result untouched
    with TuningDB(results, readonly=True) as db:
        after = db.versions()
        current = db.current()
    assert after[: len(before)] == before
    added = after[len(before) :]
    assert sorted((r.task_id, r.method, r.version) for r in added) == [
        ("t2.5", "tla2", 1),
        ("t8.25", "tla2", 1),
    ]
    assert len(current) == 5
    assert json.loads((results / "tuningdb" / "revalidate.json").read_text())["checked"] == []

    # the machine changes (a faked BLAS upgrade): every stored row is re-measured
    env["PROPULATE_FINGERPRINT"] = json.dumps({"blas": "openblas 9.9"})
    log = _scheduled(workdir, env)
    assert job_counts(log) == {"tuningdb_revalidate": 1, "scheduled": 1}, log[-3000:]
    result = json.loads((results / "tuningdb" / "revalidate.json").read_text())
    assert sorted(result["checked"]) == ["t2.5", "t8.25", "t_new", "train00", "train01"]
    assert result["drifted"] == []  # the demo loss is deterministic: no drift
    with TuningDB(results, readonly=True) as db:
        assert len(db.revalidations()) == 5
        assert {r.fingerprint["blas"] for r in db.current()} == {"openblas 9.9"}
