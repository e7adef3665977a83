"""The BLAS/OpenMP threads of each rank of an evolve job: its share of the cores unless the
user set them, capped by Slurm's cpus-per-task, recorded in run.json, and the variables
Snakemake sets for a job replaced by the user's own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from propulate.engine.threads import (
    SET_VARIABLES,
    choose_threads,
    own_cpus,
    rank_threads,
    restore_user_variables,
)
from propulate.runs.log import iter_records
from propulate.runs.metadata import RunMetadata
from tests.mpi_utils import run_mpi

#: Variables that decide the threads, removed from the tests' environments.
DECIDING = (*SET_VARIABLES, "SLURM_CPUS_PER_TASK")
CLEAN = {k: v for k, v in os.environ.items() if k not in DECIDING}


def test_each_rank_gets_its_share_of_the_cores() -> None:
    choice = choose_threads({}, cores=8, ranks=2)
    assert (choice.per_rank, choice.source) == (4, "cores")
    assert choice.to_dict() == {"per_rank": 4, "source": "cores", "cores": 8, "ranks": 2}
    assert choose_threads({}, cores=2, ranks=4).per_rank == 1  # at least one
    assert choose_threads({"OMP_NUM_THREADS": " "}, cores=6, ranks=2).per_rank == 3
    assert choice.describe() == "4 per rank (8 cores, 2 ranks on this node)"


def test_slurm_cpus_per_task_caps_the_share() -> None:
    slurm = choose_threads({"SLURM_CPUS_PER_TASK": "2"}, cores=16, ranks=2)
    assert (slurm.per_rank, slurm.source) == (2, "slurm")
    assert slurm.to_dict()["cpus_per_task"] == 2
    assert slurm.describe() == "2 per rank (16 cores, 2 ranks on this node, SLURM_CPUS_PER_TASK=2)"
    # mpiexec inside a one-task allocation: its cpus-per-task is the allocation's, not a rank's
    assert choose_threads({"SLURM_CPUS_PER_TASK": "8"}, cores=8, ranks=4).per_rank == 2
    assert choose_threads({"SLURM_CPUS_PER_TASK": "x"}, cores=8, ranks=4).source == "cores"


@pytest.mark.parametrize("variable", ["OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"])
def test_a_variable_the_user_set_is_respected(variable: str) -> None:
    env = {variable: "3", "SLURM_CPUS_PER_TASK": "1"}
    choice = choose_threads(env, cores=2, ranks=2)
    assert choice.per_rank is None and choice.source == "environment"
    assert choice.to_dict()["variables"] == {variable: "3"}
    assert choice.describe() == f"as set ({variable}=3)"


def test_the_limit_is_applied_and_undone() -> None:
    from mpi4py import MPI
    from threadpoolctl import threadpool_info

    env = dict(CLEAN)
    before = [i["num_threads"] for i in threadpool_info()]
    with rank_threads(MPI.COMM_SELF, env) as choice:
        assert choice.per_rank == len(own_cpus())
        assert all(env[k] == str(choice.per_rank) for k in SET_VARIABLES)
    assert env == CLEAN
    assert [i["num_threads"] for i in threadpool_info()] == before
    user = {**CLEAN, "MKL_NUM_THREADS": "5"}
    with rank_threads(MPI.COMM_SELF, user) as choice:
        assert choice.per_rank is None and user == {**CLEAN, "MKL_NUM_THREADS": "5"}


def test_run_json_keeps_the_choice_and_omits_it_when_unknown() -> None:
    meta = RunMetadata(objective="m:f", space={}, method="random", run="seed0")
    assert "threads" not in meta.to_dict()
    meta.threads = {"per_rank": 1, "source": "cores", "cores": 2, "ranks": 2}
    assert RunMetadata.from_dict(json.loads(json.dumps(meta.to_dict()))).threads == meta.threads


def test_the_snakemake_prefix_gives_the_job_only_the_users_variables() -> None:
    """Snakemake exports every variable as the rule's threads; the prefix puts back the user's."""
    script = restore_user_variables({"MKL_NUM_THREADS": "3 4"}) + "env"
    snakemake_env = {**CLEAN, **{k: "2" for k in SET_VARIABLES}}
    out = subprocess.run(
        ["bash", "-c", script], env=snakemake_env, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert [line for line in out if line.split("=")[0] in SET_VARIABLES] == ["MKL_NUM_THREADS=3 4"]
    assert restore_user_variables({}).startswith("unset OMP_NUM_THREADS ")


BLAS_THREADS = """\
import os

from threadpoolctl import threadpool_info


def blas(params):
    return float(max(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"))


def omp(params):
    return float(os.environ["OMP_NUM_THREADS"])
"""


def _evolve(tmp: Path, objective: str, out: str, env: dict[str, str]) -> list[float]:
    (tmp / "s.yaml").write_text("parameters:\n  a: {type: float, low: 0, high: 1}\n")
    (tmp / "threads_objective.py").write_text(BLAS_THREADS)
    args = ["-m", "propulate", "evolve", "--objective", f"threads_objective:{objective}"]
    args += ["--space", "s.yaml", "--out", out, "--max-evaluations", "6", "--method", "random"]
    run_mpi(2, args, cwd=tmp, env={**env, "PYTHONPATH": str(tmp)})
    return [r["loss"] for r in iter_records(tmp / out)]


@pytest.mark.mpi
def test_each_rank_of_an_evolve_job_runs_its_share(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for k in DECIDING:
        monkeypatch.delenv(k, raising=False)
    share = max(1, len(own_cpus()) // 2)
    assert _evolve(tmp_path, "blas", "run", {}) == [float(share)] * 6
    threads = json.loads((tmp_path / "run" / "run.json").read_text())["threads"]
    assert threads == {"per_rank": share, "source": "cores", "cores": len(own_cpus()), "ranks": 2}
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert _evolve(tmp_path, "omp", "user", {}) == [3.0] * 6
    user = json.loads((tmp_path / "user" / "run.json").read_text())["threads"]
    assert user == {
        "per_rank": None,
        "source": "environment",
        "variables": {"OMP_NUM_THREADS": "3"},
    }


@pytest.mark.slow
@pytest.mark.mpi
def test_a_campaigns_evolve_job_gives_each_rank_its_share(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Snakemake sets OMP_NUM_THREADS to the job's threads (its 2 ranks); the job's ranks
    still take their share, and run.json says so."""
    for k in DECIDING:
        monkeypatch.delenv(k, raising=False)
    env = dict(os.environ)
    init = [sys.executable, "-m", "propulate", "init", "camp", "--example", "demo"]
    subprocess.run(init, cwd=tmp_path, env=env, check=True, capture_output=True)
    target = "results/demo/runs/train01/propulate-s1/summary.json"
    snakemake = [str(Path(sys.executable).parent / "snakemake"), "--cores", "2", target]
    proc = subprocess.run(
        snakemake, cwd=tmp_path / "camp", env=env, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = json.loads((tmp_path / "camp" / Path(target).parent / "run.json").read_text())
    cores = len(own_cpus())
    assert run["threads"] == {
        "per_rank": max(1, cores // 2),
        "source": "cores",
        "cores": cores,
        "ranks": 2,
    }
