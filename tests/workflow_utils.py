"""Running the Snakemake pipeline from tests, as users run it: a fresh copy of the workflow in a
temporary directory, a campaign config written there, and ``snakemake`` in a subprocess.

:data:`TINY` is a campaign that runs end to end in well under a minute on 2 cores (the GPTune
demo function, small budgets); :func:`edited` changes a copy of it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = Path(sys.executable).parent / "snakemake"
#: What a copy of the workflow holds: the pipeline, its configs and profiles, and the benchmark
#: tables a shipped campaign's report shows (``config/demo.yaml``).
WORKFLOW_FILES = ("Snakefile", "workflow", "config", "profiles", "benchmarks/results")

#: A campaign that runs end to end in well under a minute on 2 cores.
TINY: dict[str, Any] = {
    "name": "tiny",
    "objective": "propulate.problems.demo:demo_loss",
    "parameters": {"x": {"type": "float", "low": 0.0, "high": 1.0}},
    "task_space": {"t": {"type": "float", "low": 0.0, "high": 10.0}},
    "training_tasks": {"latin_hypercube": {"n": 2, "seed": 0}},
    "new_tasks": {"t_new": {"t": 4.5}},
    "evolve": {"seeds": [1], "max_evaluations": 16, "time_limit": 20, "pop_size": 4},
    "lcm": {"latent": 1, "restarts": 1, "max_points": 16},
    "transfer": {"tla2_budget": 2},
}


def _env() -> dict[str, str]:
    """This environment for a local Snakemake run: the repository on ``PYTHONPATH``, the venv's
    tools first on ``PATH``, and no variables of an enclosing Slurm job or MPI launch."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    env["PATH"] = os.pathsep.join([str(SNAKEMAKE.parent), env.get("PATH", "")])
    for key in [k for k in env if k.startswith(("SLURM_", "PMI_", "HYDRA_", "SBATCH_"))]:
        del env[key]
    return env


def snakemake(
    workdir: Path, *args: str, timeout: float = 240, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``snakemake ARGS`` in ``workdir``; stdout and stderr together in ``.stdout``."""
    return subprocess.run(
        [str(SNAKEMAKE), *args],
        cwd=workdir,
        env=env or _env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=timeout,
        check=False,
    )


def job_counts(output: str) -> dict[str, int]:
    """The ``Job stats`` table of a snakemake (dry) run: rule name to job count."""
    counts: dict[str, int] = {}
    table = output.split("Job stats:", 1)[-1] if "Job stats:" in output else ""
    for line in table.splitlines():
        m = re.fullmatch(r"\s*([A-Za-z_]\w*)\s+(\d+)\s*", line)
        if m and m.group(1) != "total":
            counts[m.group(1)] = int(m.group(2))
        elif m:
            break
    return counts


def _jobs(output: str, rule: str) -> list[str]:
    """The job blocks of ``rule`` in a dry run's output."""
    return [block for block in output.split("\nrule ")[1:] if block.startswith(f"{rule}:")]


def _output(block: str) -> str:
    """The output line of a job block."""
    return re.search(r"^\s*output: (.*)$", block, re.M).group(1).strip()  # type: ignore[union-attr]


def copy_workflow(dest: Path) -> Path:
    """A fresh copy of the workflow (no results, no bytecode caches) in ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in WORKFLOW_FILES:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, dest / name)
    return dest


def write_config(workdir: Path, config: dict[str, Any], name: str = "tiny.yaml") -> str:
    """Write ``config`` as YAML into ``workdir`` and return its file name."""
    path = workdir / name
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return name


def edited(update: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """A deep copy of :data:`TINY` changed by ``update``."""
    config = yaml.safe_load(yaml.safe_dump(TINY))
    update(config)
    return config
