"""Progress lines and ``status`` of runs with declared objectives say what the run reached in
those objectives' terms (the Pareto set's size and hypervolume; a maximised objective in its
own sign); an objective returning several values to a run that declares none stops it at the
first evaluation; and the final progress line counts the evaluations the records hold."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from propulate.cli import main
from propulate.compat.history import read_history
from propulate.runs.declared_objectives import Objectives
from propulate.runs.front import describe, front_of
from tests.mpi_utils import run_mpi

OBJECTIVES = """
import time


def two(params):
    return {"runtime": 1.0 + params["x"], "accuracy": params["x"] ** 0.5}


def accuracy(params):
    return {"accuracy": 1.0 - (params["x"] - 0.3) ** 2}


def undeclared(params):
    return {"runtime": 1.0 + params["x"], "accuracy": params["x"]}


def slow(params):
    time.sleep(0.1)
    return (params["x"] - 0.3) ** 2
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "objs.py").write_text(OBJECTIVES)
    (tmp_path / "space.yaml").write_text("parameters:\n  x: [0.0, 1.0]\n")
    return tmp_path


def evolve(folder: Path, name: str, *extra: str) -> subprocess.CompletedProcess[str]:
    """``evolve`` on one rank in ``folder`` (where the objectives' module is found)."""
    args = ["-m", "propulate", "evolve", "--objective", f"objs:{name}", "--space", "space.yaml"]
    args += ["--out", name, "--max-evaluations", "40", "--seed", "1", *extra]
    return subprocess.run(
        [sys.executable, *args], cwd=folder, capture_output=True, text=True, timeout=300
    )


def test_the_front_of_two_objectives_is_its_size_and_scaled_hypervolume() -> None:
    declared = Objectives.parse("runtime:min,accuracy:max")
    values = [
        {"runtime": 1.0, "accuracy": 0.0},
        {"runtime": 2.0, "accuracy": 1.0},
        {"runtime": 2.0, "accuracy": 0.5},  # dominated by the second
    ]
    # scaled: (0, 1) and (1, 0) against the reference (1.1, 1.1): 1.1 * 0.1 + 0.1 * 1.0
    size, volume = front_of(declared, values)
    assert size == 2 and volume == pytest.approx(0.21)
    assert describe(declared, values) == "pareto set 2, hypervolume 0.21"
    assert describe(declared, []) == "pareto set 0, hypervolume 0"


def test_one_objective_in_its_own_sign_and_weights_as_their_sum() -> None:
    maximised = Objectives.parse("accuracy:max")
    assert describe(maximised, [{"accuracy": 0.5}, {"accuracy": 0.99999}]) == (
        "best accuracy 0.99999"
    )
    weighted = Objectives.parse("runtime:min:1,energy:min:0.01")
    values = [{"runtime": 2.0, "energy": 100.0}, {"runtime": 1.5, "energy": 300.0}]
    assert describe(weighted, values) == "best weighted sum 3"


def test_log_and_status_of_two_objectives_and_of_a_maximised_one(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    two = evolve(folder, "two", "--objectives", "runtime:min,accuracy:max")
    final = [line for line in two.stdout.splitlines() if "finished (budget)" in line]
    assert final and re.search(r"pareto set \d+, hypervolume [0-9.]+", final[0]), two.stdout
    assert "best loss" not in two.stdout
    acc = evolve(folder, "accuracy", "--objectives", "accuracy:max")
    best = read_history(folder / "accuracy")["loss"].min()  # the loss: accuracy negated
    assert best < 0 and f"best accuracy {-best:.6g}" in acc.stdout
    assert main(["status", str(folder)]) == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    assert re.search(r"40/40 evals  0 failed  pareto set \d+, hypervolume", lines["two"])
    assert f"best accuracy {-best:.6g}" in lines["accuracy"]


def test_several_values_without_declared_objectives_stop_at_the_first(folder: Path) -> None:
    proc = evolve(folder, "undeclared")
    assert proc.returncode == 1
    assert len(read_history(folder / "undeclared")) == 1  # not the failure limit's 20
    assert "does not match the run's objectives" in proc.stderr
    assert "--objectives name:min,name:max" in proc.stderr


@pytest.mark.mpi
@pytest.mark.slow
def test_the_final_count_is_the_records_count_after_a_time_limit(folder: Path) -> None:
    args = ["-m", "propulate", "evolve", "--objective", "objs:slow", "--space", "space.yaml"]
    args += ["--out", "run", "--max-evaluations", "2000", "--time-limit", "2"]
    proc = run_mpi(2, [*args, "--progress-interval", "0.5"], cwd=folder)
    final = re.search(r"finished \(time limit\): evaluations (\d+)/2000", proc.stdout)
    assert final is not None, proc.stdout
    summary = json.loads((folder / "run" / "summary.json").read_text())
    records = len(read_history(folder / "run"))
    assert int(final.group(1)) == summary["evaluations"] == records
