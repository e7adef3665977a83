"""A benchmark-suite campaign (config key ``suite``) through the pipeline, end to end."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from tests.workflow_utils import SNAKEMAKE, copy_workflow, snakemake, write_config

pytestmark = pytest.mark.skipif(not SNAKEMAKE.exists(), reason="snakemake not installed")

#: Two functions, two methods, one seed, 50 evaluations: well under a minute on 2 cores.
SUITE: dict[str, Any] = {
    "name": "tinysuite",
    "suite": ["sphere", "rastrigin"],
    "evolve": {
        "methods": ["propulate", "random"],
        "seeds": [1],
        "max_evaluations": 50,
        "time_limit": 60,
    },
}


@pytest.mark.slow
def test_suite_end_to_end(tmp_path: Path) -> None:
    workdir = copy_workflow(tmp_path / "wf")
    cfg = write_config(workdir, SUITE)
    proc = snakemake(workdir, "--cores", "2", "--configfile", cfg, timeout=180)
    assert proc.returncode == 0, proc.stdout[-5000:]
    results = workdir / "results" / "tinysuite"

    space = (results / "spaces" / "rastrigin.yaml").read_text()
    assert "propulate.problems.benchmark:rastrigin" in space
    assert not (results / "campaign.yaml").exists()
    assert not (results / "model").exists(), "a suite has no LCM stage"

    table = pd.read_csv(results / "summary.csv")
    rows = set(zip(table["task"], table["method"], strict=True))
    assert rows == {(f, m) for f in ("sphere", "rastrigin") for m in ("propulate", "random")}
    assert (table["evaluations"] == 50).all()
    assert table["best_loss"].notna().all()

    report = (results / "report.html").read_text()
    assert 'id="suite"' in report
    assert "median best loss" in report and "median evals/s" in report
    assert "random search" in report and "no optuna runs" in report
    for function in ("sphere", "rastrigin"):
        assert (results / "figures" / f"suite_{function}.png").is_file()
    text = (results / "figures" / "suite.txt").read_text()
    assert "targets:" in text and "2 functions" in text


# The config errors of a suite (unknown function, objective or space next to it, tasks) are unit
# tests of propulate.campaign in tests/test_campaign.py.
