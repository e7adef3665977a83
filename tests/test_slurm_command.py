"""Command objectives on the real Slurm test cluster: ``srun`` steps launched from a job.

Started with ``ci/slurm/start.sh``; skipped unless a cluster answers (see ``slurm_utils``), and
failing instead under ``PROPULATE_REQUIRE_SLURM=1``. The node has 2 CPUs, so

* from the batch script, a command objective with ``launcher: "srun -n 2 --exact"`` runs an
  MPI program as a step of the job, which forms an MPI world of 2;
* from a 2-rank tuner that is itself a step (``srun -n 2``, all CPUs), each rank launches
  ``srun -n 1 --overlap`` steps: new steps of the same job (``--overlap`` as the tuner's step
  holds every CPU), each a world of its own, not confused by the tuner's step variables; the
  same MPI program run without a launcher is a singleton (it inherits no PMI variables).

Every job has a Slurm time limit and every client call a timeout, so nothing here can hang.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.slurm_utils import clean_env, requires_slurm

pytestmark = [pytest.mark.slurm, requires_slurm]

REPO = Path(__file__).resolve().parents[1]
#: Seconds ``sbatch --wait`` may take.
JOB_TIMEOUT = 240.0
#: Slurm time limit of each job, in minutes.
JOB_TIME_LIMIT = "3"

#: Prints the MPI world size and the Slurm step id of the program as a JSON object.
PROBE = (
    "import json, os\n"
    "from mpi4py import MPI\n"
    "c = MPI.COMM_WORLD\n"
    "if c.Get_rank() == 0:\n"
    "    print(json.dumps({'size': c.Get_size(), 'step': int(os.environ.get('SLURM_STEP_ID', -1))}))\n"
)

#: A tuner: evaluates a size command and a step command with the given launcher, writes both.
TUNER = """\
import json, os, shlex, sys
from propulate.user_objective import Command

launcher, probe, out = sys.argv[1], sys.argv[2], sys.argv[3]
if "mpi4py" in sys.argv[4:]:
    from mpi4py import MPI
    rank = MPI.COMM_WORLD.Get_rank()
else:
    rank = 0
program = f"{shlex.quote(sys.executable)} {shlex.quote(probe)}"
size = Command(program, result={"json": "size"}, launcher=launcher, timeout=90)
step = Command(program, result={"json": "step"}, launcher=launcher, timeout=90)
size.check([])
record = {"size": size({}), "step": step({}), "outer_step": os.environ.get("SLURM_STEP_ID")}
if "mpi4py" in sys.argv[4:]:  # the same program without a launcher, from a rank of the step
    record["single"] = Command(program, result={"json": "size"}, timeout=90)({})
    record["single_step"] = Command(program, result={"json": "step"}, timeout=90)({})
with open(f"{out}.{rank}", "w") as fh:
    json.dump(record, fh)
"""


def _sbatch(tmp_path: Path, script: str) -> subprocess.CompletedProcess[str]:
    """Run ``script`` as a 2-task batch job and wait for it; fail the test on a timeout."""
    cmd = [
        "sbatch",
        "--wait",
        "--parsable",
        "-N1",
        "-n2",
        f"--time={JOB_TIME_LIMIT}",
        f"--job-name=pytest-{uuid.uuid4().hex[:8]}",
        f"--output={tmp_path / 'job.out'}",
        "--wrap",
        script,
    ]
    env = {**clean_env(), "PYTHONPATH": str(REPO)}
    try:
        return subprocess.run(
            cmd,
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=JOB_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"sbatch --wait did not finish within {JOB_TIMEOUT:.0f} s: {exc.stderr!r}")


def _files(tmp_path: Path) -> tuple[Path, Path]:
    pytest.importorskip("mpi4py")
    (tmp_path / "tuner.py").write_text(TUNER)
    (tmp_path / "probe.py").write_text(PROBE)
    return tmp_path / "tuner.py", tmp_path / "probe.py"


def _job_output(tmp_path: Path) -> str:
    out = tmp_path / "job.out"
    return out.read_text()[-4000:] if out.exists() else "(no job output)"


def test_srun_step_from_the_batch_script(tmp_path: Path) -> None:
    tuner, probe = _files(tmp_path)
    script = shlex.join(
        [sys.executable, str(tuner), "srun -n 2 --exact", str(probe), str(tmp_path / "out")]
    )
    proc = _sbatch(tmp_path, script)
    assert proc.returncode == 0, f"job failed: {proc.stderr}\n{_job_output(tmp_path)}"
    record = json.loads((tmp_path / "out.0").read_text())
    assert record["size"] == 2.0, record  # the step is one MPI world of the 2 tasks


def test_srun_steps_from_ranks_of_a_tuner_step(tmp_path: Path) -> None:
    tuner, probe = _files(tmp_path)
    tuner_cmd = shlex.join(
        [
            sys.executable,
            str(tuner),
            "srun -n 1 --overlap",
            str(probe),
            str(tmp_path / "out"),
            "mpi4py",
        ]
    )
    proc = _sbatch(tmp_path, f"srun -n 2 --mpi=pmi2 {tuner_cmd}")
    assert proc.returncode == 0, f"job failed: {proc.stderr}\n{_job_output(tmp_path)}"
    records = [json.loads((tmp_path / f"out.{rank}").read_text()) for rank in (0, 1)]
    outer = {r["outer_step"] for r in records}
    assert len(outer) == 1 and None not in outer, records  # both ranks in one tuner step
    for r in records:
        assert r["size"] == 1.0, records  # a world of its own, not the tuner's world of 2
        assert r["step"] != float(r["outer_step"]), records  # a new step of the job
        # without a launcher: an MPI singleton that does not see the tuner's step
        assert r["single"] == 1.0 and r["single_step"] == -1.0, records
    assert len({r["step"] for r in records}) == 2, records
