"""Campaign configs with a command objective, the evolve job's ranks and the baselines section."""

from __future__ import annotations

import copy
import json
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from propulate.campaign import Campaign, CampaignError
from propulate.campaign.__main__ import main as campaign_main

REPO = Path(__file__).resolve().parents[1]

CONFIG: dict[str, Any] = {
    "name": "qr",
    "objective": {
        "command": "echo {m} {n} {mb} {nb} {nproc} {p} 1.5",
        "result": r"(\S+)$",
        "launcher": "env NPROC={nproc}",
    },
    "constraint": "propulate.problems.pdgeqrf:feasible",
    "parameters": {
        "mb": {"type": "int", "low": 8, "high": 256, "log": True},
        "nb": {"type": "int", "low": 8, "high": 256, "log": True},
        "nproc": {"type": "int", "low": 1, "high": 2},
        "p": {"type": "int", "low": 1, "high": 2},
    },
    "task_space": {
        "m": {"type": "int", "low": 500, "high": 4000},
        "n": {"type": "int", "low": 500, "high": 4000},
    },
    "training_tasks": {"latin_hypercube": {"n": 2, "seed": 1}},
    "new_tasks": {"tall": {"m": 3600, "n": 900}, "square": {"m": 2000, "n": 2000}},
    "evolve": {"max_evaluations": 8, "ranks": 1},
    "baselines": {
        "default": {"mb": 32, "nb": 32, "nproc": 2, "p": 1},
        "random_search": True,
        "landscape": {"task": "square", "grid": {"mb": [8, 32], "nb": [16, 64]}},
    },
}


def config(**changes: Any) -> dict[str, Any]:
    out = copy.deepcopy(CONFIG)
    for key, value in changes.items():
        section, _, sub = key.partition("__")
        if sub:
            out[section][sub] = value
        else:
            out[section] = value
    return out


def test_command_objective_and_baselines_resolve() -> None:
    c = Campaign.from_config(CONFIG)
    assert c.is_command and c.evolve_ranks == 1
    assert c.objective_of("train00") == "results/qr/objective.yaml"
    assert c.spec()["objective"] == CONFIG["objective"]
    assert c.baseline_runs == [
        *(f"results/qr/baselines/{t}/default" for t in ("train00", "train01", "tall", "square")),
        "results/qr/baselines/tall/random",
        "results/qr/baselines/square/random",
        "results/qr/baselines/square/landscape",
    ]
    assert set(c.baseline_runs) <= set(c.all_runs)
    b = c.baselines
    assert b.options("default", 5, 0) == "--params " + shlex.quote(
        json.dumps(CONFIG["baselines"]["default"], sort_keys=True)
    )
    assert b.options("random", 5, 3) == "--random 5 --seed 3"
    assert b.options("landscape", 5, 0) == (
        "--grid mb=8,32 nb=16,64 --fixed " + shlex.quote('{"nproc": 2, "p": 1}')
    )


@pytest.mark.parametrize(
    ("changes", "key", "message"),
    [
        ({"objective__command": "echo {mbb} 1"}, "objective", "unknown placeholder(s) {mbb}"),
        ({"objective__command": "no-such-program-xyz {mb}"}, "objective", "no-such-program-xyz"),
        (
            {"baselines__default": {"mb": 32, "nb": 32, "nproc": 2}},
            "baselines.default",
            "give every parameter (mb, nb, nproc, p) within its range",
        ),
        (
            {"baselines__default": {"mb": 32, "nb": 32, "nproc": 1, "p": 2}},  # p > nproc
            "baselines.default",
            "violates the constraint on task 'tall'",
        ),
        (
            {"baselines__landscape": {"task": "wide", "grid": {"mb": [8], "nb": [8]}}},
            "baselines.landscape.task",
            "unknown task 'wide'",
        ),
        (
            {"baselines__landscape": {"task": "tall", "grid": {"mb": [8], "q": [8]}}},
            "baselines.landscape.grid",
            "give values for two of the parameters",
        ),
    ],
)
def test_unusable_settings_name_their_key(changes: dict, key: str, message: str) -> None:
    with pytest.raises(CampaignError) as err:
        Campaign.from_config(config(**changes))
    assert f"config key '{key}'" in str(err.value)
    assert message in str(err.value)


def test_setup_runs_the_commands_in_order_and_stops_at_a_failure(tmp_path: Path, capsys) -> None:
    marker = tmp_path / "log"
    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        yaml.safe_dump({"name": "x", "setup": [f"echo one >> {marker}", f"echo two >> {marker}"]})
    )
    assert campaign_main(["setup", str(cfg)]) == 0
    assert marker.read_text().split() == ["one", "two"]
    cfg.write_text(yaml.safe_dump({"name": "x", "setup": ["exit 3", f"echo three >> {marker}"]}))
    assert campaign_main(["setup", str(cfg)]) == 2
    assert capsys.readouterr().err.strip() == f"error: {cfg}: setup command failed (exit 3): exit 3"
    assert marker.read_text().split() == ["one", "two"]


def test_shipped_pdgeqrf_config_matches_the_schema_and_the_constraint() -> None:
    from snakemake.utils import validate

    spec = yaml.safe_load((REPO / "config" / "pdgeqrf.yaml").read_text())
    validate(copy.deepcopy(spec), str(REPO / "workflow" / "schemas" / "config.schema.yaml"))
    assert spec["evolve"]["ranks"] == 1
    assert spec["default"] == {"mb": 32, "nb": 32, "nproc": 2, "p": 1}
    assert spec["task_space"] == {
        "m": {"type": "int", "low": 500, "high": 4000},
        "n": {"type": "int", "low": 500, "high": 4000},
    }


def test_the_default_may_be_named_at_the_top_level_once() -> None:
    """``default:`` (the untuned configuration) is the same as ``baselines.default``."""
    nested = Campaign.from_config(CONFIG)
    top = config()
    top["default"] = top["baselines"].pop("default")
    assert Campaign.from_config(top).baselines == nested.baselines
    both = config(default=dict(CONFIG["baselines"]["default"]))
    with pytest.raises(CampaignError, match="default"):
        Campaign.from_config(both)
