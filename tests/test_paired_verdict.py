"""Advice that follows the campaign's own paired re-measurement: when the paired rounds find the
default (or another run's configuration) faster than the tuning's pick, the tuning database
stores the winner with the evidence, ``suggest`` says why, and the report flags it first."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from propulate.cli import main
from propulate.remeasure.paired import contenders, paired_comparison, read_paired
from propulate.remeasure.verdict import explain, verdict
from propulate.report.paired_flag import flag_html, overruled
from propulate.tuningdb.ingest import update
from propulate.tuningdb.store import TuningDB
from propulate.tuningdb.suggest import suggest

CAMPAIGN = {
    "name": "demo",
    "objective": "propulate.problems.demo:demo_loss",
    "parameters": {"x": {"type": "float", "low": 0, "high": 1}},
    "task_space": {"t": {"type": "float", "low": 0, "high": 1.5}},
}
DEFAULT = {"x": 0.5}


def measured_run(root: Path, x: float, seed: int) -> Path:
    """A tuning run (``random``) that measured one configuration of the demo function."""
    out = root / f"run{seed}"
    args = ["measure", "--space", str(root / "campaign.yaml"), "--task", str(root / "task.json")]
    args += ["--out", str(out), "--params", json.dumps({"x": x}), "--method", "random"]
    assert main([*args, "--seed", str(seed)]) == 0
    return out


@pytest.fixture
def runs(tmp_path: Path) -> list[Path]:
    (tmp_path / "campaign.yaml").write_text(json.dumps(CAMPAIGN))
    (tmp_path / "task.json").write_text(json.dumps({"id": "t1", "task": {"t": 1.0}}))
    return [measured_run(tmp_path, x, seed) for seed, x in enumerate((0.2, 0.9))]


def loaded_machine(fastest: dict[str, float]) -> Any:
    """A loss of the paired rounds: least at ``fastest``, so that it wins every round."""
    return lambda params: 1.0 + 4.0 * abs(params["x"] - fastest["x"])


def compare(runs: list[Path], fastest: dict[str, float], out: Path) -> Path:
    """The paired comparison file of the runs' picks against the default (as ``paired``)."""
    data = paired_comparison(loaded_machine(fastest), DEFAULT, contenders(runs), rounds=5)
    out.write_text(json.dumps({"task": "t1", **data}))
    return out


def test_verdict_names_the_default_when_every_speedup_is_below_one(
    runs: list[Path], tmp_path: Path
) -> None:
    data = json.loads(compare(runs, DEFAULT, tmp_path / "p.json").read_text())
    tuned = min(contenders(runs), key=lambda c: c.tuning_loss)
    found = verdict(data)
    assert found is not None and found["chosen"] == tuned.label
    assert found["winner"] == "default" and found["overruled"] and found["params"] == DEFAULT
    assert found["speedup"] == 1.0 and found["chosen_speedup"] < 1.0
    assert found["losses"] == [1.0] * 5 and found["loss"] == 1.0
    assert "the default was faster than every tuned configuration" in explain(found)
    # the same rounds with the tuning's pick fastest confirm it
    confirmed = verdict(json.loads(compare(runs, tuned.params, tmp_path / "q.json").read_text()))
    assert confirmed is not None and not confirmed["overruled"]
    assert confirmed["winner"] == tuned.label and "confirms" in explain(confirmed)


def test_another_runs_configuration_wins_over_the_tuning_pick(
    runs: list[Path], tmp_path: Path
) -> None:
    other = max(contenders(runs), key=lambda c: c.tuning_loss)  # the run the tuning rejected
    found = verdict(json.loads(compare(runs, other.params, tmp_path / "p.json").read_text()))
    assert found is not None and found["overruled"]
    assert found["winner"] == other.label and found["params"] == other.params
    assert found["speedup"] > 1.0 and f"{other.label} (" in explain(found)


def test_the_database_stores_the_paired_winner_and_suggest_says_why(
    runs: list[Path], tmp_path: Path
) -> None:
    db = tmp_path / "results"
    plain = update(db, CAMPAIGN, runs)
    assert plain["added"] == ["t1"] and "paired" not in plain
    tuned = suggest(db, "t=1")
    assert tuned["params"] != DEFAULT and tuned["why"].startswith("least tuning loss")
    paired = compare(runs, DEFAULT, tmp_path / "paired.json")
    result = update(db, CAMPAIGN, runs, paired=[paired])
    assert result["added"] == ["t1"] and result["paired"] == ["t1"]
    with TuningDB(db, readonly=True) as store:
        row = store.current()[0]
        evidence = store.evidence_of(row)
    assert row.params == DEFAULT and row.reason == "paired" and row.method == "default"
    assert row.repeats == [1.0] * 5 and row.loss == 1.0 and row.version == 2
    assert evidence is not None and evidence["winner"] == "default"
    answer = suggest(db, "t=1")
    assert answer["params"] == DEFAULT and answer["paired"]["overruled"]
    assert "the default was faster than every tuned configuration" in answer["why"]
    # idempotent, and a later update without the rounds does not bring the beaten pick back
    assert update(db, CAMPAIGN, runs, paired=[paired])["kept"] == ["t1"]
    assert update(db, CAMPAIGN, runs)["kept"] == ["t1"]
    assert suggest(db, "t=1")["params"] == DEFAULT


def test_the_command_line_update_takes_paired_files(
    runs: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paired = compare(runs, DEFAULT, tmp_path / "paired.json")
    args = ["tuningdb", "update", "--db", str(tmp_path / "db"), "--campaign"]
    args += [str(tmp_path / "campaign.yaml"), "--runs", *map(str, runs), "--paired", str(paired)]
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["paired"] == ["t1"]
    assert main(["suggest", "--campaign", str(tmp_path / "db")]) == 0  # its only task
    answer = json.loads(capsys.readouterr().out)
    assert answer["params"] == DEFAULT and "paired re-measurement" in answer["why"]


def test_the_report_flags_the_overruled_task_first(runs: list[Path], tmp_path: Path) -> None:
    rows = read_paired(compare(runs, DEFAULT, tmp_path / "p.json"))
    (flag,) = overruled(rows)
    assert flag["task"] == "t1" and flag["winner"] == "default" and flag["chosen_speedup"] < 1
    text = flag_html(rows)
    assert "contradicts the tuning on 1 task(s)" in text and "faster than every tuned" in text
    tuned = min(contenders(runs), key=lambda c: c.tuning_loss)
    assert flag_html(read_paired(compare(runs, tuned.params, tmp_path / "q.json"))) == ""


def test_the_flag_opens_the_campaign_report(runs: list[Path], tmp_path: Path) -> None:
    from propulate.report.html import build_report

    summary = tmp_path / "summary.csv"
    assert main(["aggregate", "--runs", *map(str, runs), "--out", str(summary)]) == 0
    paired = compare(runs, DEFAULT, tmp_path / "p.json")
    page = build_report(summary, runs, tmp_path / "report.html", paired=[paired]).read_text()
    assert 'id="paired-flag"' in page
    assert page.index('id="paired-flag"') < page.index("<h2")  # before every section
