"""An evolve job's log keeps the lines of every attempt (the first one's failure stays readable
after the re-run resumed the run)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.workflow_utils import SNAKEMAKE, _env, copy_workflow, snakemake, write_config

#: prepare-run's line at the top of each attempt.
PREPARED = re.compile(r"^\S+: (new|resume|restart)$", re.M)


#: An objective whose process dies at its 5th call of the first attempt (a marker file says
#: the attempt happened), as a rank killed by the node's OOM killer or a Slurm time limit does.
DIES_ONCE = """
import os


def loss(params):
    marker = os.environ["DIED"]
    count = marker + ".calls"
    with open(count, "a") as fh:
        fh.write("x\\n")
    with open(count) as fh:
        calls = sum(1 for _ in fh)
    if calls >= 5 and not os.path.exists(marker):
        open(marker, "w").close()
        os._exit(9)
    return (params["x"] - 0.3) ** 2
"""


@pytest.mark.slow
@pytest.mark.skipif(not SNAKEMAKE.exists(), reason="snakemake not installed")
def test_an_evolve_log_keeps_the_lines_of_every_attempt(tmp_path: Path) -> None:
    """Regression (found by benchmarks/chaos.py, seed 5): the evolve job's log was rewritten by
    each attempt (prepare-run wrote it with '>'), so after a resume it held only the last
    attempt's lines and the failure that caused the resume was gone."""
    workdir = copy_workflow(tmp_path / "wf")
    (workdir / "diesonce.py").write_text(DIES_ONCE)
    config = {
        "name": "logs",
        "objective": "diesonce:loss",
        "parameters": {"x": {"type": "float", "low": 0.0, "high": 1.0}},
        "evolve": {"max_evaluations": 12, "time_limit": 120, "pop_size": 4},
    }
    cfg = write_config(workdir, config)
    env = _env()
    env["DIED"] = str(tmp_path / "died")
    env["PYTHONPATH"] = os.pathsep.join([str(workdir), env["PYTHONPATH"]])
    run = Path("results", "logs", "runs", "logs", "propulate-s1")
    args = (str(run / "summary.json"), "--cores", "2", "--configfile", cfg)
    first = snakemake(workdir, *args, env=env)
    assert first.returncode != 0 and (tmp_path / "died").exists(), first.stdout[-2000:]
    kept = workdir / "results" / "logs" / "logs" / "evolve" / "logs" / "propulate-s1.log"
    with kept.open("a") as fh:  # the attempt's last write cut mid-line (found by chaos seed 23:
        fh.write('  File "/tmp/propulate/')  # a full disk), the next one's line is its own
    second = snakemake(workdir, *args, env=env)
    assert second.returncode == 0, second.stdout[-2000:]
    log = kept.read_text()
    attempts = PREPARED.findall(log)
    assert attempts == ["new", "resume"], log
    # the first attempt's own lines come before the second's prepare-run line
    assert log.index(": new") < log.index(": resume") and "finished (budget)" in log
