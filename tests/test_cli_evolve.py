"""``python -m propulate evolve``: help, input errors, summary, task objectives."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from propulate.history import read_history
from tests.mpi_utils import run_mpi

SPACE = """\
parameters:
  a: {type: float, low: -5.12, high: 5.12}
  b: [-5.12, 5.12]
"""


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "propulate", *args], capture_output=True,
                          text=True, timeout=60, cwd=cwd)


def test_help_documents_the_options():
    out = cli("evolve", "--help").stdout
    for flag in ("--objective", "--space", "--out", "--max-evaluations", "--time-limit",
                 "--islands", "--seed", "--method", "--migration-probability"):
        assert flag in out


@pytest.mark.parametrize(
    ("space", "objective", "message"),
    [
        ("parameters:\n  a: {type: float, low: 3, high: 1}\n", "propulate.objectives.benchmark:sphere",
         "parameter 'a'"),
        ("parameters: {}\n", "propulate.objectives.benchmark:sphere", "empty"),
        (SPACE, "no_such_module:f", "no_such_module"),
        (SPACE, "propulate.objectives.benchmark:nope", "nope"),
    ],
)
def test_bad_input_fails_fast_with_a_message_naming_it(tmp_path, space, objective, message):
    (tmp_path / "s.yaml").write_text(space)
    proc = cli("evolve", "--objective", objective, "--space", str(tmp_path / "s.yaml"),
               "--out", str(tmp_path / "out"), "--max-evaluations", "10")
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "out").exists()


def test_missing_stopping_criterion_is_an_error(tmp_path):
    (tmp_path / "s.yaml").write_text(SPACE)
    proc = cli("evolve", "--objective", "propulate.objectives.benchmark:sphere", "--space",
               str(tmp_path / "s.yaml"), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2 and "stopping criterion" in proc.stderr


@pytest.mark.mpi
def test_evolve_writes_logs_summary_and_progress(tmp_path):
    (tmp_path / "s.yaml").write_text(SPACE)
    proc = run_mpi(2, ["-m", "propulate", "evolve", "--objective",
                       "propulate.objectives.benchmark:sphere", "--space", str(tmp_path / "s.yaml"),
                       "--out", str(tmp_path / "out"), "--max-evaluations", "300", "--seed", "3",
                       "--islands", "2"])
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["evaluations"] == 300 and summary["ranks"] == 2
    assert summary["run"] == "seed3" and summary["method"] == "propulate"
    assert summary["best_loss"] < 1.0 and set(summary["best_params"]) == {"a", "b"}
    assert summary["failures"] == 0 and summary["wall_time"] > 0
    df = read_history(tmp_path / "out")
    assert len(df) == 300 and abs(df["loss"].min() - summary["best_loss"]) < 1e-12
    assert "evaluations 300/300" in proc.stdout


@pytest.mark.mpi
def test_task_objective_gets_the_task_and_constraint(tmp_path):
    (tmp_path / "s.yaml").write_text(
        "parameters:\n  x: {type: float, low: 0.0, high: 1.0}\n"
    )
    (tmp_path / "t.json").write_text(json.dumps({"id": "demo07", "task": {"t": 0.7}}))
    run_mpi(2, ["-m", "propulate", "evolve", "--objective", "propulate.objectives.demo:demo_loss",
                "--space", str(tmp_path / "s.yaml"), "--task", str(tmp_path / "t.json"),
                "--out", str(tmp_path / "out"), "--max-evaluations", "200"])
    df = read_history(tmp_path / "out")
    assert set(df["task"]) == {"demo07"}
    assert json.loads((tmp_path / "out" / "task.json").read_text())["task"] == {"t": 0.7}
    from propulate.objectives.demo import demo_true_optimum

    _, fstar = demo_true_optimum(0.7)
    assert df["loss"].min() - fstar < 0.05


@pytest.mark.mpi
def test_a_rank_that_exits_ends_the_whole_job(tmp_path):
    # Rank 0's objective exits; rank 1 would otherwise wait on it (budget window) forever.
    (tmp_path / "s.yaml").write_text(SPACE)
    (tmp_path / "exiting.py").write_text(
        "import sys\nimport time\nfrom mpi4py import MPI\n\n"
        "def loss(p):\n    if MPI.COMM_WORLD.rank == 0:\n        sys.exit(3)\n"
        "    time.sleep(0.01)\n    return p['a'] ** 2\n"
    )
    proc = run_mpi(2, ["-m", "propulate", "evolve", "--objective", "exiting:loss", "--space",
                       str(tmp_path / "s.yaml"), "--out", str(tmp_path / "out"),
                       "--max-evaluations", "1000"],
                   timeout=60, env={"PYTHONPATH": str(tmp_path)}, check=False)
    assert proc.returncode != 0
    assert "MPI_Abort(MPI_COMM_WORLD, 3)" in proc.stdout + proc.stderr
