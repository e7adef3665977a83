"""A tiny campaign run with ``--profile profiles/slurm`` against the real test cluster.

Started with ``ci/slurm/start.sh``; skipped unless a cluster answers (see ``slurm_utils``).
Snakemake runs in a temporary copy of the workflow, as users run it, with only the settings the
CI cluster needs on its command line (never in the profile):

* ``--slurm-status-command squeue``, ``--slurm-no-account`` and a 2 s first status check: there
  is no slurmdbd, so ``sacct`` would wait forever;
* the partition through ``SBATCH_PARTITION``, which the profile turns into ``slurm_partition``
  (``--default-resources`` on the command line would replace the profile's whole
  ``default-resources``, runtime and memory included);
* the profile's own ``set-resources`` of ``evolve`` with ``tasks`` lowered to 2 ranks, as the node
  has 2 CPUs (``--set-resources`` on the command line also replaces the profile's whole mapping,
  so the other keys, e.g. the ``srun --mpi=pmi2`` launcher, are copied from the profile).

Snakemake ignores SIGTERM when it hangs, so it runs in its own process group under a hard
timeout that kills the group and cancels the Slurm jobs it submitted.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from propulate.compat.history import read_history
from tests.slurm_utils import (
    CI_OPTIONS,
    CMD_TIMEOUT,
    PARTITION,
    PROFILE,
    RANKS,
    Run,
    clean_env,
    evolve_resources,
    prompt_snakemake,
    requires_slurm,
    run_snakemake,
)
from tests.workflow_utils import SNAKEMAKE, copy_workflow, write_config

pytestmark = [pytest.mark.slurm, requires_slurm]

REPO = Path(__file__).resolve().parents[1]
TRAINING = ("train00", "train01")

#: Two evolve jobs of 2 ranks, one LCM fit, TLA1 and TLA2 on one new task (2 tasks each).
TINY: dict[str, Any] = {
    "name": "tiny_slurm",
    "objective": "propulate.problems.demo:demo_loss",
    "parameters": {"x": {"type": "float", "low": 0.0, "high": 1.0}},
    "task_space": {"t": {"type": "float", "low": 0.0, "high": 10.0}},
    "training_tasks": {"latin_hypercube": {"n": len(TRAINING), "seed": 0}},
    "new_tasks": {"t_new": {"t": 4.5}},
    "evolve": {"seeds": [1], "max_evaluations": 16, "time_limit": 20, "pop_size": 4},
    "lcm": {"latent": 1, "restarts": 1, "max_points": 16},
    "transfer": {"tla2_budget": 2},
    # an evaluation's cores: the measuring jobs (transfer) get as many tasks on one node
    "evaluation_cores": 2,
}

#: An objective that imports fine (the DAG checks that) but exits the process when evaluated.
FAILING_OBJECTIVE = '''\
"""Exits with status 3 at the first evaluation, on every rank."""

import sys


def loss(params, task):
    sys.exit(3)
'''

#: One training task whose evolve job fails.
FAILING: dict[str, Any] = {
    "name": "failing_slurm",
    "objective": "failing_objective:loss",
    "parameters": {"x": {"type": "float", "low": 0.0, "high": 1.0}},
    "task_space": {"t": {"type": "float", "low": 0.0, "high": 10.0}},
    "training_tasks": {"listed": {"bad": {"t": 1.0}}},
    "evolve": {"seeds": [1], "max_evaluations": 8, "time_limit": 20, "pop_size": 4},
}


def _env(pythonpath: list[Path]) -> dict[str, str]:
    env = clean_env()
    for key in [k for k in env if k.startswith("SBATCH_")]:
        del env[key]
    env["SBATCH_PARTITION"] = PARTITION
    env["PYTHONPATH"] = os.pathsep.join(
        [*map(str, pythonpath), str(REPO), env.get("PYTHONPATH", "")]
    )
    env["PATH"] = os.pathsep.join([str(SNAKEMAKE.parent), env.get("PATH", "")])
    return env


def run_campaign(
    workdir: Path, config: str, *, pythonpath: list[Path] | None = None, extra: tuple[str, ...] = ()
) -> Run:
    """Run the campaign with the SLURM profile; fail the test if it exceeds the timeout."""
    command = [
        *prompt_snakemake(),
        "--profile",
        PROFILE,
        "--configfile",
        config,
        "--set-resources",
        *evolve_resources(workdir, RANKS),
        *CI_OPTIONS,
        *extra,
    ]
    return run_snakemake(command, workdir, _env(pythonpath or []))


def job_info(job_id: str, cwd: Path) -> dict[str, str]:
    """A job's ``Key=Value`` fields from ``scontrol show job`` (finished jobs stay visible
    for MinJobAge = 300 s, and no slurmdbd is needed)."""
    proc = subprocess.run(
        ["scontrol", "-o", "show", "job", job_id],
        cwd=cwd,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=CMD_TIMEOUT,
        check=False,
    )
    assert proc.returncode == 0, f"scontrol show job {job_id} failed: {proc.stderr}"
    return dict(re.findall(r"(\w+)=(\S*)", proc.stdout))


def _rule(info: dict[str, str]) -> str:
    """The rule of a job submitted by the executor plugin (its comment is ``rule_<name>...``)."""
    m = re.match(r"rule_([A-Za-z_]\w*?)(?:_wildcards_|$)", info.get("Comment", ""))
    return m.group(1) if m else ""


# ------------------------------------------------------------------------ tests
def test_tiny_campaign_on_slurm(tmp_path: Path) -> None:
    """Every evolve job runs as a Slurm job of 2 ranks in one MPI world; fit, transfer and the
    report follow."""
    workdir = copy_workflow(tmp_path / "wf")
    run = run_campaign(workdir, write_config(workdir, TINY, "tiny.yaml"))
    assert "PMI_Init" not in run.output, (
        "a non-MPI rule's python started MPI with the PMI_* variables of the jobstep's "
        "`srun -n1` but without its PMI_FD (Snakemake closes it): the rules' shell must unset "
        f"PMI_* before they run\n{run.tail()}"
    )
    assert run.returncode == 0, run.tail()

    # The non-local jobs went through Slurm and completed there, with the profile's resources.
    infos = {j: job_info(j, workdir) for j in run.slurm_jobs}
    by_rule: dict[str, list[dict[str, str]]] = {}
    for info in infos.values():
        by_rule.setdefault(_rule(info), []).append(info)
    counts = {rule: len(jobs) for rule, jobs in by_rule.items()}
    # (the tuning database's update runs where the runs did: on a compute node)
    assert counts == {"evolve": len(TRAINING), "fit_lcm": 1, "transfer": 2, "tuningdb_update": 1}, (
        f"{counts}\n{run.tail()}"
    )
    for job_id, info in infos.items():
        state = (info.get("JobState"), info.get("ExitCode"))
        assert state == ("COMPLETED", "0:0"), f"Slurm job {job_id}: {info}"
        assert info.get("Partition") == PARTITION, info
    for info in by_rule["evolve"]:
        assert info.get("NumTasks") == str(RANKS), info
        assert info.get("TimeLimit") == "00:10:00", info  # evolve_runtime() of time_limit 20
    for info in by_rule["fit_lcm"] + by_rule["transfer"]:
        assert info.get("TimeLimit") == "00:30:00", info  # the profile's default runtime
    for info in by_rule["transfer"]:  # room for a launcher's job step of evaluation_cores ranks
        assert (info.get("NumTasks"), info.get("NumNodes")) == ("2", "1"), info
    assert by_rule["fit_lcm"][0].get("NumTasks") == "1", by_rule["fit_lcm"]

    # srun formed one world of 2 per evolve job: two singleton worlds would log rank 0 only.
    results = workdir / "results" / TINY["name"]
    for task in TRAINING:
        run_dir = results / "runs" / task / "propulate-s1"
        history = read_history(run_dir)
        # every rank of the one session opened its log (a zero-cost objective's 16 evaluations
        # may all be claimed by rank 0 before rank 1 asks, so records alone cannot show it)
        logs = sorted(p.name for p in (run_dir / "evals").glob("*.jsonl"))
        assert len({name.rsplit("-r", 1)[0] for name in logs}) == 1, logs
        assert {int(name.rsplit("-r", 1)[1][:-6]) for name in logs} == set(range(RANKS)), logs
        assert set(history["rank"]) <= set(range(RANKS)), (task, history["rank"].tolist())
        summary = json.loads((run_dir / "summary.json").read_text())
        assert summary["ranks"] == RANKS, summary
        assert summary["evaluations"] == len(history) == 16, summary
        evolve_log = (results / "logs" / "evolve" / task / "propulate-s1.log").read_text()
        assert "summary written" in evolve_log, evolve_log[-2000:]

    assert (results / "model" / "lcm.json").is_file()
    for tla in ("tla1", "tla2"):
        assert (results / "transfer" / "t_new" / tla).is_dir()
    report = results / "report.html"
    assert report.is_file(), run.tail()
    page = report.read_text()
    assert len(page) > 10_000, page[:2000]
    assert page.count('class="plotly-plot"') >= len(TRAINING) + 2, "figures missing"
    for text in (*TRAINING, "t_new", "Multitask model", "Transfer to new tasks"):
        assert text in page, text


def test_failing_job_fails_snakemake(tmp_path: Path) -> None:
    """An evolve job whose objective exits with status 3 fails as a Slurm job and makes
    Snakemake exit non-zero."""
    modules = tmp_path / "modules"
    modules.mkdir()
    (modules / "failing_objective.py").write_text(FAILING_OBJECTIVE)
    workdir = copy_workflow(tmp_path / "wf")
    # No retry: the plugin's status-check interval grows with every check, so waiting for a
    # failed retry as well pushed the test past its timeout on a loaded CI machine.
    run = run_campaign(
        workdir,
        write_config(workdir, FAILING, "failing.yaml"),
        pythonpath=[modules],
        extra=("--retries", "0"),
    )
    assert run.returncode != 0, run.tail()

    assert run.slurm_jobs, f"no job was submitted to Slurm:\n{run.tail()}"
    infos = [job_info(j, workdir) for j in run.slurm_jobs]
    assert {_rule(i) for i in infos} == {"evolve"}, infos
    assert len(infos) == 1, f"expected one job (--retries 0): {infos}"
    assert all(i.get("JobState") == "FAILED" for i in infos), infos
    for job_id in run.slurm_jobs:
        assert f"SLURM-job '{job_id}' failed" in run.output, run.tail()
    assert "Error in rule evolve" in run.output, run.tail()
    results = workdir / "results" / FAILING["name"]
    evolve_log = results / "logs" / "evolve" / "bad" / "propulate-s1.log"
    # The failing rank aborts the whole MPI job with the objective's exit status, so its peer
    # cannot hold the job step open until the time limit.
    assert "MPI_Abort(MPI_COMM_WORLD, 3)" in evolve_log.read_text(), "not the objective's failure"
    run_dir = results / "runs" / "bad" / "propulate-s1"
    assert not (run_dir / "summary.json").exists(), "a failed job must not leave a summary"
    assert not (results / "model").exists(), "nothing may run after the failure"
