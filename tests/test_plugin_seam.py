"""The plug-in seam: a propagator or pruner is one module plus one registry entry, and every
place that names them -- specs, the campaign's checks, the command line, the config schema, the
docs' tables, the contract checks and the engine -- picks a new entry up with nothing else to
edit (``propulate.plugins``)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from propulate.campaign import Campaign
from propulate.campaign import options as opts
from propulate.campaign.checks import CampaignError
from propulate.campaign.schema import check_schema
from propulate.cli import UsageError, build_parser
from propulate.cli.evolve_args import evolve_settings
from propulate.plugins.docs import plugins_table
from propulate.plugins.facts import RunFacts
from propulate.plugins.resolve import PluginError, resolve
from propulate.propagators.registry import PROPAGATORS, build_propagator, propagator_spec
from propulate.pruners.registry import PRUNERS, build_pruner, pruner_text
from propulate.settings import EvolveSettings
from propulate.space import Float, SearchSpace
from propulate.testing import check_propagator
from tests.docs_utils import run_guide
from tests.plugin_utils import THRESHOLD, TOY, Threshold, Toy
from tests.workflow_utils import REPO, copy_workflow, snakemake, write_config

SPACE = SearchSpace({"x": Float(-2.0, 2.0), "y": Float(0.0, 1.0)})
CONFIG: dict[str, Any] = {
    "name": "seam",
    "objective": "propulate.problems.demo:demo_loss",
    "parameters": {"x": {"type": "float", "low": 0.0, "high": 1.0}},
    "evolve": {"max_evaluations": 10},
}


@pytest.fixture
def toys() -> Iterator[None]:
    """The toy propagator and pruner registered for one test."""
    PROPAGATORS.register(TOY)
    PRUNERS.register(THRESHOLD)
    try:
        yield
    finally:
        PROPAGATORS.unregister("toy")
        PRUNERS.unregister("threshold")


def _campaign(**evolve: Any) -> Campaign:
    return Campaign.from_config({**CONFIG, "evolve": {**CONFIG["evolve"], **evolve}})


# ------------------------------------------------------------------ a new entry everywhere
def test_a_registered_toy_is_a_spec_with_typed_options(toys: None) -> None:
    spec = PROPAGATORS.spec("toy:step=0.25")
    assert spec.options.step == 0.25 and spec.text() == "toy:step=0.25"
    assert PROPAGATORS.spec({"type": "toy", "step": 0.25}) == spec
    with pytest.raises(ValueError, match="propagator toy option step: step must be >= 0"):
        PROPAGATORS.spec("toy:step=-1")
    with pytest.raises(ValueError, match="unknown option 'stp'; known: step"):
        PROPAGATORS.spec("toy:stp=1")
    built = build_propagator(spec, SPACE, random.Random(0))
    assert isinstance(built, Toy) and built.step == 0.25
    pruner = build_pruner("threshold:threshold=2", SPACE)
    assert isinstance(pruner, Threshold) and pruner.should_stop([[0, 3.0]])
    assert pruner_text({"type": "threshold", "threshold": 2}) == "threshold:threshold=2"


def test_the_campaign_passes_a_toy_to_its_jobs(toys: None) -> None:
    campaign = _campaign(propagator={"type": "toy", "step": 0.5}, pruner="threshold")
    options = opts.evolve_options(campaign, "propulate")
    assert "--propagator toy:step=0.5" in options and "--pruner threshold" in options


def test_the_schema_and_the_command_line_name_a_toy(toys: None) -> None:
    check_schema({**CONFIG, "evolve": {"propagator": {"type": "toy"}, "pruner": "threshold"}})
    with pytest.raises(CampaignError, match="evolve.propagator.*'nosuch' is not one of: .*toy"):
        check_schema({**CONFIG, "evolve": {"propagator": "nosuch"}})
    evolve = build_parser("evolve")._subparsers._group_actions[0].choices["evolve"]  # type: ignore[union-attr]
    help_text = evolve.format_help()
    assert "toy" in help_text and "threshold" in help_text


def test_the_docs_table_lists_a_toy_with_its_options(toys: None) -> None:
    table = plugins_table()
    assert "| `toy` | a toy hill climber | `step=0.1`: how far a child moves" in table
    assert "| `threshold` |" in table


def test_a_toy_passes_the_contract_checks(toys: None) -> None:
    check_propagator(build_propagator("toy", SPACE, random.Random(1)))


def test_the_engine_runs_a_toy(toys: None, tmp_path: Path) -> None:
    from mpi4py import MPI

    from propulate.engine.run import run_engine
    from propulate.runs.job import Job

    settings = EvolveSettings(propagator="toy:step=0.2", max_evaluations=80, seed=3)
    job = Job(lambda p: (p["x"] - 1) ** 2 + p["y"], SPACE, None, tmp_path, settings, {})
    result = run_engine(job, MPI.COMM_SELF)
    assert result.session_evaluations == 80 and result.best_loss < 0.05


def test_the_extending_page_worked_examples_run(tmp_path: Path) -> None:
    """``docs/extending.md``'s worked examples: a propagator and a pruner, one module and one
    entry each, checked by the contracts and run by the engine."""
    outputs = run_guide(REPO / "docs" / "extending.md", tmp_path)
    assert "best loss" in outputs[0] and outputs[1].strip() == "True"


# ------------------------------------------------------------------ refused before any job
@pytest.mark.parametrize(
    ("evolve", "key", "says"),
    [
        ({"propagator": "nosuch"}, "evolve.propagator", "unknown propagator 'nosuch'"),
        ({"propagator": "ga:pop_size=1"}, "evolve.propagator", "pop_size must be >= 2"),
        ({"portfolio": "cma,nosuch"}, "evolve.portfolio", "unknown propagator 'nosuch'"),
        ({"propagator": "portfolio:plan=cma+portfolio"}, "evolve.propagator", "'portfolio'"),
        ({"pruner": {"type": "asha", "eta": 1}}, "evolve.pruner", "eta must be >= 2"),
        ({"objectives": "a:min,b:min", "propagator": "cma"}, "evolve.objectives", "cma"),
    ],
)
def test_the_campaign_refuses_a_bad_spec_in_one_line(evolve: dict, key: str, says: str) -> None:
    with pytest.raises(CampaignError, match=says) as caught:
        _campaign(**evolve)
    assert caught.value.key == key and "\n" not in str(caught.value)


def test_snakemake_dry_run_refuses_an_unknown_propagator(tmp_path: Path) -> None:
    work = copy_workflow(tmp_path / "w")
    name = write_config(work, {**CONFIG, "evolve": {**CONFIG["evolve"], "propagator": "nosuch"}})
    out = snakemake(work, "-n", "--configfile", name, timeout=120)
    assert out.returncode != 0
    assert "'nosuch' is not one of: auto, ga, cma" in out.stdout, out.stdout[-2000:]


def test_the_command_line_refuses_a_bad_spec_naming_the_option() -> None:
    evolve = build_parser("evolve")
    for argv, says in (
        (["--propagator", "cma:sigma0=0"], "--propagator cma:sigma0=0: propagator cma option"),
        (["--pruner", "median:startup=x"], "--pruner median:startup=x: pruner median option"),
    ):
        args = evolve.parse_args(
            ["evolve", "--objective", "m:f", "--space", "s.yaml", "--out", "o"]
            + ["--max-evaluations", "5", *argv]
        )
        with pytest.raises(UsageError, match=says.replace("(", r"\(")):
            evolve_settings(args)


# ------------------------------------------------------------------ resolved once
def test_resolve_merges_the_older_settings_into_the_spec() -> None:
    plugins = resolve(EvolveSettings(pop_size=12, crossover_prob=0.5))
    assert plugins.propagator.text() == "ga:pop_size=12,crossover_prob=0.5"
    assert plugins.propagator.options.pop_size == 12
    spec = propagator_spec(EvolveSettings(propagator="ga:pop_size=6", pop_size=12))
    assert spec.options.pop_size == 6, "the spec's own option wins"
    assert propagator_spec(EvolveSettings(propagator="pso", pop_size=5)).options.particles == 5
    plan = propagator_spec(EvolveSettings(propagator="portfolio", portfolio="nm,ga"))
    assert plan.options.plan == "nm+ga"
    with pytest.raises(PluginError) as caught:
        resolve(EvolveSettings(method="optuna", pruner="static"))
    assert caught.value.key == "pruner"


def test_the_ga_options_default_to_the_settings_defaults() -> None:
    """``EvolveSettings``' breeding fields and the ``ga`` entry's options say the same."""
    defaults = EvolveSettings()
    spec = PROPAGATORS.spec("ga")
    for name in ("pop_size", "crossover_prob", "mutation_prob", "random_init_prob"):
        assert getattr(spec.options, name) == getattr(defaults, name), name


def test_run_facts_describe_the_run() -> None:
    facts = RunFacts.of(EvolveSettings(max_evaluations=10_000), SPACE, ranks=2)
    assert facts.describe() == "2 continuous parameters, 10,000 evaluations, 2 workers"
