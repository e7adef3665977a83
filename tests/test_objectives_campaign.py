"""A campaign with two objectives and weights, end to end: the evolve runs search the Pareto
set, the MLA and transfer stages model and minimise the weighted sum, records keep both."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
import yaml

from propulate.compat.history import iter_records
from tests.workflow_utils import copy_workflow, edited, snakemake, write_config

WEIGHTS = {"loss": 1.0, "cost": 0.2}


def _weighted(config: dict) -> None:
    config["name"] = "weighted"
    config["objective"] = "propulate.problems.pairs:demo_pair"
    config["evolve"].update(objectives={"loss": "min", "cost": "min"}, weights=WEIGHTS)
    config["mla"] = {"budget": 5, "initial": 4}


@pytest.mark.slow
def test_mla_and_transfer_minimise_the_weighted_sum(tmp_path: Path) -> None:
    work = copy_workflow(tmp_path / "wf")
    name = write_config(work, edited(_weighted))
    proc = snakemake(work, "--cores", "2", "--configfile", name)
    assert proc.returncode == 0, proc.stdout[-3000:]
    results = work / "results" / "weighted"
    assert yaml.safe_load((results / "campaign.yaml").read_text())["objectives"] == (
        "loss:min:1,cost:min:0.2"
    )
    stages = {
        "mla": sorted((results / "mla").glob("train*")),
        "tla1": [results / "transfer" / "t_new" / "tla1"],
        "tla2": [results / "transfer" / "t_new" / "tla2"],
        "propulate": sorted((results / "runs").glob("*/*")),
    }
    for method, dirs in stages.items():
        assert dirs, method
        for directory in dirs:
            records = list(iter_records(directory))
            assert records and all(r["status"] == "ok" for r in records), directory
            for r in records:
                sum_ = sum(WEIGHTS[k] * v for k, v in r["objectives"].items())
                assert set(r["objectives"]) == set(WEIGHTS) and r["loss"] == pytest.approx(sum_)
    with (results / "summary.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert {r["method"] for r in rows} == {"propulate", "mla", "tla1", "tla2"}
    assert "Pareto" in (results / "report.html").read_text()
