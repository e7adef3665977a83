"""A tiny PDGEQRF campaign end to end: the workflow with the C driver as command objective.

Training shapes by Latin hypercube, evolve runs (one tuner rank, each evaluation an MPI launch),
LCM, TLA1/TLA2 to two new shapes, the default on every shape, random search on the new shapes,
a landscape grid, the paired re-measurement of the default against the tuned configurations,
the report. Skipped without ScaLAPACK (not on CI, which installs it).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import yaml

from propulate.compat.history import iter_records
from propulate.problems import pdgeqrf
from tests.pdgeqrf_utils import build_driver, launcher, requires_scalapack
from tests.workflow_utils import REPO, copy_workflow, snakemake

pytestmark = requires_scalapack

DEFAULT = {"mb": 8, "nb": 8, "nproc": 2, "p": 1}


def tiny_config(driver: Path) -> dict:
    spec = yaml.safe_load((REPO / "config" / "pdgeqrf.yaml").read_text())
    spec = copy.deepcopy(spec)
    spec["name"] = "pdgeqrf_tiny"
    del spec["setup"]  # the test builds the driver itself
    spec["objective"]["command"] = (
        f"{driver} --m {{m}} --n {{n}} --mb {{mb}} --nb {{nb}} --p {{p}} --repeats 1 --warmup 0"
    )
    spec["objective"]["launcher"] = f"{launcher()} -n {{nproc}}"
    spec["objective"]["timeout"] = 60
    spec["parameters"]["mb"] = spec["parameters"]["nb"] = {"type": "int", "low": 4, "high": 32}
    spec["task_space"] = {
        "m": {"type": "int", "low": 64, "high": 160},
        "n": {"type": "int", "low": 64, "high": 160},
    }
    spec["training_tasks"] = {"latin_hypercube": {"n": 2, "seed": 1}}
    spec["new_tasks"] = {"tall": {"m": 150, "n": 70}, "square": {"m": 100, "n": 100}}
    spec["evolve"].update(max_evaluations=6, time_limit=60, pop_size=4)
    spec["lcm"].update(restarts=1, max_points=12)
    spec["transfer"]["tla2_budget"] = 2
    spec["default"] = DEFAULT
    spec["baselines"] = {
        "random_search": True,
        "paired_rounds": 2,
        "landscape": {"task": "square", "grid": {"mb": [4, 16], "nb": [4, 8, 64]}},
    }
    return spec


def test_tiny_pdgeqrf_campaign_end_to_end(tmp_path: Path) -> None:
    workdir = copy_workflow(tmp_path / "wf")
    driver = build_driver(tmp_path / "build")
    (workdir / "tiny.yaml").write_text(yaml.safe_dump(tiny_config(driver), sort_keys=False))
    proc = snakemake(workdir, "--cores", "2", "--configfile", "tiny.yaml", timeout=900)
    assert proc.returncode == 0, proc.stdout[-5000:]
    root = workdir / "results" / "pdgeqrf_tiny"
    assert (root / "report.html").is_file()

    # every evaluation anywhere in the campaign ran a feasible configuration, and succeeded
    tasks = {p.stem: json.loads(p.read_text())["task"] for p in (root / "tasks").glob("*.json")}
    records = list(iter_records(sorted(p.parent for p in root.rglob("evals/*"))))
    assert records and all(r["status"] == "ok" for r in records), [r.get("error") for r in records]
    assert all(pdgeqrf.feasible(r["params"], tasks[r["task"]]) for r in records)
    methods = {r["method"] for r in records}
    assert methods == {"propulate", "tla1", "tla2", "default", "random", "grid"}
    # the landscape's nb=64 column is infeasible on 100 columns (64 * 2 > 100): never launched
    grid = [r["params"] for r in records if r["method"] == "grid"]
    assert sorted((p["mb"], p["nb"]) for p in grid) == [(4, 4), (4, 8), (16, 4), (16, 8)]

    # the report compares the tuned results with the default on every shape
    speedups = (root / "figures" / "speedup.txt").read_text().splitlines()
    rows = {tuple(line.split()[:2]) for line in speedups[1:]}
    assert rows == {
        ("train00", "propulate"),
        ("train01", "propulate"),
        ("tall", "tla1"),
        ("tall", "tla2"),
        ("tall", "random"),
        ("square", "tla1"),
        ("square", "tla2"),
        ("square", "random"),
    }
    assert (root / "figures" / "landscape_square.png").is_file()
    page = (root / "report.html").read_text()
    assert "Tuned against the default" in page

    # ... and re-measured in one job per shape: 2 rounds of the default and every run's best
    assert "paired_speedup" in speedups[0] and "paired_speedup" in page
    assert all(line.split()[-1] == "2" for line in speedups[1:])  # pairs
    for task in tasks:
        paired = json.loads((root / "paired" / f"{task}.json").read_text())
        assert paired["task"] == task and paired["configs"][0] == DEFAULT
        assert len(paired["measurements"]) == 2 * len(paired["configs"])
        assert all(m["loss"] > 0 for m in paired["measurements"])


def test_snakemake_lint_is_clean_for_a_command_campaign(tmp_path: Path) -> None:
    workdir = copy_workflow(tmp_path / "wf")
    driver = build_driver(tmp_path / "build")
    (workdir / "tiny.yaml").write_text(yaml.safe_dump(tiny_config(driver), sort_keys=False))
    proc = snakemake(workdir, "--lint", "--configfile", "tiny.yaml", timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "Lints for" not in proc.stdout, proc.stdout[-3000:]
