"""ConfigSpace interchange, the ``space`` command, the shipped conditional example (space,
objective, campaign) and inactive parameters in the records and the models."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest
import yaml

from propulate.cli import main
from propulate.space import SearchSpace, SpaceError
from tests.evolve_utils import cli, evolve_args, one_error_line

REPO = Path(__file__).resolve().parents[1]
SHIPPED = REPO / "examples" / "digits_optimizers" / "space.yaml"
MIXED = {
    "parameters": {
        "algo": {"type": "categorical", "choices": ["blocked", "naive"]},
        "tx": {"type": "int", "low": 1, "high": 64, "log": True, "when": {"algo": "blocked"}},
        "unroll": {"type": "int", "low": 1, "high": 8},
        "depth": {"type": "int", "low": 1, "high": 6},
        "extra": {"type": "float", "low": 0.0, "high": 1.0, "when": {"depth": ">= 3"}},
        "w": {
            "type": "float",
            "low": 1e-3,
            "high": 1.0,
            "log": True,
            "when": {"depth": "< 5", "algo": ["naive"]},
        },
    },
    "forbidden": ["algo == 'naive' and unroll in [5, 6]", "unroll == 3", "unroll < depth"],
}


def _same(a: SearchSpace, b: SearchSpace) -> None:
    da, db = a.to_dict(), b.to_dict()
    assert da["parameters"] == db["parameters"]
    assert list(da["parameters"]) == list(db["parameters"])  # the order too
    assert set(da.get("forbidden", [])) == set(db.get("forbidden", []))


@pytest.mark.parametrize("spec", [MIXED, None])
def test_configspace_round_trips_both_ways(spec: dict | None, tmp_path: Path) -> None:
    cs = pytest.importorskip("ConfigSpace")
    from propulate.space.configspace import (
        from_configspace,
        read_configspace_json,
        to_configspace,
        write_configspace_json,
    )

    space = SearchSpace.from_dict(spec) if spec else SearchSpace.from_yaml(SHIPPED)
    write_configspace_json(space, tmp_path / "cs.json")
    back = read_configspace_json(tmp_path / "cs.json")
    _same(space, back)
    theirs = to_configspace(space)
    assert to_configspace(back) == theirs  # ConfigSpace -> ours -> ConfigSpace
    assert isinstance(theirs, cs.ConfigurationSpace)
    # ConfigSpace's own sampling agrees with our conditions
    for config in theirs.sample_configuration(200):
        assert space.in_bounds(dict(config)) and space.satisfies(dict(config))
    assert from_configspace(theirs).conditions == space.conditions


def test_what_either_side_cannot_express_is_refused_in_one_line() -> None:
    cs = pytest.importorskip("ConfigSpace")
    from propulate.space.configspace import from_configspace, to_configspace

    cases = [
        (SearchSpace({"tx": (1, 64), "ty": (1, 64)}, forbidden=["tx * ty >= 1024"]), "tx \\* ty"),
        (SearchSpace({"x": (0.0, 1.0)}, constraint=lambda p: True), "constraint function"),
    ]
    for space, match in cases:
        with pytest.raises(SpaceError, match=match) as err:
            to_configspace(space)
        assert "\n" not in str(err.value)
    theirs = [
        cs.ConfigurationSpace({"n": cs.Float("n", (-3.0, 3.0), distribution=cs.Normal(0.0, 1.0))}),
        cs.ConfigurationSpace({"k": [1, 2, 4]}),
        cs.ConfigurationSpace({"o": cs.OrdinalHyperparameter("o", ["a", "b"])}),
    ]
    a, b = cs.Categorical("a", ["x", "y"]), cs.Integer("b", (1, 4))
    c = cs.Float("c", (0.0, 1.0))
    orc = cs.ConfigurationSpace()
    orc.add([a, b, c])
    orc.add(cs.OrConjunction(cs.EqualsCondition(c, a, "x"), cs.EqualsCondition(c, b, 2)))
    theirs.append(orc)
    for space in theirs:
        with pytest.raises(SpaceError) as err:
            from_configspace(space)
        assert "\n" not in str(err.value) and "express" in str(err.value)


def test_the_space_command_converts_both_ways(tmp_path: Path, capsys) -> None:
    pytest.importorskip("ConfigSpace")
    assert main(["space", str(SHIPPED), "--to-configspace", str(tmp_path / "cs.json")]) == 0
    assert json.loads((tmp_path / "cs.json").read_text())["conditions"]
    out = tmp_path / "back.yaml"
    assert main(["space", str(tmp_path / "cs.json"), "--from-configspace", "--out", str(out)]) == 0
    _same(SearchSpace.from_yaml(out), SearchSpace.from_yaml(SHIPPED))
    capsys.readouterr()
    assert main(["space", str(SHIPPED)]) == 0
    assert "momentum: " in capsys.readouterr().out


def test_the_shipped_objective_trains_with_every_optimizer_and_schedule() -> None:
    pytest.importorskip("sklearn")
    from propulate.problems.digits_optimizers import digits_optimizers, learning_rate

    space = SearchSpace.from_yaml(SHIPPED)
    rng = np.random.default_rng(1)
    seen = set()
    while len(seen) < 16:
        p = space.sample(rng)
        key = (p["optimizer"], p["schedule"])
        if key in seen:
            continue
        seen.add(key)
        curve = list(digits_optimizers({**p, "learning_rate": 0.01}, epochs=2))
        assert 1 <= len(curve) <= 2 and all(math.isfinite(v) for v in curve)
    good = {
        "optimizer": "adam",
        "learning_rate": 0.01,
        "batch_size": 64,
        "width": 32,
        "beta1": 0.9,
        "beta2": 0.999,
        "eps": 1e-8,
        "schedule": "constant",
    }
    curve = list(digits_optimizers(good, epochs=5))
    assert curve[-1] < 0.3 < curve[0] * 2  # it learns (ln 10 = 2.3 is a uniform guess)
    sched = {"learning_rate": 1.0, "schedule": "step", "step_size": 2, "gamma": 0.5}
    assert [learning_rate(sched, e, 6) for e in range(4)] == [1.0, 1.0, 0.5, 0.5]


def test_the_campaign_config_validates_and_keeps_the_conditions() -> None:
    utils = pytest.importorskip("snakemake.utils")
    from propulate.campaign import Campaign

    cfg = yaml.safe_load((REPO / "config" / "digits_optimizers.yaml").read_text())
    utils.validate(cfg, str(REPO / "workflow" / "schemas" / "config.schema.yaml"))
    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        campaign = Campaign.from_config(cfg)
    finally:
        os.chdir(cwd)
    space = SearchSpace(campaign.parameters)
    assert space.conditions == SearchSpace.from_yaml(SHIPPED).conditions


def test_records_hold_inactive_parameters_as_missing(tmp_path: Path) -> None:
    from propulate.compat.history import EvaluationLog, read_history

    space = SearchSpace.from_dict(MIXED)
    configs = [space.sample(np.random.default_rng(i)) for i in range(12)]
    with EvaluationLog(tmp_path, rank=0, meta={"run": "r"}) as log:
        for i, p in enumerate(configs):
            log.append(p, float(i), island=0, generation=i, start=100.0 + i, seconds=0.5)
    df = read_history(tmp_path)
    assert len(df) == 12
    for (_, row), p in zip(df.iterrows(), configs, strict=True):
        for name in space.names:
            if name in p:
                assert row[name] == p[name]
            else:
                assert row[name] is None or (isinstance(row[name], float) and math.isnan(row[name]))


def test_models_see_inactive_parameters_as_a_fixed_out_of_range_value() -> None:
    from propulate.space.search import INACTIVE

    space = SearchSpace.from_dict(MIXED)
    X = space.encode_many([space.sample(np.random.default_rng(i)) for i in range(50)])
    inactive = X == INACTIVE
    assert inactive.any() and ((X >= 0) | inactive).all() and (X <= 1).all()
    # any unit-cube point an acquisition optimiser returns decodes to a valid configuration
    for u in np.random.default_rng(0).random((200, space.dim)):
        p = space.decode(u)
        assert space.in_bounds(p)
        assert np.array_equal(space.encode(p) == INACTIVE, [n not in p for n in space.names])


def test_an_lcm_fits_a_conditional_space_and_transfer_predictions_are_valid() -> None:
    pytest.importorskip("GPy")
    from propulate.models.sampling import TaskData, build_lcm
    from propulate.models.transfer import repair

    space = SearchSpace.from_dict({"parameters": MIXED["parameters"]})
    rng = np.random.default_rng(0)

    def loss(p: dict) -> float:
        return (p["unroll"] - 4) ** 2 / 10 + p.get("extra", 0.5) + (p["algo"] == "naive")

    tasks = []
    for i in range(2):
        data = TaskData(f"t{i}", {"m": float(i)})
        for _ in range(25):
            p = space.sample(rng)
            data.params.append(p)
            data.losses.append(loss(p) + i)
        tasks.append(data)
    model = build_lcm(tasks, space, latent=1, max_points=None).fit(restarts=1, seed=0)
    X = space.encode_many(tasks[0].params)
    mean, var = model.predict(X, 0)
    assert np.isfinite(mean).all() and (var > 0).all()
    assert np.corrcoef(mean, tasks[0].losses)[0, 1] > 0.5  # it learned from inactive rows too
    for u in (np.full(space.dim, -0.5), rng.random(space.dim), np.full(space.dim, 1.2)):
        p = repair(space, u, None, [], 0)
        assert space.in_bounds(p) and space.satisfies(p)


@pytest.mark.parametrize("method", ["propulate", "optuna"])
def test_evolve_runs_a_conditional_space_with_forbidden_clauses(
    method: str, tmp_path: Path
) -> None:
    if method == "optuna":
        pytest.importorskip("optuna")
    (tmp_path / "space.yaml").write_text(yaml.safe_dump(MIXED, sort_keys=False))
    (tmp_path / "obj.py").write_text(
        "def loss(p):\n"
        "    assert ('tx' in p) == (p['algo'] == 'blocked'), p\n"
        "    return p['unroll'] + p.get('extra', 0.0) + p.get('tx', 0) / 64\n"
    )
    args = evolve_args(
        tmp_path / "space.yaml",
        tmp_path / "run",
        "--method",
        method,
        "--max-evaluations",
        "60",
        objective="obj:loss",
    )
    proc = cli(*args, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    from propulate.compat.history import read_history

    space = SearchSpace.from_dict(MIXED)
    df = read_history(tmp_path / "run")
    assert len(df) == 60
    ok = df[df["status"] == "ok"]
    assert len(ok) > 30
    for rec in ok.to_dict("records"):
        params = {n: rec[n] for n in space.names if not _missing(rec[n])}
        params = space.canonical(params)
        assert space.in_bounds(params) and space.satisfies(params), params
    assert (df.loc[df["status"] != "ok", "error"] == "constraint violated").all()
    bad = cli(
        *evolve_args(
            tmp_path / "space.yaml",
            tmp_path / "r2",
            "--propagator",
            "pso",
            "--max-evaluations",
            "5",
            objective="obj:loss",
        ),
        cwd=tmp_path,
    )
    assert bad.returncode == 2 and "conditional parameter 'tx'" in one_error_line(bad.stderr)


def _missing(v: object) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def test_a_campaign_carries_forbidden_clauses_into_its_campaign_file(tmp_path: Path) -> None:
    from propulate.campaign import Campaign
    from propulate.campaign.checks import CampaignError
    from propulate.campaign.files import read_campaign_file, write_campaign_file

    cfg = {
        "name": "tiles",
        "objective": "propulate.problems.benchmark:sphere",
        "parameters": MIXED["parameters"],
        "forbidden": MIXED["forbidden"],
        "evolve": {"max_evaluations": 10},
    }
    campaign = Campaign.from_config(cfg)
    path = write_campaign_file(tmp_path / "campaign.yaml", campaign.spec())
    space, _ = read_campaign_file(path)
    assert space.to_dict() == SearchSpace.from_dict(MIXED).to_dict()
    (tmp_path / "space.yaml").write_text(yaml.safe_dump(MIXED))
    cwd = Path.cwd()
    os.chdir(tmp_path)
    try:
        from_file = Campaign.from_config({**cfg, "parameters": "space.yaml", "forbidden": None})
        assert from_file.forbidden == tuple(MIXED["forbidden"])
        with pytest.raises(CampaignError, match="forbidden"):
            Campaign.from_config({**cfg, "parameters": "space.yaml"})
    finally:
        os.chdir(cwd)
    with pytest.raises(CampaignError, match="forbidden.*unknown parameter 'nope'"):
        Campaign.from_config({**cfg, "forbidden": ["nope > 1"]})
