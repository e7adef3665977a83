"""An evolve run stopped by a signal to one of its ranks is not a finished job: the campaign's
re-run resumes it to its budget (propulate.campaign check-run)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from propulate.campaign.__main__ import main as campaign_main
from propulate.runs.summary import RunSummary, write_summary
from tests.workflow_utils import SNAKEMAKE, _env, copy_workflow, snakemake, write_config

#: An objective that, once (a marker file), sends SIGTERM to its own rank at its 5th call, as
#: a node's OOM killer or a cancelled job step may signal one process of a job.
TERMS_ONCE = """
import fcntl
import os
import signal


def loss(params):
    marker = os.environ["TERMED"]
    count = marker + ".calls"
    with open(count, "a+") as fh:  # count and read under a lock: one call of the ranks is the 5th
        fcntl.flock(fh, fcntl.LOCK_EX)
        fh.write("x\\n")
        fh.flush()
        fh.seek(0)
        calls = sum(1 for _ in fh)
    if calls == 5 and not os.path.exists(marker):
        open(marker, "w").close()
        os.kill(os.getpid(), signal.SIGTERM)
    return (params["x"] - 0.3) ** 2
"""

BUDGET = 16


@pytest.mark.slow
@pytest.mark.skipif(not SNAKEMAKE.exists(), reason="snakemake not installed")
def test_a_run_stopped_by_a_signal_to_one_rank_is_resumed_to_its_budget(tmp_path: Path) -> None:
    """Regression (found by benchmarks/chaos.py --long, seeds 1015 and 1020: SIGTERM to one
    evolve rank; the run stopped cleanly with 11 of 16 evaluations, evolve exited 0, and the
    campaign went on with the short run)."""
    workdir = copy_workflow(tmp_path / "wf")
    (workdir / "termsonce.py").write_text(TERMS_ONCE)
    config = {
        "name": "term",
        "objective": "termsonce:loss",
        "parameters": {"x": {"type": "float", "low": 0.0, "high": 1.0}},
        "evolve": {"max_evaluations": BUDGET, "time_limit": 120, "pop_size": 4},
    }
    cfg = write_config(workdir, config)
    env = _env()
    env["TERMED"] = str(tmp_path / "termed")
    env["PYTHONPATH"] = os.pathsep.join([str(workdir), env["PYTHONPATH"]])
    run = workdir / "results" / "term" / "runs" / "term" / "propulate-s1"
    args = (str((run / "summary.json").relative_to(workdir)), "--cores", "2")
    first = snakemake(workdir, *args, "--configfile", cfg, env=env)
    assert (tmp_path / "termed").exists()
    assert first.returncode != 0, first.stdout[-3000:]
    assert "stopped by a signal after" in first.stdout
    assert not (run / "summary.json").exists()
    second = snakemake(workdir, *args, "--configfile", cfg, env=env)
    assert second.returncode == 0, second.stdout[-3000:]
    summary = json.loads((run / "summary.json").read_text())
    assert summary["evaluations"] >= BUDGET and summary["stop_reason"] == "budget"


@pytest.mark.parametrize(("reason", "status"), [("signal", 1), ("budget", 0), ("time limit", 0)])
def test_check_run_fails_a_run_stopped_by_a_signal(
    tmp_path: Path, reason: str, status: int, capsys: pytest.CaptureFixture[str]
) -> None:
    write_summary(
        tmp_path,
        RunSummary(
            task=None, run="s1", method="propulate", evaluations=3, stop_reason=reason, machine={}
        ),
    )
    assert campaign_main(["check-run", "--out", str(tmp_path)]) == status
    assert ("stopped by a signal after 3 evaluations" in capsys.readouterr().err) == (status == 1)
    assert campaign_main(["check-run", "--out", str(tmp_path / "none")]) == 0
