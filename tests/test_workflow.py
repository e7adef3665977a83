"""The Snakemake pipeline, run as users run it: ``snakemake`` in a subprocess, in a temporary
copy of the workflow, on a tiny campaign (the GPTune demo function, small budgets)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from tests.workflow_utils import (
    REPO,
    SNAKEMAKE,
    TINY,
    _env,
    _jobs,
    _output,
    copy_workflow,
    edited,
    job_counts,
    snakemake,
    write_config,
)

pytestmark = pytest.mark.skipif(not SNAKEMAKE.exists(), reason="snakemake not installed")


@pytest.fixture(scope="module")
def campaign(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny campaign, run to completion once for this module."""
    workdir = copy_workflow(tmp_path_factory.mktemp("campaign"))
    cfg = write_config(workdir, TINY)
    proc = snakemake(workdir, "--cores", "2", "--configfile", cfg, timeout=300)
    assert proc.returncode == 0, proc.stdout[-5000:]
    return workdir


# ------------------------------------------------------------------------ end to end
@pytest.mark.slow
def test_end_to_end(campaign: Path) -> None:
    results = campaign / "results" / "tiny"
    for task in ("train00", "train01", "t_new"):
        assert (results / "tasks" / f"{task}.json").is_file()
    for task in ("train00", "train01"):
        run = results / "runs" / task / "propulate-s1"
        assert (run / "summary.json").is_file()
        assert (results / "logs" / "evolve" / task / "propulate-s1.log").is_file()
        assert (results / "benchmarks" / "evolve" / task / "propulate-s1.tsv").is_file()
    assert (results / "model" / "lcm.json").is_file()

    summary = pd.read_csv(results / "summary.csv")
    assert set(zip(summary["task"], summary["method"], strict=True)) == {
        ("train00", "propulate"),
        ("train01", "propulate"),
        ("t_new", "tla1"),
        ("t_new", "tla2"),
    }
    assert summary["best_loss"].notna().all()
    assert (summary["wall_time"] > 0).all()
    evolve = summary[summary["method"] == "propulate"]
    assert (evolve["evaluations"] == 16).all()
    assert int(summary.loc[summary["method"] == "tla2", "evaluations"].iloc[0]) == 2

    page = (results / "report.html").read_text()
    # 2 convergence (and parallel coordinates), heatmap, transfer: interactive, plotly.js once
    assert page.count('class="plotly-plot"') >= 4 and page.count("* plotly.js v") == 1
    markup = re.sub(r"<script\b[^>]*>.*?</script>", "", page, flags=re.S)  # links in plotly.js
    assert not re.search(r"(src|href)=\"(?!data:)", markup), "report must not link other files"
    for text in ("train00", "t_new", "Multitask model", "Transfer to new tasks"):
        assert text in page
    figures = {p.name for p in (results / "figures").iterdir()}
    assert {"convergence_train00.png", "task_correlation.png", "transfer_t_new.png"} <= figures


@pytest.mark.slow
def test_snakemake_report(campaign: Path, tmp_path: Path) -> None:
    out = campaign / "snakemake-report.zip"
    proc = snakemake(campaign, "--configfile", "tiny.yaml", "--report", str(out), timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:]
    with zipfile.ZipFile(out) as archive:
        names = archive.namelist()
        pages = [n for n in names if n.endswith("/report.html")]  # Snakemake's, the campaign's
        page = archive.read(min(pages, key=lambda n: n.count("/"))).decode()
    for name in ("summary.csv", "lcm.json", "report.html", "convergence_train00.png"):
        assert any(n.endswith("/" + name) for n in names), name
    # each figure has its own caption (workflow/report/figure.rst)
    assert "<p>Task <strong>train00</strong>: the best loss so far" in page
    assert "<p>New task <strong>t_new</strong>: left, the extended LCM" in page
    assert "two tasks rank configurations alike" in page


@pytest.mark.slow
def test_dashboard_reads_the_finished_campaign(campaign: Path) -> None:
    from propulate.cli.dashboard_state import Live

    state = Live(campaign / "results", campaign / ".snakemake").state()
    runs = {r["path"]: r for r in state["runs"]}
    run = runs["tiny/runs/train00/propulate-s1"]
    assert run["evaluations"] == run["budget"] == 16 and run["state"].startswith("stopped")
    assert run["best_over_time"] and run["best"] == run["best_over_time"][-1][1]
    (jobs,) = [j for j in state["snakemake"] if j["campaign"] == "tiny"]
    assert jobs["planned"] > 5 and jobs["done"] == jobs["planned"]
    assert not jobs["running"] and not jobs["failed"] and not jobs["active"]
    assert {r["rule"] for r in jobs["rules"]} >= {"evolve", "fit_lcm", "report"}


# ------------------------------------------------------------------------ re-tuning
@pytest.mark.slow
def test_nothing_to_do_after_a_run(campaign: Path) -> None:
    proc = snakemake(campaign, "-n", "--configfile", "tiny.yaml", timeout=60)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert job_counts(proc.stdout) == {}, proc.stdout[-3000:]


@pytest.mark.slow
def test_new_task_runs_only_its_transfer(campaign: Path) -> None:
    def add_task(config: dict[str, Any]) -> None:
        config["new_tasks"]["t_other"] = {"t": 7.0}

    cfg = write_config(campaign, edited(add_task), "added.yaml")
    proc = snakemake(campaign, "-n", "--configfile", cfg, timeout=60)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert job_counts(proc.stdout) == {
        "listed_task": 1,
        "transfer": 2,
        "aggregate": 1,
        "tuningdb_update": 1,
        "report": 1,
        "all": 1,
    }
    outputs = [_output(block) for block in _jobs(proc.stdout, "transfer")]
    assert sorted(outputs) == [
        "results/tiny/transfer/t_other/tla1/job.done",
        "results/tiny/transfer/t_other/tla2/job.done",
    ]


@pytest.mark.slow
def test_optimizer_settings_rerun_exactly_the_affected_jobs(campaign: Path) -> None:
    def budget(config: dict[str, Any]) -> None:
        config["evolve"]["max_evaluations"] = 20

    proc = snakemake(
        campaign, "-n", "--configfile", write_config(campaign, edited(budget), "e.yaml")
    )
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert job_counts(proc.stdout) == {
        "evolve": 2,
        "fit_lcm": 1,
        "transfer": 2,
        "aggregate": 1,
        "tuningdb_update": 1,
        "report": 1,
        "all": 1,
    }

    def tla2(config: dict[str, Any]) -> None:
        config["transfer"]["tla2_budget"] = 3

    proc = snakemake(campaign, "-n", "--configfile", write_config(campaign, edited(tla2), "t.yaml"))
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert job_counts(proc.stdout) == {
        "transfer": 1,
        "aggregate": 1,
        "tuningdb_update": 1,
        "report": 1,
        "all": 1,
    }
    assert [_output(b) for b in _jobs(proc.stdout, "transfer")] == [
        "results/tiny/transfer/t_new/tla2/job.done"
    ]

    def lcm(config: dict[str, Any]) -> None:
        config["lcm"]["restarts"] = 2

    proc = snakemake(campaign, "-n", "--configfile", write_config(campaign, edited(lcm), "l.yaml"))
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert job_counts(proc.stdout) == {
        "fit_lcm": 1,
        "transfer": 2,
        "aggregate": 1,
        "tuningdb_update": 1,
        "report": 1,
        "all": 1,
    }


# ------------------------------------------------------------------------ config errors
# Every config error is a unit test of propulate.campaign (tests/test_campaign.py); this smoke
# test checks that the workflow stops on one before any job, with the message naming the key.
@pytest.mark.slow
def test_config_error_stops_the_workflow_before_any_job(tmp_path: Path) -> None:
    def inverted(config: dict[str, Any]) -> None:
        config["parameters"]["x"] = {"type": "float", "low": 1.0, "high": 0.0}

    workdir = copy_workflow(tmp_path / "wf")
    cfg = write_config(workdir, edited(inverted))
    proc = snakemake(workdir, "--cores", "2", "--configfile", cfg, timeout=120)
    assert proc.returncode == 2, proc.stdout[-3000:]
    assert "error: config key 'parameters': parameter 'x'" in proc.stdout, proc.stdout[-3000:]
    assert "Traceback" not in proc.stdout and 'File "' not in proc.stdout
    assert not (workdir / "results").exists(), "no job may start on a broken config"


def test_a_misspelt_key_is_one_line_before_any_job(tmp_path: Path) -> None:
    def misspelt(config: dict[str, Any]) -> None:
        config["evolve"]["max_evaluation"] = config["evolve"].pop("max_evaluations")

    workdir = copy_workflow(tmp_path / "wf")
    cfg = write_config(workdir, edited(misspelt))
    proc = snakemake(workdir, "--cores", "2", "--configfile", cfg, timeout=120)
    assert proc.returncode == 2, proc.stdout[-3000:]
    lines = [line for line in proc.stdout.splitlines() if not line.startswith("Using workflow")]
    assert lines == [
        "error: config key 'evolve.max_evaluation': unknown key (did you mean 'max_evaluations'?)"
    ]
    assert not (workdir / "results").exists(), "no job may start on a broken config"


# ------------------------------------------------------------------------ profiles
def _evolve_jobs(output: str) -> list[str]:
    return _jobs(output, "evolve")


@pytest.mark.slow
def test_local_ranks_count_against_cores(tmp_path: Path) -> None:
    workdir = copy_workflow(tmp_path / "wf")
    cfg = write_config(workdir, TINY)
    for cores, ranks in (("2", 2), ("1", 1)):
        proc = snakemake(workdir, "-n", "--cores", cores, "--configfile", cfg, timeout=60)
        assert proc.returncode == 0, proc.stdout[-3000:]
        jobs = _evolve_jobs(proc.stdout)
        assert len(jobs) == 2
        for job in jobs:
            assert f"mpiexec -n {ranks} python -m propulate evolve" in job
            assert f"tasks={ranks}" in job


@pytest.mark.slow
def test_measuring_jobs_take_the_cores_of_an_evaluation(tmp_path: Path) -> None:
    workdir = copy_workflow(tmp_path / "wf")
    for cores in (1, 2):
        cfg = write_config(workdir, edited(lambda c, n=cores: c.update(evaluation_cores=n)))
        proc = snakemake(workdir, "-n", "--cores", "2", "--configfile", cfg, timeout=60)
        assert proc.returncode == 0, proc.stdout[-3000:]
        jobs = _jobs(proc.stdout, "transfer") + _jobs(proc.stdout, "baseline")
        assert jobs and all(("threads: 2" in job) == (cores == 2) for job in jobs), jobs


@pytest.mark.slow
def test_breeding_settings_reach_propulate_runs_only(tmp_path: Path) -> None:
    def tuned(config: dict[str, Any]) -> None:
        config["evolve"].update(
            methods=["propulate", "random"], sigma_factor=0.02, mutation_prob=0.5
        )

    workdir = copy_workflow(tmp_path / "wf")
    proc = snakemake(
        workdir, "-n", "--configfile", write_config(workdir, edited(tuned)), timeout=60
    )
    assert proc.returncode == 0, proc.stdout[-3000:]
    jobs = {_output(job): job for job in _evolve_jobs(proc.stdout)}
    assert len(jobs) == 4, list(jobs)
    for out, job in jobs.items():
        evolve = job[job.index("python -m propulate evolve") :]
        flags = "--sigma-factor 0.02" in evolve, "--mutation-prob 0.5" in evolve
        assert flags == ((True, True) if "/propulate-" in out else (False, False)), job
        # The run's settings, against which a later attempt decides to resume or start afresh.
        settings = re.search(r"--settings '([^']*)'", job).group(1)  # type: ignore[union-attr]
        assert settings.endswith(evolve.split("--seed 1 ", 1)[1].split(";")[0]), job


@pytest.mark.slow
def test_every_registered_benchmark_function_runs_as_a_suite(tmp_path: Path) -> None:
    """Suite functions whose registry name is not their module attribute (bukin: bukin_n6)."""
    suite = {"name": "s", "suite": ["bukin", "eggcrate"], "evolve": {"max_evaluations": 5}}
    workdir = copy_workflow(tmp_path / "wf")
    proc = snakemake(workdir, "-n", "--configfile", write_config(workdir, suite), timeout=60)
    assert proc.returncode == 0, proc.stdout[-3000:]
    jobs = _evolve_jobs(proc.stdout)
    assert len(jobs) == 2
    assert any("--objective propulate.problems.benchmark:bukin_n6 " in job for job in jobs)


def _check_slurm_dry_run(proc: subprocess.CompletedProcess[str]) -> None:
    assert proc.returncode == 0, proc.stdout[-3000:]
    jobs = _evolve_jobs(proc.stdout)
    assert len(jobs) == 2, proc.stdout[-3000:]
    for job in jobs:
        assert "srun --mpi=pmi2 -n 4 python -m propulate evolve" in job
        assert re.search(r"resources:.*\btasks=4\b", job)
        assert re.search(r"resources:.*\bcpus_per_task=1\b", job)
        assert "mpiexec" not in job


@pytest.mark.slow
def test_slurm_profile_dry_run(tmp_path: Path) -> None:
    workdir = copy_workflow(tmp_path / "wf")
    cfg = write_config(workdir, TINY)
    proc = snakemake(workdir, "-n", "--profile", "profiles/slurm", "--configfile", cfg)
    _check_slurm_dry_run(proc)


@pytest.mark.slow
def test_promised_profile_name_after_install(tmp_path: Path) -> None:
    """`snakemake --profile slurm` once the profile is linked into the user's config dir
    (what `make slurm-profile` does), with the workflow profile applied on top."""
    workdir = copy_workflow(tmp_path / "wf")
    cfg = write_config(workdir, TINY)
    config_home = tmp_path / "xdg"
    (config_home / "snakemake").mkdir(parents=True)
    (config_home / "snakemake" / "slurm").symlink_to(workdir / "profiles" / "slurm")
    env = _env()
    env["XDG_CONFIG_HOME"] = str(config_home)
    proc = snakemake(workdir, "-n", "--profile", "slurm", "--configfile", cfg, env=env)
    assert "workflow specific profile profiles/default" in proc.stdout
    _check_slurm_dry_run(proc)


def test_default_profile_does_not_override_slurm_profile() -> None:
    """profiles/default wins over any --profile key by key: it may only hold keys that the
    SLURM profile leaves unset or sets to the same value, and nothing about resources."""
    default = yaml.safe_load((REPO / "profiles/default/config.yaml").read_text())
    slurm = yaml.safe_load((REPO / "profiles/slurm/config.yaml").read_text())
    forbidden = {
        "executor",
        "jobs",
        "cores",
        "set-resources",
        "set-threads",
        "default-resources",
        "resources",
    }
    assert not forbidden & set(default)
    for key, value in default.items():
        assert slurm.get(key, value) == value, key


# ------------------------------------------------------------------------ style
SNAKEFMT = Path(sys.executable).parent / "snakefmt"


@pytest.mark.skipif(not SNAKEFMT.exists(), reason="snakefmt not installed")
def test_snakemake_files_are_formatted() -> None:
    proc = subprocess.run(
        [str(SNAKEFMT), "--check", "Snakefile", "workflow/rules"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize(
    "config",
    [
        "config/config.yaml",
        "config/demo.yaml",
        "config/benchmark.yaml",
        "examples/command/campaign.yaml",
        "examples/command/two_objectives.yaml",
    ],
)
def test_snakemake_lint_is_clean(tmp_path: Path, config: str) -> None:
    """Every shipped campaign passes the schema and Snakemake's lints."""
    workdir = copy_workflow(tmp_path / "wf")
    if config.startswith("examples/"):  # the example's program is checked: build it first
        example = workdir / Path(config).parent
        shutil.copytree(REPO / Path(config).parent, example)
        subprocess.run(["make", "-C", str(example), "-s"], check=True, timeout=120)
    proc = snakemake(workdir, "--lint", "--configfile", config, timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "Lints for" not in proc.stdout, proc.stdout[-3000:]
