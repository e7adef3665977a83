"""Weights: several objectives scalarised into one loss, for the single-objective propagators,
MLA, TLA and the measurements (:mod:`propulate.runs.declared_objectives`)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from propulate.campaign import Campaign, CampaignError
from propulate.campaign import options as opts
from propulate.campaign.files import read_objectives, write_campaign_file
from propulate.compat.history import iter_records
from propulate.models.mla import run_mla
from propulate.propagators.registry import make_propagator
from propulate.remeasure.paired import measure_rounds
from propulate.runs.declared_objectives import Objectives
from propulate.runs.outcome import evaluate
from propulate.settings import EvolveSettings, LCMSettings, MLASettings
from propulate.space import SearchSpace
from tests.campaign_utils import config
from tests.evolve_utils import cli, evolve_args, one_error_line

SPACE = SearchSpace({"a": (-2.0, 2.0), "b": (-2.0, 2.0)})


def pair(params: dict[str, Any], task: dict[str, Any] | None = None) -> dict[str, float]:
    """Two objectives, the second one maximised; the task shifts the first one's optimum."""
    shift = 0.0 if task is None else float(task["t"])
    a, b = params["a"], params["b"]
    return {"f1": (a - shift) ** 2 + b**2, "gain": 1.0 - (b - 1.0) ** 2}


def test_weights_make_the_loss_their_weighted_signed_sum() -> None:
    declared = Objectives.parse("f1:min,gain:max", "f1=1,gain=0.5")
    assert declared.text() == "f1:min:1,gain:max:0.5"
    assert Objectives.parse(declared.text()) == declared  # the canonical form round-trips
    exact = Objectives.parse("f1,gain:max", "f1=0.1234567,gain=3e-9")
    assert Objectives.parse(exact.text()) == exact  # not rounded to 6 digits
    assert exact.weighted(exact.weights_text() or "") == exact
    assert Objectives.parse({"f1": "min", "gain": "max"}, {"f1": 1, "gain": 0.5}) == declared
    assert declared.weights_text() == "f1=1,gain=0.5" and declared.scalar
    assert declared.loss_of({"f1": 2.0, "gain": 4.0}) == pytest.approx(2.0 - 0.5 * 4.0)
    # without weights: the first objective, signed; a single maximised one stands alone
    assert Objectives.parse("f1:min,gain:max").loss_of({"f1": 2.0, "gain": 4.0}) == 2.0
    assert not Objectives.parse("f1:min,gain:max").scalar
    assert Objectives.parse("gain:max").scalar


@pytest.mark.parametrize(
    ("spec", "weights", "says"),
    [
        ("f1,f2", "f1=1", "give one for every objective (missing: f2)"),
        ("f1,f2", "f1=1,f3=2", "unknown objective(s) f3"),
        ("f1,f2", "f1=1,f2=-1", "weight must be a finite number >= 0"),
        ("f1,f2", "f1=0,f2=0", "at least one weight must be > 0"),
        ("f1,f2", "f1=1,f2=x", "weight is not a number: 'x'"),
        ("f1,f2", "f1:1", "write NAME=WEIGHT"),
        ("f1:min:1,f2:min", None, "give a weight to every objective"),
        ("f1:min:1:2", None, "write NAME, NAME:DIR or NAME:DIR:WEIGHT"),
    ],
)
def test_bad_weights_are_refused_naming_what_is_wrong(
    spec: str, weights: str | None, says: str
) -> None:
    with pytest.raises(ValueError) as err:
        Objectives.parse(spec, weights)
    assert says in str(err.value)


def test_an_outcome_and_a_measurement_with_weights() -> None:
    declared = Objectives.parse("f1:min,gain:max", "f1=1,gain=2")
    out = evaluate(pair, {"a": 1.0, "b": 0.0}, objectives=declared)
    assert out.ok and out.values == {"f1": 1.0, "gain": 0.0}
    assert out.loss == pytest.approx(1.0 - 2.0 * 0.0)
    # a mapping without declared objectives is a failure that says to declare them
    assert not evaluate(pair, {"a": 1.0, "b": 0.0}).ok
    taken = measure_rounds(pair, [{"a": 0.0, "b": 1.0}, {"a": 1.0, "b": 0.0}], 2, None, declared)
    assert [m.loss for m in taken if m.config == 0] == [pytest.approx(1.0 - 2.0)] * 2


def test_a_single_objective_propagator_minimises_the_weighted_sum() -> None:
    settings = EvolveSettings(objectives="f1:min:1,gain:max:1", propagator="cma")
    assert make_propagator("cma", SPACE, settings, random.Random(0)) is not None
    with pytest.raises(ValueError, match="or give weights to minimise their weighted sum"):
        make_propagator("cma", SPACE, EvolveSettings(objectives="f1,gain:max"), random.Random(0))


def test_a_campaign_with_weights_models_their_sum() -> None:
    evolve = {"methods": ["propulate"], "max_evaluations": 16}
    two = {**evolve, "objectives": {"t": "min", "acc": "max"}}
    with pytest.raises(CampaignError, match=r"give evolve.weights \(e.g. \{t: 1, acc: 1\}\)"):
        Campaign.from_config(config(evolve=two, mla={}))
    weighted = {**two, "weights": {"t": 1, "acc": 0.5}}
    c = Campaign.from_config(config(evolve=weighted, mla={}))
    assert c.mla_on and c.evolve.objectives == "t:min:1,acc:max:0.5"
    assert "--objectives t:min:1,acc:max:0.5" in opts.evolve_options(c, "propulate")
    assert "--weights" not in opts.evolve_options(c, "propulate")
    assert c.spec()["objectives"] == "t:min:1,acc:max:0.5"  # what MLA, TLA, measure read
    with pytest.raises(CampaignError, match="'evolve.weights': weights combine evolve.objectives"):
        Campaign.from_config(config(evolve={**evolve, "weights": {"t": 1}}))
    with pytest.raises(CampaignError, match=r"unknown objective\(s\) x"):
        Campaign.from_config(config(evolve={**two, "weights": {"t": 1, "acc": 1, "x": 1}}))


def test_mla_records_every_objective_and_models_the_weighted_sum(tmp_path: Path) -> None:
    spec = {"objective": "x:y", "parameters": {"a": [-2.0, 2.0], "b": [-2.0, 2.0]}}
    campaign = write_campaign_file(
        tmp_path / "c.yaml", {**spec, "objectives": "f1:min:1,gain:max:2"}
    )
    declared = read_objectives(campaign)
    assert declared == Objectives.parse("f1:min,gain:max", "f1=1,gain=2")
    tasks = [("t0", {"t": 0.0}), ("t1", {"t": 1.0})]
    mla = MLASettings(budget=5, initial=4, seed=0)
    summaries = run_mla(
        SPACE, pair, tasks, tmp_path / "mla", mla, LCMSettings(latent=1, restarts=1),
        objectives=declared,
    )  # fmt: skip
    for (tid, task), summary in zip(tasks, summaries, strict=True):
        records = list(iter_records(tmp_path / "mla" / tid))
        assert len(records) == 5 and summary.evaluations == 5
        for r in records:
            values = pair(r["params"], task)
            assert r["objectives"] == pytest.approx(values)
            assert r["loss"] == pytest.approx(values["f1"] - 2.0 * values["gain"])
        assert summary.best_loss == pytest.approx(min(r["loss"] for r in records))
        assert summary.objectives == {"f1": "min", "gain": "max"} and summary.pareto
    refused = Objectives.parse("f1,gain:max")
    with pytest.raises(ValueError, match="give weights to minimise their weighted sum"):
        run_mla(SPACE, pair, tasks, tmp_path / "no", mla, objectives=refused)


def test_the_command_line_takes_weights(tmp_path: Path) -> None:
    space = tmp_path / "s.yaml"
    space.write_text("parameters:\n  a: {type: float, low: -2, high: 2}\n")
    pairs = "propulate.problems.pairs:two_spheres"
    out = tmp_path / "o"
    args = evolve_args(space, out, "--max-evaluations", "12", objective=pairs)
    weighted = [*args, "--objectives", "f1,f2", "--weights", "f1=1,f2=3", "--propagator", "cma"]
    proc = cli(*weighted)
    assert proc.returncode == 0, proc.stderr
    records = list(iter_records(out))
    assert len(records) == 12
    for r in records:
        assert r["loss"] == pytest.approx(r["objectives"]["f1"] + 3 * r["objectives"]["f2"])
    summary = json.loads((out / "summary.json").read_text())
    assert summary["best_loss"] == pytest.approx(min(r["loss"] for r in records))
    again = cli(*args, "--objectives", "f1,f2", "--weights", "f1=1,f2=1")
    assert again.returncode == 2  # a resume with other weights is another run
    assert "objectives changed from f1:min:1,f2:min:3 to f1:min:1,f2:min:1" in one_error_line(
        again.stderr
    )
    alone = cli(*evolve_args(space, tmp_path / "p", "--max-evaluations", "2", objective=pairs),
                "--weights", "f1=1")  # fmt: skip
    assert alone.returncode == 2
    assert "--weights combines the objectives of --objectives" in one_error_line(alone.stderr)
