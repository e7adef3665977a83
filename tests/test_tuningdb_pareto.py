"""The tuning database with several objectives: the Pareto set stored with a task's row (merged
over the task's runs) and ``suggest`` picking from it by a stated preference."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from propulate.cli import main
from propulate.runs.dominance import dominates
from propulate.runs.summary import summarize_directory
from propulate.space import SearchSpace
from propulate.tuningdb.ingest import best_per_task, store_campaign
from propulate.tuningdb.pareto_set import merge, pick
from propulate.tuningdb.store import TuningDB
from propulate.tuningdb.suggest import suggest
from tests.pareto_utils import evolve_objectives

SPACE = SearchSpace({"a": (0.0, 1.0)})
DECLARED = "runtime:min,accuracy:max"


def tradeoff(params: dict[str, float]) -> dict[str, float]:
    """Runtime grows and accuracy grows with ``a``: every ``a`` is Pareto-optimal."""
    return {"runtime": 1.0 + params["a"], "accuracy": params["a"] ** 0.5}


def evolve(out: Path, seed: int) -> Path:
    meta = {"task": "t1", "run": f"seed{seed}", "method": "propulate"}
    evolve_objectives(tradeoff, SPACE, DECLARED, out, 40, seed, pop_size=6, meta=meta)
    (out / "task.json").write_text(json.dumps({"id": "t1", "task": {"t": 1.0}}))
    return out


@pytest.fixture
def db(tmp_path: Path) -> Path:
    runs = [evolve(tmp_path / f"r{s}", s) for s in (1, 2)]
    (row,) = best_per_task(runs, SPACE)
    assert row.pareto is not None
    separate = [summarize_directory(r, objectives=DECLARED).pareto or [] for r in runs]
    assert len(row.pareto["points"]) == len(separate[0]) + len(separate[1])  # all optimal
    with TuningDB(tmp_path / "c") as store:
        store_campaign(
            store,
            {"name": "c", "parameters": {"a": [0.0, 1.0]}, "task_space": {"t": [0.0, 2.0]}},
        )
        store.add(row)
    return tmp_path / "c"


def test_suggest_picks_by_preference_weights_and_bounds(db: Path) -> None:
    plain = suggest(db, "t=1")
    assert plain["pareto_size"] > 10 and plain["objectives"]["runtime"] == plain["loss"]
    fastest = suggest(db, "t=1", preference={"prefer": "runtime"})
    best = suggest(db, "t=1", preference={"prefer": "accuracy"})
    assert fastest["params"]["a"] < 0.05 and best["params"]["a"] > 0.95
    assert best["pick"] == "best accuracy (max)" and best["loss"] == best["objectives"]["runtime"]
    bounded = suggest(db, "t=1", preference={"upper": {"runtime": 1.5}, "prefer": "accuracy"})
    assert bounded["objectives"]["runtime"] <= 1.5 and bounded["params"]["a"] > 0.3
    assert "among the points with runtime <= 1.5" in bounded["pick"]
    floor = suggest(db, "t=1", preference={"lower": {"accuracy": 0.5}})
    assert floor["objectives"]["accuracy"] >= 0.5 and floor["params"]["a"] < 0.4
    weighted = suggest(db, "t=1", preference={"weights": {"runtime": 1.0, "accuracy": 1.0}})
    assert 0.1 < weighted["params"]["a"] < 0.5  # the knee of sqrt against a linear cost
    with pytest.raises(ValueError, match="no Pareto point has runtime <= 0.5"):
        suggest(db, "t=1", preference={"upper": {"runtime": 0.5}})
    with pytest.raises(ValueError, match="unknown objective"):
        suggest(db, "t=1", preference={"prefer": "energy"})


def test_the_command_line_states_the_pick(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["suggest", "--campaign", str(db), "--task", "t=1"]
    assert main([*args, "--max", "runtime=1.2", "--prefer", "accuracy"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["objectives"]["runtime"] <= 1.2 and "best accuracy" in answer["pick"]
    assert main([*args, "--weights", "runtime=x"]) == 2
    assert "--weights" in capsys.readouterr().err


def test_merge_and_pick_by_hand() -> None:
    first = {
        "objectives": {"t": "min", "acc": "max"},
        "points": [
            {"params": {"a": 1}, "objectives": {"t": 1.0, "acc": 0.5}},
            {"params": {"a": 2}, "objectives": {"t": 2.0, "acc": 0.8}},
        ],
    }
    second = {
        "objectives": {"t": "min", "acc": "max"},
        "points": [
            {"params": {"a": 3}, "objectives": {"t": 1.5, "acc": 0.9}},  # dominates a=2
        ],
    }
    merged = merge(first, second)
    assert [p["params"]["a"] for p in merged["points"]] == [1, 3]
    points = [(p["objectives"]["t"], -p["objectives"]["acc"]) for p in merged["points"]]
    assert not any(dominates(p, q) for p in points for q in points)
    assert pick(merged, prefer="acc")[0]["params"] == {"a": 3}
    assert pick(merged, weights={"t": 1.0})[0]["params"] == {"a": 1}
    with pytest.raises(ValueError, match="--prefer or --weights"):
        pick(merged, prefer="t", weights={"t": 1.0})


def test_suggest_refuses_a_preference_for_one_objective(tmp_path: Path) -> None:
    from propulate.tuningdb.rows import TuningRow

    with TuningDB(tmp_path) as store:
        store_campaign(
            store, {"name": "c", "parameters": {"a": [0.0, 1.0]}, "task_space": {"t": [0.0, 2.0]}}
        )
        store.add(TuningRow("t1", {"t": 1.0}, {"a": 0.5}, 1.0, "evolve", "propulate", 10))
    assert "pareto_size" not in suggest(tmp_path, "t=1")
    with pytest.raises(ValueError, match="has no Pareto set"):
        suggest(tmp_path, "t=1", preference={"prefer": "runtime"})
