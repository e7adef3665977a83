"""The campaign module without Snakemake: config errors, task ids, suites, settings, options,
paths, files, and resuming a run directory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from propulate.campaign import Campaign, CampaignError
from propulate.campaign import options as opts
from propulate.campaign.__main__ import main as campaign_main
from propulate.campaign.files import (
    read_campaign_file,
    suite_spec,
    write_campaign_file,
    write_task_file,
)
from propulate.campaign.resume import JOB_FILE, prepare_run
from propulate.problems.benchmark import FUNCTIONS
from propulate.settings import (
    EvolveSettings,
    LCMSettings,
    MLASettings,
    RevalidateSettings,
    TransferSettings,
    defaults,
)
from propulate.space import load_callable
from propulate.user_objective import read_task
from tests.campaign_utils import TINY, config

REPO = Path(__file__).resolve().parents[1]
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"


# ------------------------------------------------------------------------ resolution
def test_task_ids_paths_and_stages() -> None:
    c = Campaign.from_config(config())
    assert c.training_ids == ["train00", "train01", "mid"]
    assert c.new_ids == ["t_new"]
    assert c.task_ids == ["train00", "train01", "mid", "t_new"]
    assert c.root == "results/tiny"
    assert c.task_file("mid") == "results/tiny/tasks/mid.json"
    assert c.space_file("mid") == "results/tiny/campaign.yaml"
    assert c.evolve_runs == [f"results/tiny/runs/{t}/propulate-s1" for t in c.training_ids]
    assert c.transfer_runs == [
        "results/tiny/transfer/t_new/tla1",
        "results/tiny/transfer/t_new/tla2",
    ]
    assert not c.mla_on and c.transfer_on
    assert c.spec() == {
        "name": "tiny",
        "objective": "propulate.problems.demo:demo_loss",
        "parameters": {"x": {"high": 1.0, "low": 0.0, "type": "float"}},
        "task_space": {"t": {"high": 10.0, "low": 0.0, "type": "float"}},
    }


def test_two_campaigns_never_share_a_path() -> None:
    a = Campaign.from_config(config())
    b = Campaign.from_config(config(name="other"))
    paths_a = set(a.all_runs) | {a.task_file(t) for t in a.task_ids} | {a.path("report.html")}
    paths_b = set(b.all_runs) | {b.task_file(t) for t in b.task_ids} | {b.path("report.html")}
    assert not paths_a & paths_b


def test_taskless_campaign_has_one_run_id_and_no_model_stages() -> None:
    c = Campaign.from_config(config(task_space=None, training_tasks=None, new_tasks=None, mla={}))
    assert c.taskless and c.training_ids == ["tiny"] and c.task_ids == []
    assert not c.mla_on and not c.transfer_on and c.transfer_runs == []


def test_mla_stage_runs_when_its_section_is_given() -> None:
    assert Campaign.from_config(config()).mla is None
    c = Campaign.from_config(config(mla={}))
    assert c.mla_on and c.mla == MLASettings()
    assert c.all_runs[-3] == "results/tiny/mla"


@pytest.mark.parametrize("function", sorted(FUNCTIONS))
def test_every_registered_benchmark_function_can_be_a_suite(function: str) -> None:
    c = Campaign.from_config(
        {"name": "bench", "suite": [function], "evolve": {"max_evaluations": 10}}
    )
    assert c.training_ids == [function] and c.taskless
    assert c.space_file(function) == f"results/bench/spaces/{function}.yaml"
    loss = load_callable(c.objective_of(function))
    assert loss is FUNCTIONS[function].function
    spec = suite_spec(function)
    assert list(spec["parameters"]) == list(FUNCTIONS[function].limits)


# ------------------------------------------------------------------------ config errors
def _error(cfg: dict[str, Any]) -> CampaignError:
    with pytest.raises(CampaignError) as info:
        Campaign.from_config(cfg)
    return info.value


@pytest.mark.parametrize(
    ("changes", "key", "text"),
    [
        ({"objective": "propulate.problems.no_such_module:loss"}, "objective", "no_such_module"),
        ({"objective": "propulate.problems.demo:nothing"}, "objective", "nothing"),
        ({"constraint": "propulate.problems.demo:nothing"}, "constraint", "nothing"),
        (
            {"parameters": {"x": {"type": "float", "low": 1.0, "high": 0.0}}},
            "parameters",
            "inverted",
        ),
        ({"parameters": {}}, "parameters", "empty"),
        ({"task_space": {"t": {"type": "int", "low": 5, "high": 2}}}, "task_space", "empty"),
        ({"new_tasks": {"t_new": {"t": 42.0}}}, "new_tasks.t_new", "outside"),
        ({"new_tasks": {"t_new": {"u": 1.0}}}, "new_tasks.t_new", "unknown ['u']"),
        ({"new_tasks": {"mid": {"t": 1.0}}}, "training_tasks", "used twice"),
        ({"training_tasks": {}}, "training_tasks", "latin_hypercube"),
        ({"task_space": None}, "training_tasks.listed.mid", "task_space"),
        ({"objective": None}, "objective", "suite"),
        ({"evolve": {"seeds": [1]}}, "evolve", "stopping criterion"),
        ({"evolve": {"max_evaluations": 5, "popsize": 4}}, "evolve", "popsize"),
        ({"lcm": {"latents": 2}}, "lcm", "latents"),
        ({"evaluation_cores": 0}, "evaluation_cores", "positive integer"),
        ({"evaluation_cores": True}, "evaluation_cores", "positive integer"),
    ],
)
def test_config_errors_name_their_key(changes: dict[str, Any], key: str, text: str) -> None:
    err = _error(config(**changes))
    assert err.key == key
    assert str(err).startswith(f"config key '{key}': ")
    assert text in str(err)


def test_lhs_without_task_space() -> None:
    cfg = config(task_space=None, new_tasks=None)
    cfg["training_tasks"] = {"latin_hypercube": {"n": 2}}
    assert _error(cfg).key == "training_tasks.latin_hypercube"


def test_unknown_suite_function_lists_every_registered_name() -> None:
    err = _error({"name": "b", "suite": ["sphere", "nope"], "evolve": {"max_evaluations": 5}})
    assert err.key == "suite" and "'nope'" in str(err)
    assert str(err).endswith(", ".join(FUNCTIONS))
    assert len(FUNCTIONS) == 14


@pytest.mark.parametrize("key", ["objective", "parameters", "task_space"])
def test_suite_brings_its_own_objectives_and_spaces(key: str) -> None:
    cfg = {"name": "b", "suite": ["sphere"], "evolve": {"max_evaluations": 5}, key: TINY[key]}
    err = _error(cfg)
    assert err.key == "suite" and key in str(err)


def test_suite_has_no_tasks() -> None:
    cfg = {
        "name": "b",
        "suite": ["sphere"],
        "evolve": {"max_evaluations": 5},
        "new_tasks": {"a": {"t": 1.0}},
    }
    assert "new_tasks" in str(_error(cfg))


# ------------------------------------------------------------------------ defaults and options
SECTIONS = {
    "evolve": EvolveSettings,
    "lcm": LCMSettings,
    "mla": MLASettings,
    "transfer": TransferSettings,
    "revalidate": RevalidateSettings,
}


def test_campaign_settings_default_to_the_dataclasses() -> None:
    c = Campaign.from_config(config(mla={}))
    assert c.lcm == LCMSettings() and c.transfer == TransferSettings() and c.mla == MLASettings()
    assert c.evolve == EvolveSettings(max_evaluations=16, time_limit=20, pop_size=4)
    assert c.methods == ("propulate",)


def test_evolve_options() -> None:
    evolve = {
        "methods": ["propulate", "random"],
        "max_evaluations": 16,
        "sigma_factor": 0.02,
        "pollination": False,
    }
    c = Campaign.from_config(config(evolve=evolve))
    propulate = opts.evolve_options(c, "propulate")
    random = opts.evolve_options(c, "random")
    assert propulate.startswith("--max-evaluations 16 --islands 1 --pop-size 8 ")
    assert "--sigma-factor 0.02" in propulate and "--sigma-factor" not in random
    assert "--crossover-prob" not in random and "--migration" in propulate
    # a baseline gets only the settings it uses: the evolve CLI refuses the others
    for flag in ("--islands", "--pop-size", "--migration"):
        assert flag in propulate and flag not in random
    for options in (propulate, random):  # set only when the config sets them
        assert "--time-limit" not in options and "--eval-timeout" not in options
        assert "--failure-limit" not in options
    evolve.update(eval_timeout=2.5, failure_limit=3)
    c = Campaign.from_config(config(evolve=evolve))
    assert "--eval-timeout 2.5" in opts.evolve_options(c, "random")
    assert opts.evolve_options(c, "random").endswith("--failure-limit 3")
    assert "--eval-timeout" not in opts.evolve_options(c, "optuna")
    assert opts.evolve_runtime(c) == opts.DEFAULT_RUNTIME
    assert opts.evolve_runtime(Campaign.from_config(config())) == 10
    assert "--initial" not in propulate  # no default
    # with a default, the island model starts from it; random search stays random
    c = Campaign.from_config(config(evolve=evolve, default={"x": 0.25}))
    assert opts.evolve_options(c, "propulate").endswith("""--initial '{"x": 0.25}'""")
    assert "--initial" not in opts.evolve_options(c, "random")


def test_model_and_transfer_options() -> None:
    c = Campaign.from_config(
        config(
            lcm={"latent": 3, "log_output": True},
            mla={"budget": 7, "local_radius": 0.1},
            transfer={"measure_tla1": False},
        )
    )
    assert opts.lcm_options(c) == "--latent 3 --restarts 2 --max-points 50 --log-output --seed 0"
    assert opts.mla_options(c) == (
        "--budget 7 --initial 10 --latent 3 --restarts 2 --max-points 50 --log-output "
        "--share 0 --local-every 2 --local-radius 0.1 --model auto --seed 0"
    )
    assert opts.transfer_options(c, "tla1") == "--basin 0.15 --transfer-model auto --seed 0"
    assert opts.transfer_options(c, "tla2") == (
        "--objective propulate.problems.demo:demo_loss --budget 5 --share 2 --basin 0.0 "
        "--transfer-model auto --seed 0"
    )


# ------------------------------------------------------------------------ files
def test_campaign_and_task_files_round_trip(tmp_path: Path) -> None:
    c = Campaign.from_config(config(constraint=None))
    path = write_campaign_file(tmp_path / "c" / "campaign.yaml", c.spec())
    space, task_space = read_campaign_file(path)
    assert space.names == ("x",) and task_space is not None and task_space.names == ("t",)
    task = write_task_file(tmp_path / "tasks" / "mid.json", "mid", {"t": 5.0})
    assert read_task(task) == {"id": "mid", "task": {"t": 5.0}}


def test_report_path_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump(config()))
    assert campaign_main(["report-path", str(cfg)]) == 0
    assert capsys.readouterr().out.strip() == "results/tiny/report.html"
    cfg.write_text(yaml.safe_dump(config(parameters={})))
    assert campaign_main(["report-path", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "config key 'parameters'" in err


def test_shipped_configs_resolve() -> None:
    for name in ("config", "demo", "benchmark"):
        cfg = yaml.safe_load((REPO / "config" / f"{name}.yaml").read_text())
        c = Campaign.from_config(cfg)
        assert c.root == f"results/{cfg['name']}"


# ------------------------------------------------------------------------ resuming
def test_prepare_run_resumes_same_settings_and_clears_changed_ones(tmp_path: Path) -> None:
    space = tmp_path / "space.yaml"
    space.write_text("parameters: {x: {type: float, low: 0, high: 1}}\n")
    run = tmp_path / "run"
    assert prepare_run(run, "a --max-evaluations 10", [space]) == "new"
    (run / "evals").mkdir()
    record = run / "evals" / "s1-r0.jsonl"
    record.write_text('{"loss": 1.0}\n')
    assert prepare_run(run, "a --max-evaluations 10", [space]) == "resume"
    assert record.read_text() == '{"loss": 1.0}\n'
    assert prepare_run(run, "a --max-evaluations 20", [space]) == "restart"
    assert not record.exists() and json.loads((run / JOB_FILE).read_text())["settings"].endswith(
        "20"
    )
    record.parent.mkdir()
    record.write_text("{}\n")
    space.write_text("parameters: {x: {type: float, low: 0, high: 2}}\n")
    assert prepare_run(run, "a --max-evaluations 20", [space]) == "restart"
    assert not record.exists()


def test_prepare_run_clears_a_directory_of_unknown_origin(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "summary.json").write_text("{}")
    assert prepare_run(run, "a") == "restart"
    assert sorted(p.name for p in run.iterdir()) == [JOB_FILE]


# ------------------------------------------------------------------------ the schema
@pytest.mark.parametrize(
    ("section", "values", "key"),
    [
        ("evolve", {"max_evaluations": "many"}, "many"),
        ("evolve", {"max_evaluations": 5, "popsize": 4}, "popsize"),
        ("evolve", {"max_evaluations": 5, "eval_timeout": 0}, "eval_timeout"),
        ("evolve", {"max_evaluations": 5, "failure_limit": -1}, "failure_limit"),
        ("mla", {"budget": 0}, "budget"),
    ],
)
def test_schema_rejects(section: str, values: dict[str, Any], key: str) -> None:
    utils = pytest.importorskip("snakemake.utils")
    cfg = config(**{section: values})
    with pytest.raises(Exception, match=key):
        utils.validate(cfg, str(SCHEMA))


def test_schema_fills_the_settings_defaults() -> None:
    utils = pytest.importorskip("snakemake.utils")
    cfg = config()
    utils.validate(cfg, str(SCHEMA))
    assert cfg["evolve"]["failure_limit"] == EvolveSettings.failure_limit
    assert cfg["lcm"] == defaults(LCMSettings) and "mla" not in cfg
    assert Campaign.from_config(cfg).evolve == Campaign.from_config(config()).evolve


# ------------------------------------------------------------------------ schema errors
def _schema_error(cfg: dict[str, Any]) -> str:
    from propulate.campaign.schema import check_schema

    with pytest.raises(CampaignError) as info:
        check_schema(cfg)
    return str(info.value)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda c: c.update(paramters=c.pop("parameters")),
            "config key 'paramters': unknown key (did you mean 'parameters'?)",
        ),
        (
            lambda c: c["evolve"].update(max_evaluation=c["evolve"].pop("max_evaluations")),
            "config key 'evolve.max_evaluation': unknown key (did you mean 'max_evaluations'?)",
        ),
        (
            lambda c: c["evolve"].update(max_evaluations=-5),
            "config key 'evolve.max_evaluations': -5 is less than the minimum of 1",
        ),
        (
            lambda c: c["parameters"]["x"].update(lgo=True),
            "config key 'parameters.x.lgo': unknown key (did you mean 'log'?)",
        ),
        (
            lambda c: c["evolve"].update(seeds=[1, "two"]),
            "config key 'evolve.seeds[1]': 'two' is not of type 'integer'",
        ),
        (lambda c: c.pop("name"), "config key 'name': missing (required)"),
    ],
)
def test_schema_errors_are_one_line_naming_the_key_path(change: Any, message: str) -> None:
    cfg = config()
    change(cfg)
    assert _schema_error(cfg) == message


def test_setup_and_report_path_stop_on_a_schema_error(tmp_path: Path, capsys) -> None:
    cfg = config()
    cfg["setup"] = [f"touch {tmp_path / 'ran'}"]
    cfg["evolve"]["max_evaluation"] = cfg["evolve"].pop("max_evaluations")
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cfg))
    for command in ("setup", "report-path"):
        assert campaign_main([command, str(path)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert err == [
            f"error: {path}: config key 'evolve.max_evaluation': unknown key "
            "(did you mean 'max_evaluations'?)"
        ]
    assert not (tmp_path / "ran").exists(), "no setup command may run on a broken config"


def test_next_steps_name_this_campaigns_commands(capsys) -> None:
    assert campaign_main(["next-steps", str(REPO / "config" / "config.yaml")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("next:\n  source .venv/bin/activate")
    assert "propulate status results/lapack_qr" in out
    assert "propulate suggest --campaign results/lapack_qr --task m=850,n=850" in out
    assert "make run CONFIG=config/demo.yaml" in out
    makefile = (REPO / "Makefile").read_text()
    assert "python -m propulate.campaign next-steps $(CONFIG)" in makefile


def test_the_readme_says_to_activate_the_environment() -> None:
    readme = (REPO / "README.md").read_text()
    first = readme.index("source .venv/bin/activate")
    assert first < readme.index("## Campaigns")  # before the first command that needs it
