"""The wheel and the sdist, installed as a user installs them: into a fresh virtual environment
outside this checkout, with the pinned constraints, then used from a directory of their own.

``python -m build`` builds the sdist and, from it, the wheel (so a file the sdist lacks is
missing from the wheel too). The environment's commands run with the checkout off ``PATH`` and
``PYTHONPATH``, so only what the wheel installed can be found: a package-data file left out of
``pyproject.toml`` fails here (``tests/test_init.py`` checks the list against git, quickly).
The Slurm test runs an ``init``-ed campaign with the copied ``profiles/slurm`` on the CI cluster.
"""

from __future__ import annotations

import glob
import json
import os
import sqlite3
import subprocess
import sys
import tarfile
import time
import tomllib
import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml

import propulate
from propulate.pipeline import ROOT
from propulate.problems.benchmark import param_names
from tests.slurm_utils import clean_env, requires_slurm

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
CONSTRAINTS = REPO / "requirements" / "constraints.txt"
VERSION = propulate.__version__
#: Seconds a pip install or a campaign may take before the test fails.
TIMEOUT = 600.0


def _shipped() -> set[str]:
    """The packaged workflow's files, as the package-data patterns select them."""
    data = tomllib.loads((REPO / "pyproject.toml").read_text())
    patterns = data["tool"]["setuptools"]["package-data"]["propulate.pipeline"]
    return {f for p in patterns for f in glob.glob(p, root_dir=ROOT)}


#: Prints where the installed package's workflow is.
_PIPELINE_ROOT = "from propulate.pipeline import ROOT; print(ROOT)"


def _outside_env(venv: Path) -> dict[str, str]:
    """The environment of a user of ``venv``: nothing of this checkout on PATH or PYTHONPATH."""
    env = clean_env()
    env.pop("PYTHONPATH", None)
    env.pop("VIRTUAL_ENV", None)
    path = [p for p in env.get("PATH", "").split(os.pathsep) if p and str(REPO) not in p]
    env["PATH"] = os.pathsep.join([str(venv / "bin"), *path])
    return env


def _run(
    args: list[str | Path], cwd: Path, env: dict[str, str], timeout: float = TIMEOUT
) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert proc.returncode == 0, f"{' '.join(map(str, args))} failed:\n{proc.stdout[-6000:]}"
    return proc


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The sdist and the wheel of this checkout."""
    out = tmp_path_factory.mktemp("dist")
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    _run([sys.executable, "-m", "build", "--outdir", out, REPO], cwd=out, env=env)
    wheels, sdists = list(out.glob("*.whl")), list(out.glob("*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, list(out.iterdir())
    size = wheels[0].stat().st_size
    print(
        f"\nwheel {wheels[0].name}: {size / 1024:.0f} KiB; sdist {sdists[0].stat().st_size / 1024:.0f} KiB"
    )
    return {"wheel": wheels[0], "sdist": sdists[0]}


@pytest.fixture(scope="module")
def venv(dist: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with the wheel and its mpi and workflow extras installed."""
    root = tmp_path_factory.mktemp("user")
    venv = root / "venv"
    env = _outside_env(venv)
    started = time.perf_counter()
    _run([sys.executable, "-m", "venv", venv], cwd=root, env=env)
    wheel = f"{dist['wheel']}[mpi,workflow]"
    # --no-compile: a third less CPU; modules are compiled when first imported
    pip = [venv / "bin/python", "-m", "pip", "install", "-q", "--no-compile"]
    _run([*pip, "-c", CONSTRAINTS, wheel], root, env)
    print(f"\nfresh venv with the wheel installed in {time.perf_counter() - started:.0f} s")
    return venv


def test_wheel_and_sdist_hold_the_workflow(dist: dict[str, Path]) -> None:
    shipped = {f"propulate/pipeline/{f}" for f in _shipped()}
    assert "propulate/pipeline/workflow/rules/common.smk" in shipped
    with zipfile.ZipFile(dist["wheel"]) as whl:
        names = set(whl.namelist())
        assert shipped <= names, sorted(shipped - names)
        assert f"propulate-{VERSION}.dist-info/licenses/LICENSE" in names
        meta = whl.read(f"propulate-{VERSION}.dist-info/METADATA").decode()
        assert "License-Expression: BSD-3-Clause" in meta
        # file contents are the top-level files', not links
        text = whl.read("propulate/pipeline/Snakefile").decode()
        assert text == (REPO / "Snakefile").read_text()
    prefix = f"propulate-{VERSION}/"
    with tarfile.open(dist["sdist"]) as sdist:
        members = {m.name.removeprefix(prefix) for m in sdist.getmembers() if m.isfile()}
        assert not [m for m in sdist.getmembers() if m.issym()], "the sdist holds links"
    assert shipped <= members, sorted(shipped - members)


def test_installed_commands(venv: Path, tmp_path: Path) -> None:
    """--version, --help and a 2-rank evolve run on a shipped benchmark function."""
    env = _outside_env(venv)
    where = _run(
        [venv / "bin/python", "-c", "import propulate; print(propulate.__file__)"], tmp_path, env
    )
    assert where.stdout.strip().startswith(str(venv)), where.stdout
    assert _run(["propulate", "--version"], tmp_path, env).stdout.strip() == f"propulate {VERSION}"
    helped = _run(["propulate", "--help"], tmp_path, env).stdout
    for command in ("evolve", "status", "suggest", "init"):
        assert command in helped, helped
    names = param_names(2)
    space = {"parameters": {n: [-5.12, 5.12] for n in names}}
    (tmp_path / "space.yaml").write_text(yaml.safe_dump(space))
    args = ["mpiexec", "-n", "2", "propulate", "evolve", "--space", "space.yaml", "--out", "run"]
    args += ["--objective", "propulate.problems.benchmark:sphere", "--max-evaluations", "40"]
    _run(args, tmp_path, env, timeout=120)
    summary = json.loads((tmp_path / "run/summary.json").read_text())
    assert (summary["evaluations"], summary["ranks"]) == (40, 2), summary
    assert json.loads((tmp_path / "run/run.json").read_text())["version"] == VERSION


def test_inited_campaign_runs_with_the_installed_workflow(venv: Path, tmp_path: Path) -> None:
    """``propulate init`` then ``snakemake --cores 2`` there: results, status and suggest."""
    env = _outside_env(venv)
    _run(["propulate", "init", "camp"], tmp_path, env)
    camp = tmp_path / "camp"
    _run(["snakemake", "--cores", "2"], camp, env)
    results = camp / "results" / "camp"
    page = (results / "report.html").read_text()
    assert "Transfer to new tasks" in page and page.count('class="plotly-plot"') >= 3
    runs = sorted((results / "runs").glob("*/propulate-s1"))
    assert [r.parent.name for r in runs] == ["train00", "train01", "train02"]
    for run in runs:
        assert json.loads((run / "run.json").read_text())["version"] == VERSION
    with sqlite3.connect(results / "tuning.sqlite") as db:
        versions = {v for (v,) in db.execute("SELECT DISTINCT package_version FROM results")}
    assert versions == {VERSION}
    status = _run(["propulate", "status", "results"], camp, env).stdout
    assert status.count("stopped (budget)") == 5, status  # 3 evolve runs, TLA1 and TLA2
    suggested = json.loads(
        _run(
            ["propulate", "suggest", "--campaign", results, "--task", "size=300"], camp, env
        ).stdout
    )
    assert suggested["source"] == "tla1" and set(suggested["params"]) == {"block", "alpha"}
    # a scheduled run with the package's script, as config/README.md shows for cron
    script = Path("workflow", "scripts", "scheduled_run.sh")
    where = _run([venv / "bin/python", "-c", _PIPELINE_ROOT], camp, env).stdout.strip()
    env = {**env, "WORKDIR": str(camp), "PYTHON": str(venv / "bin/python")}
    _run([Path(where) / script, camp / "config" / "config.yaml"], tmp_path, env)
    assert (results / "tuningdb" / "revalidate.json").is_file()
    assert "camp ended with status 0" in (results / "logs" / "scheduled.log").read_text()


def test_an_inited_campaigns_config_typo_is_one_line(venv: Path, tmp_path: Path) -> None:
    """The installed workflow checks the config against its own schema (a module's
    workflow.basedir is the campaign's directory): one line with "did you mean", status 2."""
    env = _outside_env(venv)
    _run(["propulate", "init", "camp"], tmp_path, env)
    config = tmp_path / "camp" / "config" / "config.yaml"
    config.write_text(config.read_text().replace("  seeds: [1]", "  seds: [1]", 1))
    proc = subprocess.run(
        ["snakemake", "-n", "--cores", "1"],
        cwd=tmp_path / "camp",
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert proc.returncode == 2, proc.stdout[-3000:] + proc.stderr[-3000:]
    errors = [line for line in proc.stderr.splitlines() if not line.startswith("Using ")]
    assert errors == ["error: config key 'evolve.seds': unknown key (did you mean 'seeds'?)"]


def test_sdist_installs_the_same_files(dist: dict[str, Path], venv: Path, tmp_path: Path) -> None:
    """pip builds and installs the sdist (no dependencies) with the same workflow files."""
    env = _outside_env(venv)
    target = tmp_path / "site"
    pip = [venv / "bin/python", "-m", "pip", "install", "-q", "--no-deps", "--target", target]
    _run([*pip, dist["sdist"]], tmp_path, env)
    pipeline = target / "propulate" / "pipeline"
    installed = {
        str(p.relative_to(pipeline))
        for p in pipeline.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    modules = {p.name for p in ROOT.glob("*.py")}  # propulate.pipeline's own modules
    assert installed == _shipped() | modules


#: The starter made tiny for Slurm: 2 training tasks of 16 evaluations, no new tasks.
def _tiny(config: dict[str, Any]) -> dict[str, Any]:
    config = dict(config)
    config.pop("new_tasks")
    config["training_tasks"] = {"latin_hypercube": {"n": 2, "seed": 0}}
    config["evolve"] = {"seeds": [1], "max_evaluations": 16, "time_limit": 20, "pop_size": 4}
    config["lcm"] = {"latent": 1, "restarts": 1, "max_points": 16}
    return config


@pytest.mark.slurm
@requires_slurm
def test_inited_campaign_on_slurm(venv: Path, tmp_path: Path) -> None:
    """The init-ed campaign with its copy of profiles/slurm: every evolve job a 2-rank Slurm job."""
    from tests.slurm_utils import (
        CI_OPTIONS,
        PARTITION,
        RANKS,
        evolve_resources,
        prompt_snakemake,
        run_snakemake,
    )

    env = _outside_env(venv)
    _run(["propulate", "init", "camp", "--name", "tiny_init"], tmp_path, env)
    camp = tmp_path / "camp"
    config = camp / "config" / "config.yaml"
    config.write_text(yaml.safe_dump(_tiny(yaml.safe_load(config.read_text())), sort_keys=False))
    env["SBATCH_PARTITION"] = PARTITION
    # the installed Snakemake, with prompt status checks (tests/snakemake_prompt_checks.py)
    command = [*prompt_snakemake(venv / "bin" / "python"), "--profile", "profiles/slurm"]
    command += ["--set-resources", *evolve_resources(camp, RANKS), *CI_OPTIONS]
    run = run_snakemake(command, camp, env)
    assert run.returncode == 0, run.tail()
    assert len(run.slurm_jobs) == 4, run.tail()  # 2 evolve, fit_lcm, tuningdb_update
    results = camp / "results" / "tiny_init"
    assert (results / "report.html").is_file(), run.tail()
    for task in ("train00", "train01"):
        summary = json.loads((results / "runs" / task / "propulate-s1/summary.json").read_text())
        assert (summary["ranks"], summary["evaluations"]) == (RANKS, 16), summary
