"""The report's comparison with the untuned default: speedups per task and the landscape."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from propulate.cli import main
from propulate.report import aggregate, build_report
from propulate.report.baseline import speedup_table
from propulate.report.collect import collect
from tests.pdgeqrf_utils import CAMPAIGN, model_runtime

TASKS = {"a": {"m": 600, "n": 400}, "b": {"m": 300, "n": 900}}
DEFAULT = {"mb": 32, "nb": 32, "nproc": 2, "p": 1}


def test_speedup_is_default_over_best_per_task_and_tuning_method() -> None:
    table = pd.DataFrame(
        [
            ("a", "default", 2.0, 1),
            ("a", "propulate", 0.5, 20),
            ("a", "grid", 0.4, 9),
            ("b", "default", 1.0, 1),
            ("b", "tla2", 0.8, 5),
            ("b", "random", float("nan"), 5),
            ("c", "propulate", 0.1, 20),  # no default: no row
        ],
        columns=["task", "method", "best_loss", "evaluations"],
    )
    out = speedup_table(table)
    assert list(zip(out.task, out.method, strict=True)) == [
        ("a", "propulate"),
        ("b", "tla2"),
        ("b", "random"),
    ]
    assert out.speedup.iloc[0] == pytest.approx(4.0)
    assert out.speedup.iloc[1] == pytest.approx(1.25)
    assert math.isnan(out.speedup.iloc[2])


@pytest.fixture
def campaign(tmp_path: Path) -> tuple[Path, list[Path]]:
    (tmp_path / "campaign.yaml").write_text(CAMPAIGN)
    runs = []
    for tid, task in TASKS.items():
        spec = tmp_path / f"{tid}.json"
        spec.write_text(json.dumps({"id": tid, "task": task}))
        base = ["measure", "--space", str(tmp_path / "campaign.yaml"), "--task", str(spec)]
        out = tmp_path / "runs" / tid
        assert main([*base, "--out", str(out / "default"), "--params", json.dumps(DEFAULT)]) == 0
        assert main([*base, "--out", str(out / "random"), "--random", "6", "--seed", "1"]) == 0
        runs += [out / "default", out / "random"]
    spec = tmp_path / "a.json"
    grid = tmp_path / "runs" / "a" / "grid"
    args = ["--grid", "mb=8,32,128", "nb=8,32,300", "--fixed", '{"nproc": 2, "p": 1}']
    assert (
        main(
            [
                "measure",
                "--space",
                str(tmp_path / "campaign.yaml"),
                "--task",
                str(spec),
                "--out",
                str(grid),
                *args,
            ]
        )
        == 0
    )
    return tmp_path, [*runs, grid]


def test_report_shows_speedups_and_the_landscape(campaign: tuple[Path, list[Path]]) -> None:
    tmp_path, runs = campaign
    summary = tmp_path / "summary.csv"
    aggregate(runs).to_csv(summary, index=False)
    figures = tmp_path / "figures"
    page = build_report(summary, runs, tmp_path / "report.html", figures=figures).read_text()
    assert "<h2>Tuned against the default</h2>" in page
    assert (figures / "landscape_a.png").is_file()
    assert not (figures / "landscape_b.png").exists()
    # the default and the grid are references: no convergence curve, no speedup row of their own
    text = (figures / "speedup.txt").read_text().splitlines()
    assert text[0].split() == [
        "task",
        "method",
        "default_loss",
        "best_loss",
        "speedup",
        "evaluations",
    ]
    rows = [line.split() for line in text[1:]]
    assert [(r[0], r[1]) for r in rows] == [("a", "random"), ("b", "random")]
    for row in rows:
        default = model_runtime(DEFAULT, TASKS[row[0]])
        # the table shows 3 significant digits: each value is within half a unit of the last
        assert float(row[2]) == pytest.approx(default, rel=5e-3)
        assert float(row[4]) == pytest.approx(default / float(row[3]), rel=1.1e-2)
    assert {run.method for run in collect(runs).searches} == {"random"}


def test_report_without_a_default_has_no_such_section(tmp_path: Path, campaign) -> None:
    root, runs = campaign
    only_random = [r for r in runs if r.name == "random"]
    summary = root / "summary2.csv"
    aggregate(only_random).to_csv(summary, index=False)
    figures = root / "figures2"
    page = build_report(summary, only_random, root / "r2.html", figures=figures).read_text()
    assert "Tuned against the default" not in page
    assert not (figures / "speedup.txt").exists()


def test_a_speedup_within_the_spread_of_repeated_measurements_says_so() -> None:
    table = pd.DataFrame(
        [("a", "default", 2.0, 1), ("a", "propulate", 1.8, 20), ("b", "default", 1.0, 1)]
        + [("b", "tla2", 0.5, 5)],
        columns=["task", "method", "best_loss", "evaluations"],
    )
    paired = [
        {"task": "a", "method": "propulate", "tuning_loss": 1.8, "speedup": 1.04}
        | {"low": 0.93, "high": 1.2, "pairs": 5},
        {"task": "b", "method": "tla2", "tuning_loss": 0.5, "speedup": 1.9}
        | {"low": 1.7, "high": 2.2, "pairs": 5},
    ]
    out = speedup_table(table, paired)
    assert out.note.iloc[0] == (
        "no measurable difference: repeated measurements scatter more (ratios 0.93 to 1.2) "
        "than default and tuned differ"
    )
    assert out.note.iloc[1] == ""  # every round favours the tuned configuration


def test_the_default_campaign_has_a_speedup_section() -> None:
    import yaml

    from propulate.campaign import Campaign

    config = yaml.safe_load((Path(__file__).parents[1] / "config" / "config.yaml").read_text())
    campaign = Campaign.from_config(config)
    assert campaign.baselines.default == {"nb": 32, "threads": 1}
    assert campaign.baselines.paired_rounds > 0
