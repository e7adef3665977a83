"""A config's ``parameters`` naming a space file (``parameters: space.yaml``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from propulate.campaign import Campaign, CampaignError

BASE: dict[str, Any] = {
    "name": "c",
    "objective": "propulate.problems.demo:demo_loss",
    "task_space": {"t": {"type": "float", "low": 0.0, "high": 10.0}},
    "training_tasks": {"latin_hypercube": {"n": 2}},
    "evolve": {"max_evaluations": 8},
}

CONSTRAINT = "propulate.problems.pdgeqrf:feasible"


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _space(path: Path, **extra: Any) -> None:
    spec = {
        "parameters": {"x": [0.0, 1.0], "n": {"type": "int", "low": 1, "high": 64, "log": True}}
    }
    path.write_text(yaml.safe_dump({**spec, **extra}, sort_keys=False))


def test_space_file_gives_the_parameters_in_the_config_form(here: Path) -> None:
    _space(here / "space.yaml")
    file_based = Campaign.from_config({**BASE, "parameters": "space.yaml"})
    inline = {
        "x": {"type": "float", "low": 0.0, "high": 1.0, "log": False},
        "n": {"type": "int", "low": 1, "high": 64, "log": True},
    }
    assert file_based.parameters == inline
    # the campaign file (what the jobs read and Snakemake compares) is the inline config's
    assert file_based.spec() == Campaign.from_config({**BASE, "parameters": inline}).spec()


def test_space_file_constraint(here: Path) -> None:
    _space(here / "space.yaml", constraint=CONSTRAINT)
    assert Campaign.from_config({**BASE, "parameters": "space.yaml"}).constraint == CONSTRAINT
    with pytest.raises(CampaignError, match="config key 'constraint': given here and in the space"):
        Campaign.from_config({**BASE, "parameters": "space.yaml", "constraint": CONSTRAINT})


def test_space_file_errors_name_the_key(here: Path) -> None:
    with pytest.raises(CampaignError, match="config key 'parameters': space file nope.yaml not"):
        Campaign.from_config({**BASE, "parameters": "nope.yaml"})
    (here / "bad.yaml").write_text("parameters:\n  x: {type: float, low: 1.0, high: 0.0}\n")
    with pytest.raises(CampaignError, match="config key 'parameters': space file bad.yaml: "):
        Campaign.from_config({**BASE, "parameters": "bad.yaml"})
    _space(here / "c.yaml", constraint="nowhere_module:f")
    with pytest.raises(CampaignError, match="config key 'constraint': space file c.yaml: "):
        Campaign.from_config({**BASE, "parameters": "c.yaml"})
