"""PDGEQRF on the real Slurm test cluster: every evaluation is a job step of the tuner's job.

The tuner runs in a 2-task batch job; the campaign's launcher ``srun -n {nproc} --exact`` starts
each evaluation of the C driver as a new step inside that allocation. A wrapper around the
driver logs each task's step id and keeps the driver's output, so the test sees one step per
evaluation, with ``nproc`` tasks forming one MPI world of ``nproc`` ranks. Skipped unless a
cluster answers and ScaLAPACK is installed (failing instead under ``PROPULATE_REQUIRE_SLURM=1``
or on CI).
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import uuid
from collections import defaultdict
from pathlib import Path

import pytest
import yaml

from propulate.compat.history import iter_records
from propulate.problems import pdgeqrf
from tests.pdgeqrf_utils import build_driver, requires_scalapack
from tests.slurm_utils import clean_env, requires_slurm

pytestmark = [pytest.mark.slurm, requires_slurm, requires_scalapack]

REPO = Path(__file__).resolve().parents[1]
#: Seconds ``sbatch --wait`` may take.
JOB_TIMEOUT = 300.0
#: Evaluations of the tiny campaign.
EVALUATIONS = 4
TASK = {"m": 96, "n": 64}

#: Logs the step of each task, then runs the driver and keeps rank 0's output.
WRAPPER = (
    'set -o pipefail; echo "$SLURM_STEP_ID $SLURM_PROCID" >> steps.log; '
    '"$0" "$@" | tee -a driver.log'
)


def _campaign(tmp_path: Path, driver: Path) -> Path:
    spec = yaml.safe_load((REPO / "config" / "pdgeqrf.yaml").read_text())
    args = "--m {m} --n {n} --mb {mb} --nb {nb} --p {p} --repeats 1 --warmup 1"
    spec["objective"].update(
        command=f"bash -c {shlex.quote(WRAPPER)} {shlex.quote(str(driver))} {args}",
        launcher="srun -n {nproc} --exact",
        workdir=str(tmp_path),
        timeout=60,
    )
    spec["parameters"]["mb"] = spec["parameters"]["nb"] = {"type": "int", "low": 4, "high": 32}
    path = tmp_path / "campaign.yaml"
    path.write_text(yaml.safe_dump(spec))
    (tmp_path / "task.json").write_text(json.dumps({"id": "tiny", "task": TASK}))
    return path


def test_each_evaluation_is_a_step_with_an_mpi_world_of_nproc(tmp_path: Path) -> None:
    driver = build_driver(tmp_path / "build")
    space = _campaign(tmp_path, driver)
    tuner = shlex.join(
        [
            sys.executable,
            "-m",
            "propulate",
            "measure",
            "--space",
            str(space),
            "--task",
            str(tmp_path / "task.json"),
            "--out",
            str(tmp_path / "run"),
            "--random",
            str(EVALUATIONS),
            "--seed",
            "2",
        ]
    )
    cmd = [
        "sbatch",
        "--wait",
        "--parsable",
        "-N1",
        "-n2",
        "--time=4",
        f"--job-name=pytest-{uuid.uuid4().hex[:8]}",
        f"--output={tmp_path / 'job.out'}",
        "--wrap",
        tuner,
    ]
    try:
        proc = subprocess.run(
            cmd,
            cwd=REPO,
            env={**clean_env(), "PYTHONPATH": str(REPO)},
            capture_output=True,
            text=True,
            timeout=JOB_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"sbatch --wait did not finish within {JOB_TIMEOUT:.0f} s: {exc.stderr!r}")
    job_out = (tmp_path / "job.out").read_text() if (tmp_path / "job.out").exists() else ""
    assert proc.returncode == 0, f"job failed: {proc.stderr}\n{job_out[-3000:]}"

    records = list(iter_records(tmp_path / "run"))
    assert len(records) == EVALUATIONS, job_out[-3000:]
    assert all(r["status"] == "ok" and r["loss"] > 0 for r in records), records
    assert all(pdgeqrf.feasible(r["params"], TASK) for r in records)
    steps: dict[str, list[int]] = defaultdict(list)
    for line in (tmp_path / "steps.log").read_text().splitlines():
        step, procid = line.split()
        steps[step].append(int(procid))
    # one new step per evaluation (never the batch step), holding nproc tasks
    assert "batch" not in steps and "" not in steps, steps
    assert sorted(sorted(p) for p in steps.values()) == sorted(
        list(range(r["params"]["nproc"])) for r in records
    )
    # and the tasks of a step are one MPI world: rank 0 alone reports, with ranks = nproc
    reported = [
        line
        for line in (tmp_path / "driver.log").read_text().splitlines()
        if line.startswith("pdgeqrf m=")
    ]
    assert sorted(int(line.split("ranks=")[1].split()[0]) for line in reported) == sorted(
        r["params"]["nproc"] for r in records
    )
