"""Smoke tests of the real Slurm test cluster (``ci/slurm/start.sh``).

They check what the Slurm campaign relies on: ``srun`` forms one MPI world
with the venv's mpi4py, batch job failures are reported as failures, and two
one-CPU jobs run at the same time. Skipped unless a cluster answers (see
``slurm_utils``). Every subprocess call has a timeout, and every job a Slurm
time limit, so nothing here can hang.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.slurm_utils import clean_env, requires_slurm, slurm_available

pytestmark = [pytest.mark.slurm, requires_slurm]

#: Seconds a single Slurm client command (srun, sbatch --wait, scontrol) may take.
CMD_TIMEOUT = 120.0
#: Slurm time limit for each job, in minutes: a stuck job is killed by Slurm itself.
JOB_TIME_LIMIT = "2"
#: Job states after which a job will not run again.
_FINAL_STATES = {
    "COMPLETED",
    "FAILED",
    "CANCELLED",
    "TIMEOUT",
    "NODE_FAIL",
    "OUT_OF_MEMORY",
    "PREEMPTED",
    "BOOT_FAIL",
    "DEADLINE",
}

_MPI_PROBE = (
    "import json\n"
    "from mpi4py import MPI\n"
    "c = MPI.COMM_WORLD\n"
    "print(json.dumps({'rank': c.Get_rank(), 'size': c.Get_size()}), flush=True)\n"
)


def _run(cmd: list[str], cwd: Path, timeout: float = CMD_TIMEOUT) -> subprocess.CompletedProcess:
    """Run a Slurm client command with a timeout and a clean environment.

    Parameters
    ----------
    cmd : list[str]
        Command and arguments.
    cwd : Path
        Working directory (also the jobs' working directory).
    timeout : float
        Seconds before the command is killed and the test fails.

    Returns
    -------
    subprocess.CompletedProcess
        The finished process, with text ``stdout`` and ``stderr``.
    """
    try:
        return subprocess.run(
            cmd,
            cwd=cwd,
            env=clean_env(),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"{' '.join(cmd)} did not finish within {timeout:.0f} s: {exc.stderr!r}")


def _job_info(job_id: str, cwd: Path) -> dict[str, str]:
    """Read a job's fields from ``scontrol show job`` (works without slurmdbd).

    Parameters
    ----------
    job_id : str
        Slurm job id.
    cwd : Path
        Working directory for the call.

    Returns
    -------
    dict[str, str]
        ``Key=Value`` fields of the job record, e.g. ``JobState`` and ``ExitCode``.
    """
    proc = _run(["scontrol", "-o", "show", "job", job_id], cwd, timeout=30.0)
    assert proc.returncode == 0, f"scontrol show job {job_id} failed: {proc.stderr}"
    return dict(re.findall(r"(\w+)=(\S*)", proc.stdout))


def _wait_for_jobs(job_ids: list[str], cwd: Path, timeout: float) -> list[dict[str, str]]:
    """Poll ``scontrol`` until all jobs have ended.

    Parameters
    ----------
    job_ids : list[str]
        Slurm job ids.
    cwd : Path
        Working directory for the calls.
    timeout : float
        Seconds before the test fails.

    Returns
    -------
    list[dict[str, str]]
        Final job records, in the order of ``job_ids``.
    """
    deadline = time.monotonic() + timeout
    while True:
        infos = [_job_info(j, cwd) for j in job_ids]
        if all(i.get("JobState") in _FINAL_STATES for i in infos):
            return infos
        if time.monotonic() > deadline:
            pytest.fail(f"jobs {job_ids} not finished after {timeout:.0f} s: {infos}")
        time.sleep(0.25)


def _job_name() -> str:
    """Return a unique job name, so jobs of parallel test runs are told apart."""
    return f"pytest-{uuid.uuid4().hex[:8]}"


def test_slurm_is_running() -> None:
    """The cluster answers (fails clearly under ``PROPULATE_REQUIRE_SLURM=1``)."""
    ok, reason = slurm_available()
    assert ok, reason


@pytest.mark.parametrize("mpi_flag", [[], ["--mpi=pmi2"]], ids=["mpi-default", "mpi-pmi2"])
def test_srun_forms_one_mpi_world(tmp_path: Path, mpi_flag: list[str]) -> None:
    """``srun -n 2`` with the venv's python gives ranks 0 and 1 of one world of size 2.

    Without PMI2 each rank would start as a singleton (two worlds of size 1),
    so this checks both the cluster's ``MpiDefault`` and an explicit flag.
    """
    pytest.importorskip("mpi4py")
    cmd = [
        "srun",
        "-N1",
        "-n2",
        f"--time={JOB_TIME_LIMIT}",
        f"--job-name={_job_name()}",
        *mpi_flag,
        sys.executable,
        "-c",
        _MPI_PROBE,
    ]
    proc = _run(cmd, tmp_path)
    assert proc.returncode == 0, f"srun failed ({proc.returncode}): {proc.stderr}"
    ranks = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert sorted(r["rank"] for r in ranks) == [0, 1], proc.stdout
    assert all(r["size"] == 2 for r in ranks), proc.stdout


def test_sbatch_success_completes(tmp_path: Path) -> None:
    """A batch job that exits 0 completes, writes its output and is COMPLETED."""
    out = tmp_path / "job.out"
    cmd = [
        "sbatch",
        "--wait",
        "--parsable",
        f"--time={JOB_TIME_LIMIT}",
        f"--job-name={_job_name()}",
        f"--output={out}",
        "--wrap",
        "echo hello-from-slurm",
    ]
    proc = _run(cmd, tmp_path)
    assert proc.returncode == 0, f"sbatch --wait failed ({proc.returncode}): {proc.stderr}"
    job_id = proc.stdout.strip().split(";")[0]
    assert out.read_text().strip() == "hello-from-slurm"
    info = _job_info(job_id, tmp_path)
    assert info.get("JobState") == "COMPLETED", info
    assert info.get("ExitCode") == "0:0", info


def test_sbatch_failure_is_reported(tmp_path: Path) -> None:
    """A batch job that exits 1 makes ``sbatch --wait`` fail and is recorded as FAILED."""
    cmd = [
        "sbatch",
        "--wait",
        "--parsable",
        f"--time={JOB_TIME_LIMIT}",
        f"--job-name={_job_name()}",
        f"--output={tmp_path / 'job.out'}",
        "--wrap",
        "exit 1",
    ]
    proc = _run(cmd, tmp_path)
    assert proc.returncode == 1, f"expected exit code 1, got {proc.returncode}: {proc.stderr}"
    job_id = proc.stdout.strip().split(";")[0]
    assert job_id.isdigit(), proc.stdout
    # MinJobAge keeps finished jobs in slurmctld's memory, so without sacct
    # the end state is still visible here (as the executor plugin needs).
    info = _job_info(job_id, tmp_path)
    assert info.get("JobState") == "FAILED", info
    assert info.get("ExitCode") == "1:0", info


def test_two_one_cpu_jobs_run_at_once(tmp_path: Path) -> None:
    """Two one-CPU jobs run concurrently (each waits to see the other's marker file).

    Polls ``scontrol`` instead of using ``sbatch --wait``, whose back-off
    polling would add several seconds.
    """
    script = (
        'touch "{me}"; '
        "for i in $(seq 1 300); do "
        '[ -e "{other}" ] && exit 0; sleep 0.1; '
        "done; exit 3"
    )
    a, b = tmp_path / "a.started", tmp_path / "b.started"
    job_ids = []
    for me, other in ((a, b), (b, a)):
        cmd = [
            "sbatch",
            "--parsable",
            "-n1",
            "-c1",
            f"--time={JOB_TIME_LIMIT}",
            f"--job-name={_job_name()}",
            f"--output={tmp_path / (me.stem + '.out')}",
            "--wrap",
            script.format(me=me, other=other),
        ]
        proc = _run(cmd, tmp_path, timeout=30.0)
        assert proc.returncode == 0, f"sbatch failed ({proc.returncode}): {proc.stderr}"
        job_ids.append(proc.stdout.strip().split(";")[0])
    try:
        infos = _wait_for_jobs(job_ids, tmp_path, timeout=CMD_TIMEOUT)
    finally:
        # Never leave jobs behind, e.g. after a timeout (no-op once they ended).
        _run(["scancel", *job_ids], tmp_path, timeout=30.0)
    states = [(i.get("JobState"), i.get("ExitCode")) for i in infos]
    assert states == [("COMPLETED", "0:0")] * 2, (
        f"jobs did not overlap: {states} (exit code 3 = waited in vain for the other)"
    )
