"""Several objectives: declaring them, reading an objective's values, the engine's records and
the Pareto set of the summary, maximisation, failures naming the objective, and refusals."""

from __future__ import annotations

import json
import math
import random
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from propulate import Islands, get_default_propagator
from propulate.campaign import Campaign, CampaignError
from propulate.campaign import options as opts
from propulate.compat.history import read_history
from propulate.engine.wire import from_record, from_wire, to_wire
from propulate.population import Individual
from propulate.problems.pairs import zdt1
from propulate.propagators.registry import PROPAGATORS, make_propagator, several_objectives
from propulate.report.collect import collect
from propulate.report.pareto_section import ParetoFronts
from propulate.report.section import ReportInputs
from propulate.runs.declared_objectives import Objectives
from propulate.runs.dominance import dominates, hypervolume
from propulate.runs.outcome import EvaluationError, outcome_of
from propulate.runs.summary import summarize_directory
from propulate.settings import EvolveSettings
from propulate.space import SearchSpace
from propulate.user_objective.command import Command
from tests.campaign_utils import config
from tests.evolve_utils import cli, evolve_args, one_error_line
from tests.mpi_utils import run_mpi
from tests.pareto_utils import evolve_objectives

SPACE = SearchSpace({"a": (-2.0, 2.0), "b": (-2.0, 2.0)})
PAIR = "f1:min,f2:min"


def two_spheres(params: dict[str, Any]) -> dict[str, float]:
    a, b = params["a"], params["b"]
    return {"f1": (a + 1) ** 2 + (b + 1) ** 2, "f2": (a - 1) ** 2 + (b - 1) ** 2}


def run(loss: Any, out: Path, objectives: str, evaluations: int = 150, pop_size: int = 8) -> Path:
    rng = random.Random(3)
    declared = Objectives.parse(objectives)
    prop = get_default_propagator(pop_size, SPACE, rng=rng, objectives=declared)
    Islands(
        loss,
        prop,
        rng,
        max_evaluations=evaluations,
        checkpoint_path=out,
        space=SPACE,
        objectives=objectives,
        progress_interval=1e9,
        failure_limit=0,
    ).propulate()
    return out


def test_declarations_parse_and_print() -> None:
    obj = Objectives.parse("runtime:min, accuracy:MAX,energy")
    assert obj.names == ("runtime", "accuracy", "energy")
    assert obj.directions == ("min", "max", "min")
    assert obj.text() == "runtime:min,accuracy:max,energy:min"
    assert Objectives.parse({"runtime": "min", "accuracy": "max"}).signs == (1.0, -1.0)
    for bad in ("a:up", "a,a", "", "a b:min"):
        with pytest.raises(ValueError):
            Objectives.parse(bad)


def test_values_are_read_from_mappings_tuples_and_numbers() -> None:
    obj = Objectives.parse("t:min,acc:max")
    assert obj.values_of({"acc": 0.5, "t": 2, "extra": "x"}) == {"t": 2.0, "acc": 0.5}
    assert obj.values_of((2, 0.5)) == {"t": 2.0, "acc": 0.5}
    out = outcome_of({"t": 2.0, "acc": 0.9}, obj)
    assert out.ok and out.loss == 2.0 and out.values == {"t": 2.0, "acc": 0.9}
    assert outcome_of(3.0, Objectives.parse("throughput:max")).loss == -3.0


@pytest.mark.parametrize(
    ("value", "named"),
    [
        ({"t": 1.0}, "objective acc is missing"),
        ({"t": 1.0, "acc": math.nan}, "objective acc is not a finite number"),
        ({"t": math.inf, "acc": 1.0}, "objective t is not a finite number"),
        ({"t": "fast", "acc": 1.0}, "objective t is not a number"),
        ((1.0,), "returned 1 values for 2 objectives"),
    ],
)
def test_a_missing_or_non_finite_value_is_a_failure_naming_it(value: Any, named: str) -> None:
    out = outcome_of(value, Objectives.parse("t:min,acc:max"))
    assert out.status == "failed" and out.loss is None and out.values is None
    assert named in (out.error or "")


def test_several_values_without_a_declaration_say_how_to_declare_them() -> None:
    out = outcome_of({"f1": 1.0, "f2": 2.0})
    assert out.status == "failed" and "--objectives" in (out.error or "")


def test_engine_records_one_column_per_objective_and_a_non_dominated_pareto_set(
    tmp_path: Path,
) -> None:
    out = run(two_spheres, tmp_path / "run", PAIR)
    df = read_history(out)
    assert df.attrs["objectives"] == ["f1", "f2"]
    assert len(df) == 150 and (df["status"] == "ok").all()
    for _, row in df.iterrows():
        expected = two_spheres({"a": row["a"], "b": row["b"]})
        assert row["f1"] == pytest.approx(expected["f1"])
        assert row["f2"] == pytest.approx(expected["f2"])
    assert (df["loss"] == df["f1"]).all()  # the loss is the first objective
    summary = summarize_directory(out, objectives=PAIR)
    assert summary.objectives == {"f1": "min", "f2": "min"}
    front = [(p["objectives"]["f1"], p["objectives"]["f2"]) for p in summary.pareto or []]
    assert len(front) >= 5
    assert not any(dominates(p, q) for p in front for q in front)
    every = list(zip(df["f1"], df["f2"], strict=True))
    # the set is complete: every record outside it is dominated by one inside it
    outside = [q for q in every if q not in front]
    assert all(any(dominates(p, q) for p in front) for q in outside)
    assert [f for f, _ in front] == sorted(f for f, _ in front)


def test_the_ga_beats_random_draws_on_zdt1(tmp_path: Path) -> None:
    """ZDT1 in 10-D, 1,500 evaluations: the Pareto GA's front dominates far more of the box up to
    (1.1, 1.1) than the front of as many uniform random points."""
    space = SearchSpace({f"x{i}": (0.0, 1.0) for i in range(10)})
    evolve_objectives(zdt1, space, PAIR, tmp_path, 1500, 5, pop_size=40)
    pareto = summarize_directory(tmp_path, objectives=PAIR).pareto or []
    ga = hypervolume([(p["objectives"]["f1"], p["objectives"]["f2"]) for p in pareto], (1.1, 1.1))
    draws = np.random.default_rng(5).random((1500, 10))
    points = [tuple(zdt1(dict(zip(space.names, x, strict=True))).values()) for x in draws]
    assert ga > hypervolume(points, (1.1, 1.1)) + 0.2


def test_a_single_objective_can_be_maximised(tmp_path: Path) -> None:
    def gain(params: dict[str, Any]) -> dict[str, float]:
        return {"gain": -((params["a"] - 0.5) ** 2) - params["b"] ** 2}

    out = run(gain, tmp_path / "run", "gain:max", evaluations=120)
    df = read_history(out)
    assert (df["loss"] == -df["gain"]).all()
    summary = summarize_directory(out, objectives="gain:max")
    assert summary.best_loss == pytest.approx(-df["gain"].max())
    assert summary.pareto and summary.pareto[0]["objectives"]["gain"] == df["gain"].max()
    assert df["gain"].max() > -0.05


def test_a_missing_objective_fails_the_evaluation_and_the_run_goes_on(tmp_path: Path) -> None:
    def sometimes(params: dict[str, Any]) -> dict[str, float]:
        values = two_spheres(params)
        if params["a"] > 1.0:
            del values["f2"]
        return values

    df = read_history(run(sometimes, tmp_path / "run", PAIR, evaluations=60))
    failed = df[df["status"] == "failed"]
    assert len(failed) > 0 and (failed["a"] > 1.0).all()
    assert failed["error"].str.contains("objective f2 is missing").all()
    assert failed["f1"].isna().all() and failed["loss"].isna().all()


def test_single_objective_records_are_unchanged(tmp_path: Path) -> None:
    """Without a declaration a record has no objectives field and the summary no Pareto set."""
    rng = random.Random(0)
    Islands(
        lambda p: p["a"] ** 2 + p["b"] ** 2,
        get_default_propagator(4, SPACE, rng=rng),
        rng,
        max_evaluations=20,
        checkpoint_path=tmp_path,
        space=SPACE,
        progress_interval=1e9,
    ).propulate()
    record = json.loads(next((tmp_path / "evals").glob("*.jsonl")).read_text().splitlines()[0])
    assert "objectives" not in record
    assert read_history(tmp_path).attrs["objectives"] == []
    summary = summarize_directory(tmp_path).to_dict()
    assert "pareto" not in summary and "objectives" not in summary


@pytest.mark.parametrize("name", sorted(set(PROPAGATORS) - set(several_objectives())))
def test_single_objective_propagators_refuse_several(name: str) -> None:
    settings = EvolveSettings(objectives=PAIR, propagator=name)
    with pytest.raises(ValueError, match=f"propagator {name} optimises one objective"):
        make_propagator(name, SPACE, settings, random.Random(0))


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (("--propagator", "cma"), "propagator cma optimises one objective, not 2 objectives"),
        (("--method", "random", "--pop-size", "4"), "--pop-size is not used by --method random"),
        (("--objectives", "f1:min,f1:max"), "a name is given twice"),
        (("--objectives", "f1:up"), "direction must be min or max"),
    ],
)
def test_the_command_line_refuses_in_one_line(
    tmp_path: Path, space: Path, extra: tuple[str, ...], says: str
) -> None:
    pairs = "propulate.problems.pairs:two_spheres"
    args = evolve_args(
        space, tmp_path / "o", "--max-evaluations", "5", "--objectives", PAIR, objective=pairs
    )
    proc = cli(*args, *extra)
    assert proc.returncode == 2
    assert says in one_error_line(proc.stderr)


def test_the_optuna_baseline_searches_several_objectives_with_nsga2(
    tmp_path: Path, space: Path
) -> None:
    pairs = "propulate.problems.pairs:two_spheres"
    out = tmp_path / "o"
    args = evolve_args(space, out, "--max-evaluations", "40", "--objectives", PAIR, objective=pairs)
    proc = cli(*args, "--method", "optuna")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    df = read_history(out)
    assert (
        summary["method"] == "optuna" and len(df) == 40 and df.attrs["objectives"] == ["f1", "f2"]
    )
    front = [(p["objectives"]["f1"], p["objectives"]["f2"]) for p in summary["pareto"]]
    every = list(zip(df["f1"], df["f2"], strict=True))
    assert {p for p in every if not any(dominates(q, p) for q in every)} == set(front)
    assert summary["best_loss"] == pytest.approx(df["f1"].min())
    table = ParetoFronts().build(ReportInputs("c", pd.DataFrame(), collect([out])))
    assert table is not None and "Optuna NSGA-II" in table.texts["pareto.txt"]
    assert "TPE" not in table.texts["pareto.txt"]
    from mpi4py import MPI

    from propulate.baselines.optuna_study import open_study

    (tmp_path / "s").mkdir()
    study, _, _ = open_study(tmp_path / "s", 0, 0, MPI.COMM_WORLD, None, 2)
    assert type(study.sampler).__name__ == "NSGAIISampler" and len(study.directions) == 2


def test_a_command_reads_one_named_result_per_objective(tmp_path: Path) -> None:
    script = tmp_path / "app.py"
    script.write_text(
        "import json, sys\n"
        "a = float(sys.argv[1])\n"
        "print(f'time: {a * 2}')\n"
        "if a < 5: print(json.dumps({'acc': {'top1': a / 10}}))\n"
    )
    cmd = Command.from_config(
        {
            "command": f"{sys.executable} {script} {{a}}",
            "result": {"runtime": "time: ([0-9.]+)", "accuracy": {"json": "acc.top1"}},
            "repeats": 3,
        }
    )
    declared = Objectives.parse("runtime:min,accuracy:max")
    out = outcome_of(cmd({"a": 2.0}), declared)
    assert out.ok and out.values == {"runtime": 4.0, "accuracy": 0.2}
    assert out.loss == 4.0 and len(out.details["runs"]) == 3
    with pytest.raises(EvaluationError, match="objective accuracy: no JSON object with key"):
        cmd({"a": 7.0})
    assert cmd.to_config()["result"] == {
        "runtime": "time: ([0-9.]+)",
        "accuracy": {"json": "acc.top1"},
    }


def test_objective_values_travel_and_resume() -> None:
    ind = Individual({"a": 1.0})
    ind.loss, ind.objectives, ind.uid = 1.0, {"f1": 1.0, "f2": 2.0}, "s:0:0"
    assert from_wire(to_wire(ind)).objectives == {"f1": 1.0, "f2": 2.0}
    record = {"params": {"a": 1.0}, "loss": 1.0, "status": "ok", "objectives": ind.objectives}
    assert from_record(record, 1).objectives == {"f1": 1.0, "f2": 2.0}


@pytest.mark.mpi
def test_two_ranks_share_objective_values_and_resume(tmp_path: Path, space: Path) -> None:
    """Under ``mpiexec -n 2`` (one island: the ranks send each other their individuals, with
    their objective values, :func:`test_objective_values_travel_and_resume`) the summary holds
    the Pareto set of both ranks' records; a resume with other objectives is refused."""
    pairs = "propulate.problems.pairs:two_spheres"
    out = tmp_path / "out"
    args = evolve_args(
        space, out, "--max-evaluations", "200", "--objectives", PAIR, objective=pairs
    )
    run_mpi(2, ["-m", "propulate", *args, "--pop-size", "6"])
    summary = json.loads((out / "summary.json").read_text())
    df = read_history(out)
    assert summary["evaluations"] == 200 and set(df["rank"]) == {0, 1}
    front = [(p["objectives"]["f1"], p["objectives"]["f2"]) for p in summary["pareto"]]
    every = list(zip(df["f1"], df["f2"], strict=True))
    assert {p for p in every if not any(dominates(q, p) for q in every)} == set(front)
    again = cli(
        *evolve_args(
            space, out, "--max-evaluations", "210", "--objectives", "f1:min", objective=pairs
        )
    )
    assert again.returncode == 2
    assert "objectives changed from f1:min,f2:min to f1:min" in one_error_line(again.stderr)


def test_a_campaign_declares_objectives_as_a_mapping() -> None:
    evolve = {"methods": ["propulate", "random"], "max_evaluations": 16}
    two = {**evolve, "objectives": {"t": "min", "acc": "max"}}
    with pytest.raises(CampaignError, match="stages new_tasks .TLA1, TLA2. model one loss"):
        Campaign.from_config(config(evolve=two))  # the tiny campaign transfers to a new task
    assert Campaign.from_config(config(evolve={**evolve, "objectives": "t:min"}, mla={}))
    c = Campaign.from_config(config(evolve=two, new_tasks=None))
    assert "--objectives t:min,acc:max" in opts.evolve_options(c, "propulate")
    assert "--objectives t:min,acc:max" in opts.evolve_options(c, "random")
    optuna = {**evolve, "methods": ["optuna"], "objectives": "t:min,acc:max"}
    assert "--objectives t:min,acc:max" in opts.evolve_options(
        Campaign.from_config(config(evolve=optuna, new_tasks=None)), "optuna"
    )
    with pytest.raises(CampaignError, match="evolve.objectives.*propagator pso"):
        Campaign.from_config(
            config(
                evolve={**evolve, "propagator": "pso", "objectives": "t:min,a:max"}, new_tasks=None
            )
        )


def test_the_shipped_example_returns_loss_size_and_time() -> None:
    pytest.importorskip("sklearn")
    from propulate.problems.digits_mlp import digits_mlp_costs

    params = {"learning_rate": 0.1, "width": 20, "depth": 2, "batch_size": 64}
    out = digits_mlp_costs({**params, "alpha": 1e-5, "momentum": 0.5}, epochs=1)
    assert out["weights"] == 64 * 20 + 20 + 20 * 20 + 20 + 20 * 10 + 10
    assert 0 < out["val_loss"] < 2.4 and out["seconds"] > 0
    assert Objectives.parse("val_loss:min,weights:min").values_of(out)["weights"] == 1930.0
