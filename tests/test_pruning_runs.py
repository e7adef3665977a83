"""Pruned evaluations in runs: records, the failure limit, breeding, summaries, the tuning
database, the report, the command line, the campaign config and the Optuna baseline."""

from __future__ import annotations

import json
import math
import random
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from propulate import Islands, get_default_propagator
from propulate.campaign import options as opts
from propulate.campaign.checks import CampaignError
from propulate.campaign.config import Campaign
from propulate.cli import main
from propulate.compat.surrogate import StaticSurrogate
from propulate.report.collect import collect
from propulate.report.pruning import Pruning, saved_rows
from propulate.report.section import ReportInputs
from propulate.runs.log import EvaluationLog, iter_records
from propulate.runs.outcome import PRUNED, Outcome
from propulate.runs.summary import read_summary, summarize, write_summary
from propulate.space import SearchSpace
from propulate.tuningdb.ingest import read_best
from tests.campaign_utils import config
from tests.pruning_utils import StopAtSecond, level_curve

LIMITS = {"a": (0.0, 1.0), "b": (0.0, 1.0)}


#: Eight decreasing values whose level is set by the parameters.
curve_loss = level_curve(8, 2.0)


def islands(tmp: Path, **kw: Any) -> Islands:
    rng = random.Random(0)
    return Islands(
        curve_loss,
        get_default_propagator(4, LIMITS, rng=rng),
        rng,
        checkpoint_path=tmp,
        space=LIMITS,
        progress_interval=1e6,
        **kw,
    )


def test_islands_with_a_surrogate_factory_prunes_and_never_breeds_from_pruned(
    tmp_path: Path,
) -> None:
    isl = islands(tmp_path, max_evaluations=40, surrogate_factory=lambda: StaticSurrogate())
    isl.propulate()
    records = list(iter_records(tmp_path))
    pruned = [r for r in records if r["status"] == PRUNED]
    assert len(records) == 40 and len(pruned) >= 5
    for rec in pruned:  # no loss; the step it reached is its curve's last step
        assert rec["loss"] is None and rec["curve"] and rec["curve"][-1][0] < 7
        assert rec["error"] == f"stopped by the pruner at step {rec['curve'][-1][0]}"
    population = isl.worker.population
    active = list(population.active(0))
    assert active and all(ind.status == "ok" for ind in active)  # the breeding pool
    assert all(not ind.active for ind in population if ind.status == PRUNED)
    assert population.failures == 0 and isl.result().failures == 0
    best = min(r["loss"] for r in records if r["status"] == "ok")
    assert isl.result().best_loss == best


def test_the_failure_limit_ignores_pruned_evaluations(tmp_path: Path) -> None:
    isl = islands(tmp_path, max_evaluations=12, failure_limit=2, pruner=StopAtSecond())
    isl.propulate()
    result = isl.result()
    assert result.stop_reason == "budget" and result.failures == 0
    statuses = [r["status"] for r in iter_records(tmp_path)]
    assert statuses == [PRUNED] * 12
    summary = summarize(iter_records(tmp_path))
    assert summary.pruned == 12 and summary.failures == 0 and summary.best_loss is None


def write_run(directory: Path, outcomes: list[Outcome], params: list[dict[str, float]]) -> None:
    with EvaluationLog(
        directory, 0, meta={"task": "t1", "run": "seed0", "method": "propulate"}
    ) as log:
        for i, (p, out) in enumerate(zip(params, outcomes, strict=True)):
            out.start, out.seconds = 1000.0 + i, 8.0 if out.ok else 2.0
            log.record(p, out, generation=i)
    (directory / "task.json").write_text(json.dumps({"id": "t1", "task": {"m": 1}}))
    write_summary(directory, summarize(iter_records(directory)))


def test_a_pruned_value_is_never_a_best_in_summaries_or_the_tuning_database(
    tmp_path: Path,
) -> None:
    run = tmp_path / "run"
    outcomes = [
        Outcome(0.5, curve=[[s, 0.5 + 1 / (s + 1)] for s in range(8)]),
        Outcome(None, PRUNED, "stopped by the pruner at step 1", curve=[[0, 0.01], [1, 0.001]]),
    ]
    write_run(run, outcomes, [{"a": 0.2, "b": 0.2}, {"a": 0.9, "b": 0.9}])
    summary = read_summary(run)
    assert summary is not None and summary.best_loss == 0.5 and summary.pruned == 1
    row = read_best(run, SearchSpace.from_limits(LIMITS))
    assert row is not None and row.loss == 0.5 and row.params == {"a": 0.2, "b": 0.2}
    assert row.repeats == [0.5]


def test_the_report_shows_curves_and_the_compute_saved(tmp_path: Path) -> None:
    run = tmp_path / "run"
    full = [[s, 1.0 / (s + 1)] for s in range(8)]
    outcomes = [
        Outcome(0.125, curve=full),
        Outcome(None, PRUNED, "stopped", curve=full[:2]),
        Outcome(None, PRUNED, "stopped", curve=full[:4]),
    ]
    write_run(run, outcomes, [{"a": 0.1, "b": 0.1}, {"a": 0.5, "b": 0.5}, {"a": 0.7, "b": 0.7}])
    campaign = collect([run])
    table = saved_rows(campaign.searches)
    row = table.iloc[0].to_dict()
    assert (row["evaluations"], row["pruned"], row["full_steps"]) == (3, 2, 8)
    assert row["steps"] == 14 and row["steps_saved"] == 6 + 4
    assert row["seconds_saved"] == pytest.approx(2.0 / 2 * 6 + 2.0 / 4 * 4)
    assert row["saved_share"] == pytest.approx(8.0 / (12.0 + 8.0))
    content = Pruning().build(ReportInputs("c", table, campaign))
    assert content is not None and content.figures[0].png.startswith(b"\x89PNG")
    assert not content.figures[0].shown  # the page shows the interactive plot instead
    (plot,) = content.plots
    traces = json.loads(plot.figure)["data"]
    assert [t["name"] for t in traces] == ["propulate: pruned or failed", "propulate: finished"]
    assert traces[0]["x"] == [0, 1, None, 0, 1, 2, 3, None]  # two pruned curves, a gap between
    assert "pruned" in traces[0]["text"][0] and "a = " not in traces[0]["text"][0]
    assert "a = 0.5" in traces[0]["text"][1] and "a = 0.7" in traces[0]["text"][6]
    assert "Early stopping" in content.html and "pruning.txt" in content.texts
    plain = tmp_path / "plain"
    write_run(plain, [Outcome(1.0)], [{"a": 0.1, "b": 0.1}])
    assert Pruning().build(ReportInputs("c", table, collect([plain]))) is None


# ------------------------------------------------------------------ command line, config
GENERATOR_MODULE = """
def loss(params):
    level = 0.1 + params["a"] ** 2
    for epoch in range(9):
        yield level * (1 + 3.0 / (epoch + 1))
"""


@pytest.fixture
def cwd_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "curves.py").write_text(GENERATOR_MODULE)
    (tmp_path / "s.yaml").write_text("parameters:\n  a: {type: float, low: -1, high: 1}\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    sys.modules.pop("curves", None)


def evolve(out: str, *extra: str) -> int:
    return main(["evolve", "--objective", "curves:loss", "--space", "s.yaml", "--out", out, *extra])


@pytest.mark.parametrize("method", ["propulate", "random", "optuna"])
def test_evolve_with_a_pruner(cwd_module: Path, method: str) -> None:
    assert (
        evolve(
            "run",
            "--method",
            method,
            "--max-evaluations",
            "30",
            "--pruner",
            "asha:min_steps=1,eta=3",
        )
        == 0
    )
    summary = read_summary(cwd_module / "run")
    assert summary is not None and summary.evaluations == 30 and summary.failures == 0
    assert 5 <= summary.pruned < 30 and summary.best_loss is not None
    records = list(iter_records(cwd_module / "run"))
    assert all(len(r["curve"]) == 9 for r in records if r["status"] == "ok")
    if method == "optuna":
        import optuna

        from propulate.baselines.optuna_study import STUDY_NAME, journal_storage

        study = optuna.load_study(
            study_name=STUDY_NAME, storage=journal_storage(cwd_module / "run")
        )
        states = [t.state.name for t in study.get_trials(deepcopy=False)]
        assert states.count("PRUNED") == summary.pruned


def test_bad_pruner_options_are_usage_errors(
    cwd_module: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for spec, message in (
        ("hyperband", "--pruner hyperband: unknown pruner 'hyperband'"),
        ("asha:eta=x", "eta: expected a whole number"),
    ):
        assert evolve("bad", "--max-evaluations", "3", "--pruner", spec) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and message in err
    assert evolve("bad", "--method", "optuna", "--max-evaluations", "3", "--pruner", "static") == 2
    assert "no Optuna counterpart" in capsys.readouterr().err


def test_campaign_pruner_mapping_reaches_the_jobs() -> None:
    evolve_cfg = {
        "methods": ["propulate", "optuna"],
        "max_evaluations": 16,
        "pruner": {"type": "asha", "min_steps": 1, "eta": 3},
    }
    c = Campaign.from_config(config(evolve=evolve_cfg))
    assert c.evolve.pruner == "asha:min_steps=1,eta=3"
    for method in ("propulate", "optuna"):
        assert "--pruner asha:min_steps=1,eta=3" in opts.evolve_options(c, method)
    plain = Campaign.from_config(config())
    assert "--pruner" not in opts.evolve_options(plain, "propulate")
    for bad, match in (
        ({"type": "asha", "speed": 2}, "unknown option 'speed'"),
        ({"type": "static"}, "no Optuna counterpart"),
    ):
        with pytest.raises(CampaignError, match=match) as err:
            Campaign.from_config(config(evolve={**evolve_cfg, "pruner": bad}))
        assert "evolve.pruner" in str(err.value)


def test_schema_accepts_pruner_mappings_and_strings() -> None:
    utils = pytest.importorskip("snakemake.utils")
    schema = str(
        Path(__file__).resolve().parents[1] / "workflow" / "schemas" / "config.schema.yaml"
    )
    for pruner in ({"type": "asha", "eta": 3}, "median:startup=3"):
        utils.validate(config(evolve={"max_evaluations": 5, "pruner": pruner}), schema)
    from propulate.campaign import Campaign
    from propulate.campaign.checks import CampaignError
    from propulate.campaign.schema import check_schema

    for bad, says in (
        ({"type": "hyperband"}, "'hyperband' is not one of: asha, median"),
        ({"type": "asha", "eta": "three"}, "eta: expected a whole number, got 'three'"),
        ({"eta": 3}, "type"),
    ):
        cfg = config(evolve={"max_evaluations": 5, "pruner": bad})
        with pytest.raises(CampaignError, match=says) as caught:
            check_schema(cfg)  # the names, as the workflow checks them first
            Campaign.from_config(cfg)  # the options, by the registry
        assert caught.value.key.startswith("evolve.pruner")


def test_the_digits_example_trains_epoch_by_epoch() -> None:
    from propulate.problems.digits_mlp import EPOCHS, SPACE, digits_mlp

    params = {
        "learning_rate": 0.1,
        "width": 16,
        "depth": 1,
        "batch_size": 128,
        "alpha": 1e-4,
        "momentum": 0.9,
    }
    values = list(digits_mlp(params))
    assert len(values) == EPOCHS and all(math.isfinite(v) for v in values)
    assert values[-1] < 0.25 < values[0]  # it learns: from chance level toward a good model
    assert list(digits_mlp(params, epochs=3)) == values[:3]  # seeded: the same curve
    space = SearchSpace.from_limits(SPACE)
    assert space.dim == 6 and space.is_valid(params)
    diverged = list(
        digits_mlp(
            {
                **params,
                "learning_rate": 0.5,
                "momentum": 0.99,
                "alpha": 1e-6,
                "batch_size": 16,
                "width": 128,
                "depth": 3,
            },
            epochs=5,
        )
    )
    assert all(math.isfinite(v) for v in diverged)
    example = yaml.safe_load(
        (Path(__file__).resolve().parents[1] / "examples" / "digits_mlp" / "space.yaml").read_text()
    )
    assert SearchSpace.from_limits(example["parameters"]).names == space.names


def test_the_digits_campaign_is_valid() -> None:
    utils = pytest.importorskip("snakemake.utils")
    repo = Path(__file__).resolve().parents[1]
    cfg = yaml.safe_load((repo / "examples" / "digits_mlp" / "campaign.yaml").read_text())
    utils.validate(cfg, str(repo / "workflow" / "schemas" / "config.schema.yaml"))
    campaign = Campaign.from_config(cfg)
    assert campaign.evolve.pruner == "asha:min_steps=1,eta=3"
    assert campaign.evolve.propagator == "tpe"
    space = yaml.safe_load((repo / "examples" / "digits_mlp" / "space.yaml").read_text())
    assert campaign.parameters == space["parameters"]


def test_the_digits_objective_needs_no_task() -> None:
    """The example's README command runs without --task: ``epochs`` is keyword-only, so the
    objective is not taken for a ``loss(params, task)`` function."""
    from propulate.problems.digits_mlp import digits_mlp
    from propulate.user_objective.loading import bind_task

    assert bind_task(digits_mlp, None) is digits_mlp
