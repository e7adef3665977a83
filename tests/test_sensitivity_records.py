"""Parameter importance from run records (Optuna's evaluators); ``sensitivity --runs``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from propulate.cli import main
from propulate.runs.files import write_json
from propulate.runs.log import EvaluationLog
from propulate.runs.metadata import RunMetadata, write_run_metadata
from propulate.sensitivity.records import importance, read_records, records_importance
from propulate.settings import SensitivitySettings
from propulate.space import SearchSpace

SPACE = SearchSpace(
    {
        "lr": {"type": "float", "low": 1e-4, "high": 1.0, "log": True},
        "width": {"type": "int", "low": 1, "high": 64},
        "act": {"type": "categorical", "choices": ["relu", "tanh"]},
    }
)


def loss(p: dict) -> float:
    """``log10(lr)`` matters most, ``width`` a little, ``act`` not at all."""
    return 1.0 + (np.log10(p["lr"]) + 2.0) ** 2 + 0.005 * p["width"]


def write_run(
    directory: Path, task_id: str, seed: int, n: int, method: str = "propulate", space: bool = True
) -> None:
    """A run directory: its records (with one failure and one pruned), task.json, run.json."""
    log = EvaluationLog(directory, 0, meta={"task": task_id, "run": f"s{seed}", "method": method})
    for g, p in enumerate(SPACE.latin_hypercube(n, seed=seed)):
        log.append(p, loss(p), island=0, generation=g, start=0.0, seconds=0.1)
    p = SPACE.sample(np.random.default_rng(seed))
    log.append(p, None, island=0, generation=n, start=0.0, seconds=0.1, error="boom")
    log.append(p, None, island=0, generation=n + 1, start=0.0, seconds=0.1, status="pruned")
    log.close()
    write_json(directory / "task.json", {"id": task_id, "task": {"m": seed}})
    if space:
        meta = RunMetadata("m:f", SPACE.to_dict(), method, f"s{seed}", seed, None)
        write_run_metadata(directory, meta)


@pytest.mark.slow
def test_importance_ranks_the_parameters_and_handles_degenerate_data() -> None:
    params = SPACE.latin_hypercube(60, seed=3)
    losses = [loss(p) for p in params]
    for evaluator in ("ped-anova", "mdi"):
        got = importance(SPACE, params, losses, SensitivitySettings(evaluator=evaluator))
        assert list(got) == ["lr", "width", "act"]  # space order
        assert max(got, key=got.get) == "lr" and sum(got.values()) == pytest.approx(1.0)
    fanova = importance(SPACE, params, losses)  # the default evaluator
    assert fanova["width"] > fanova["act"]
    # the same trials in a native Optuna study give Optuna's own numbers (seeded: exactly)
    import optuna

    from propulate.baselines.optuna_study import distributions

    study = optuna.create_study()
    dists = distributions(SPACE)
    for p, v in zip(params, losses, strict=True):
        study.add_trial(optuna.trial.create_trial(params=p, distributions=dists, value=v))
    native = optuna.importance.get_param_importances(
        study, evaluator=optuna.importance.FanovaImportanceEvaluator(seed=0)
    )
    assert fanova == pytest.approx(dict(native), rel=1e-12)
    assert importance(SPACE, params, [2.0] * 60) == {"lr": 0.0, "width": 0.0, "act": 0.0}
    with pytest.raises(ValueError, match="at least 8"):
        importance(SPACE, params[:5], losses[:5])
    with pytest.raises(ValueError, match="positive"):
        importance(SPACE, params, [v - 2.0 for v in losses], log_loss=True)


def test_records_of_a_task_are_pooled_over_runs_and_methods(tmp_path: Path) -> None:
    write_run(tmp_path / "a" / "propulate-s1", "a", 1, 30)
    write_run(tmp_path / "a" / "random-s2", "a", 2, 20, method="random")
    write_run(tmp_path / "b" / "propulate-s1", "b", 3, 25)
    (data_a, data_b) = read_records([tmp_path / "a", tmp_path / "b" / "propulate-s1"])
    assert (data_a.id, len(data_a.losses), data_a.skipped) == ("a", 50, 4)
    assert data_a.methods == ["propulate", "random"] and len(data_a.runs) == 2
    assert (data_b.id, len(data_b.losses), data_b.task) == ("b", 25, {"m": 3})
    mdi = SensitivitySettings(evaluator="mdi")
    a, b = records_importance([tmp_path / "a", tmp_path / "b"], settings=mdi)
    assert a.ranking()[0] == "lr" and b.ranking()[0] == "lr"
    assert (a.evaluations, a.evaluator, a.target) == (50, "mdi", "loss")

    # a run without run.json needs the space
    write_run(tmp_path / "c" / "mla", "c", 4, 12, space=False)
    with pytest.raises(ValueError, match="--space"):
        read_records([tmp_path / "c"])
    assert read_records([tmp_path / "c"], SPACE)[0].id == "c"


def test_sensitivity_command_with_runs(tmp_path: Path, capsys) -> None:
    write_run(tmp_path / "a" / "propulate-s1", "a", 1, 30)
    write_run(tmp_path / "b" / "mla", "b", 2, 20, space=False)
    space_file = tmp_path / "space.yaml"
    space_file.write_text(json.dumps(SPACE.to_dict()))
    runs = [str(tmp_path / "a"), str(tmp_path / "b" / "mla")]
    assert main(["sensitivity", "--runs", *runs, "--space", str(space_file)]) == 0
    out = capsys.readouterr().out  # the default: fANOVA
    assert "fanova" in out and "importance" in out and out.count("lr") == 2
    args = ["sensitivity", "--runs", *runs, "--space", str(space_file), "--log-loss"]
    assert main([*args, "--evaluator", "ped-anova", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [t["task_id"] for t in data["tasks"]] == ["a", "b"]
    assert data["tasks"][0]["target"] == "log(loss)" and data["tasks"][0]["ranking"][0] == "lr"
    assert main(["sensitivity", "--runs", *runs]) == 2  # mla has no run.json: --space
    assert "--space" in capsys.readouterr().err
    assert main(["sensitivity", "--runs", str(tmp_path / "nothing")]) == 2
    assert main(["sensitivity", "--runs", str(tmp_path)]) == 2  # holds no run directory
    assert main(["sensitivity", "--runs", *runs, "--evaluator", "shap"]) == 2
