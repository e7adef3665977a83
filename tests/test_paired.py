"""Paired re-measurement of the default against tuned configurations (``propulate paired``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from propulate.campaign import Campaign, CampaignError
from propulate.cli import main
from propulate.remeasure.paired import Contender, paired_comparison, read_paired, round_order
from propulate.report.baseline import speedup_table
from tests.campaign_utils import config
from tests.pdgeqrf_utils import CALLS_ENV, CAMPAIGN, TASK, launched, model_runtime

DEFAULT = {"mb": 32, "nb": 32, "nproc": 2, "p": 1}
FAST = {"mb": 48, "nb": 48, "nproc": 2, "p": 1}


class Drifting:
    """A loss whose machine slows down by 5 % with every call: ``factor * 1.05 ** calls``."""

    def __init__(self, factors: dict[int, float]) -> None:
        self.factors, self.calls = factors, 0

    def __call__(self, params: dict[str, Any]) -> float:
        self.calls += 1
        return self.factors[params["mb"]] * 1.05**self.calls


def contender(label: str, params: dict[str, Any], tuning_loss: float = 1.0) -> Contender:
    return Contender(label, label, f"runs/{label}", params, tuning_loss)


def test_every_configuration_takes_every_position_once_in_as_many_rounds() -> None:
    orders = [round_order(3, r) for r in range(3)]
    assert orders == [[0, 1, 2], [1, 2, 0], [2, 0, 1]]
    for position in range(3):
        assert sorted(order[position] for order in orders) == [0, 1, 2]


def test_interleaved_rounds_cancel_the_machine_drift() -> None:
    # the tuned configuration is truly 1.25 x faster; the machine slows down 5 % per call
    loss = Drifting({32: 1.0, 48: 0.8})
    separate = loss(DEFAULT) / [loss(FAST) for _ in range(10)][-1]  # minutes apart
    assert separate < 0.8  # the drift turns a real gain into an apparent loss
    loss.calls = 0
    out = paired_comparison(loss, DEFAULT, [contender("tla2", FAST)], rounds=6)
    row = out["speedups"][0]
    assert row["pairs"] == 6 and len(out["measurements"]) == 12
    # each ratio is off by one call's drift, half the rounds either way: the median is ~ the truth
    assert row["low"] == pytest.approx(1.25 / 1.05) and row["high"] == pytest.approx(1.25 * 1.05)
    assert row["speedup"] == pytest.approx(1.25, rel=0.002)


def test_a_contender_equal_to_the_default_shares_its_measurement() -> None:
    calls: list[dict[str, Any]] = []

    def loss(params: dict[str, Any]) -> float:
        calls.append(params)
        return model_runtime(params, TASK) * (1 + 0.1 * len(calls))

    tuned = [contender("evolve", DEFAULT), contender("tla1", FAST), contender("tla2", FAST)]
    out = paired_comparison(loss, DEFAULT, tuned, rounds=3)
    assert len(calls) == 6  # two distinct configurations, three rounds
    assert out["configs"] == [DEFAULT, FAST] and out["labels"] == ["default", "tla1"]
    rows = {r["label"]: r for r in out["speedups"]}
    assert rows["evolve"]["speedup"] == 1.0 and rows["evolve"]["low"] == 1.0
    assert rows["tla1"] == {**rows["tla2"], "label": "tla1"}


def test_a_failed_measurement_drops_its_round_only() -> None:
    calls = {"n": 0}

    def loss(params: dict[str, Any]) -> float:
        calls["n"] += 1
        if params == FAST and calls["n"] == 3:  # round 1 measures FAST first
            raise RuntimeError("node hiccup")
        return 2.0 if params == DEFAULT else 1.0

    row = paired_comparison(loss, DEFAULT, [contender("tla2", FAST)], rounds=3)["speedups"][0]
    assert row["pairs"] == 2 and row["speedup"] == 2.0


def test_rounds_must_be_positive() -> None:
    with pytest.raises(ValueError, match="rounds"):
        paired_comparison(lambda p: 1.0, DEFAULT, [], rounds=0)


def _measure(tmp_path: Path, out: str, *mode: str) -> Path:
    args = ["--space", str(tmp_path / "campaign.yaml"), "--task", str(tmp_path / "t.json")]
    assert main(["measure", *args, "--out", str(tmp_path / out), *mode]) == 0
    return tmp_path / out


def test_cli_compares_each_run_with_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "campaign.yaml").write_text(CAMPAIGN)
    (tmp_path / "t.json").write_text(json.dumps({"id": "t", "task": TASK}))
    default = _measure(tmp_path, "default", "--params", json.dumps(DEFAULT))
    fast = _measure(tmp_path, "fast", "--params", json.dumps(FAST), "--method", "tla2")
    rand = _measure(tmp_path, "random", "--random", "3", "--seed", "1")
    monkeypatch.setenv(CALLS_ENV, str(tmp_path / "calls.jsonl"))
    out = tmp_path / "paired" / "t.json"
    args = ["--space", str(tmp_path / "campaign.yaml"), "--task", str(tmp_path / "t.json")]
    runs = ["--runs", str(default), str(fast), str(rand)]
    assert main(["paired", *args, *runs, "--default", json.dumps(DEFAULT), "--out", str(out)]) == 0
    assert len(launched(tmp_path / "calls.jsonl")) == 5 * 3  # default, tla2's, random's best
    rows = {r["method"]: r for r in read_paired(out)}
    assert set(rows) == {"tla2", "random"}  # the default run is a reference, not a contender
    truth = model_runtime(DEFAULT, TASK) / model_runtime(FAST, TASK)
    assert rows["tla2"]["speedup"] == pytest.approx(truth) and rows["tla2"]["pairs"] == 5
    assert rows["tla2"]["task"] == "t"
    assert "t tla2: speedup" in capsys.readouterr().out

    bad = ["--default", json.dumps({**DEFAULT, "p": 3}), "--out", str(out)]
    assert main(["paired", *args, *runs, *bad]) == 2
    assert "not a valid configuration" in capsys.readouterr().err


def test_report_table_takes_the_best_run_of_a_method_per_task() -> None:
    import pandas as pd

    table = pd.DataFrame(
        [("a", "default", 2.0, 1), ("a", "propulate", 0.5, 40)],
        columns=["task", "method", "best_loss", "evaluations"],
    )
    paired = [
        {"task": "a", "method": "propulate", "tuning_loss": 0.6, "speedup": 1.1, "low": 1.0,
         "high": 1.2, "pairs": 5},
        {"task": "a", "method": "propulate", "tuning_loss": 0.5, "speedup": 1.3, "low": 1.2,
         "high": 1.4, "pairs": 5},
    ]  # fmt: skip
    row = speedup_table(table, paired).iloc[0]
    assert row.speedup == pytest.approx(4.0)  # the tuning-time figure stays
    assert (row.paired_speedup, row.paired_low, row.paired_high, row.pairs) == (1.3, 1.2, 1.4, 5)
    assert "paired_speedup" not in speedup_table(table).columns


def test_campaign_pairs_every_task_with_a_default_unless_turned_off() -> None:
    base = config(default={"x": 0.5})
    campaign = Campaign.from_config(base)
    tasks = campaign.training_ids + campaign.new_ids
    assert campaign.paired_files == [campaign.paired_file(t) for t in tasks]
    new = campaign.new_ids[0]
    assert campaign.tuned_runs(new) == [campaign.path("transfer", new, t) for t in ("tla1", "tla2")]
    train = campaign.training_ids[0]
    assert campaign.tuned_runs(train)[0] == campaign.run_dir(train, campaign.methods[0], 1)
    off = Campaign.from_config({**base, "baselines": {"paired_rounds": 0}})
    assert off.paired_files == []
    with pytest.raises(CampaignError, match="baselines.paired_rounds"):
        Campaign.from_config({**base, "baselines": {"paired_rounds": -1}})
    assert Campaign.from_config(config()).paired_files == []  # no default, nothing to pair
