"""``suggest`` gives its fields one meaning: with several objectives ``loss`` is the campaign's
loss whatever picked the point, ``pick`` is always there, ``--weights`` weigh natural units
as a campaign's weights do; and it answers without ``--task`` when there is one task, or from
the runs of a campaign without tasks (which has no database)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from propulate.cli import main
from propulate.runs.declared_objectives import Objectives
from propulate.tuningdb.ingest import store_campaign
from propulate.tuningdb.rows import TuningRow
from propulate.tuningdb.store import TuningDB
from propulate.tuningdb.suggest import suggest

OBJECTIVES = "runtime:min:1,energy:min:0.01"  # the campaign's canonical form, with weights
WEIGHTED = Objectives.parse(OBJECTIVES)


def point(a: float) -> dict[str, dict[str, float]]:
    """Runtime falls and energy grows with ``a``: every ``a`` is Pareto-optimal."""
    return {"params": {"a": a}, "objectives": {"runtime": 2.0 - a, "energy": 100.0 * a * a}}


@pytest.fixture
def db(tmp_path: Path) -> Path:
    points = [point(i / 20) for i in range(21)]
    best = min(points, key=lambda p: WEIGHTED.loss_of(p["objectives"]))  # the campaign's loss
    assert best["params"] == {"a": 0.5}
    row = TuningRow(
        task_id="t1",
        task={"t": 1.0},
        params=best["params"],
        loss=WEIGHTED.loss_of(best["objectives"]),
        method="evolve",
        algorithm="propulate",
        evaluations=40,
        pareto={"objectives": {"runtime": "min", "energy": "min"}, "points": points},
    )
    with TuningDB(tmp_path / "c") as store:
        store_campaign(
            store,
            {
                "name": "c",
                "parameters": {"a": [0.0, 1.0]},
                "task_space": {"t": [0.0, 2.0]},
                "objectives": OBJECTIVES,
            },
        )
        store.add(row)
    return tmp_path / "c"


def test_loss_is_the_campaigns_loss_with_or_without_a_preference(db: Path) -> None:
    plain = suggest(db, "t=1")
    assert plain["params"] == {"a": 0.5} and plain["pareto_size"] == 21
    assert plain["pick"] == (
        "the stored configuration: least weighted sum runtime=1,energy=0.01 (the campaign's "
        "weights, natural units, signed for minimisation)"
    )
    assert plain["loss"] == pytest.approx(WEIGHTED.loss_of(plain["objectives"]))
    fastest = suggest(db, "t=1", preference={"prefer": "runtime"})
    assert fastest["params"] == {"a": 1.0} and fastest["pick"] == "best runtime (min)"
    assert fastest["loss"] == pytest.approx(1.0 + 0.01 * 100.0)  # not the runtime alone


def test_weights_weigh_natural_units_like_the_campaigns(db: Path) -> None:
    same = suggest(db, "t=1", preference={"weights": {"runtime": 1.0, "energy": 0.01}})
    assert same["params"] == suggest(db, "t=1")["params"]  # the campaign's weights agree
    heavy = suggest(db, "t=1", preference={"weights": {"runtime": 1.0, "energy": 1.0}})
    assert heavy["params"] == {"a": 0.0}  # rescaled over the set, it would be a = 0.5
    assert "natural units" in heavy["pick"]


def test_help_says_what_the_default_pick_is(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["suggest", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "best in the first objective" not in text
    assert "least in the campaign's loss" in text and "natural units" in text


def test_without_task_a_database_of_several_tasks_names_them(db: Path) -> None:
    with TuningDB(db) as store:
        store.add(TuningRow("t2", {"t": 1.5}, {"a": 0.1}, 1.0, "evolve", "propulate", 10))
    with pytest.raises(ValueError, match=r"holds 2 tasks: give --task \(e.g. t=1.0; t=1.5\)"):
        suggest(db)


def test_a_campaign_without_tasks_is_answered_from_its_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    camp = tmp_path / "camp.yaml"
    camp.write_text(
        json.dumps(
            {
                "name": "plain",
                "objective": "propulate.problems.demo:demo_loss",
                "parameters": {"x": {"type": "float", "low": 0, "high": 1}},
            }
        )
    )
    (tmp_path / "task.json").write_text(json.dumps({"id": "plain", "task": {"t": 1.0}}))
    root = tmp_path / "results" / "plain"
    for seed, x in enumerate((0.2, 0.9)):
        args = ["measure", "--space", str(camp), "--task", str(tmp_path / "task.json")]
        out = root / "runs" / "plain" / f"random-seed{seed}"
        args += ["--out", str(out), "--params", json.dumps({"x": x}), "--method", "random"]
        assert main([*args, "--seed", str(seed)]) == 0
    capsys.readouterr()
    assert main(["suggest", "--campaign", str(root)]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["source"] == "runs" and answer["params"] == {"x": 0.2}
    assert answer["why"].startswith("least tuning loss over the campaign's 2 tuning runs")
    assert main(["suggest", "--campaign", str(tmp_path / "nothing")]) == 2
    assert "no tuning database and no tuning run" in capsys.readouterr().err


def test_make_runs_next_steps_name_suggest_for_a_campaign_without_tasks(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from propulate.campaign.__main__ import main as campaign_main

    repo = Path(__file__).resolve().parents[1]
    assert campaign_main(["next-steps", str(repo / "config" / "digits_optimizers.yaml")]) == 0
    assert "propulate suggest --campaign results/digits_optimizers  " in capsys.readouterr().out
    assert campaign_main(["next-steps", str(repo / "config" / "benchmark.yaml")]) == 0
    assert "propulate suggest" not in capsys.readouterr().out  # a suite: one best per function
