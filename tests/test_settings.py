"""Each setting is declared once (:mod:`propulate.settings`): the schema, the config README, the
command lines and the campaign's job options say the same, checked in both directions."""

from __future__ import annotations

import argparse
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from propulate.campaign import Campaign
from propulate.campaign import options as opts
from propulate.cli import build_parser
from propulate.settings import SECTIONS, describe, json_schema
from propulate.settings.docs import BEGIN, END, settings_table

REPO = Path(__file__).resolve().parents[1]
SCHEMA = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())

#: Keys of a config section that are not run settings (one job per list entry, job ranks).
NOT_SETTINGS = {"evolve": {"methods", "seeds", "ranks"}}

#: The commands (argv prefix) whose options hold each section's settings.
COMMANDS: dict[str, list[list[str]]] = {
    "evolve": [["evolve"]],
    "lcm": [["fit-lcm"]],
    "mla": [["mla"]],
    "transfer": [["transfer", "tla1"], ["transfer", "tla2"]],
    "revalidate": [["tuningdb", "revalidate"]],
}


def _comparable(prop: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in prop.items() if k != "description"}


@pytest.mark.parametrize("section", sorted(SECTIONS))
def test_schema_section_is_the_declarations(section: str) -> None:
    declared = {k: _comparable(v) for k, v in json_schema(SECTIONS[section]).items()}
    props = SCHEMA["properties"][section]["properties"]
    in_schema = {k: v for k, v in props.items() if k not in NOT_SETTINGS.get(section, set())}
    assert sorted(in_schema) == sorted(declared), "keys differ between schema and declarations"
    for key, prop in in_schema.items():
        assert _comparable(prop) == declared[key], f"{section}.{key}"
    assert SCHEMA["properties"][section]["additionalProperties"] is False


def test_every_settings_field_is_declared_and_config_flags_match_the_schema() -> None:
    for cls in SECTIONS.values():
        assert [f.name for f in fields(cls)] == [s.name for s in describe(cls)], cls.__name__


def test_config_readme_table_is_generated_from_the_declarations() -> None:
    text = (REPO / "config" / "README.md").read_text()
    block = text[text.index(BEGIN) + len(BEGIN) : text.index(END)].strip()
    assert block == settings_table(), "run: python -m propulate.settings --write config/README.md"
    for section, cls in SECTIONS.items():
        for item in describe(cls):
            assert (f"`{section}.{item.name}`" in block) == item.config


def _option_dests(argv: list[str]) -> dict[str, argparse.Action]:
    parser = build_parser(argv[0])
    node: argparse.ArgumentParser = parser
    for word in argv:
        sub = next(a for a in node._actions if isinstance(a, argparse._SubParsersAction))
        node = sub.choices[word]
    return {a.dest: a for a in node._actions if a.option_strings}


@pytest.mark.parametrize("section", sorted(SECTIONS))
def test_every_setting_with_an_option_is_on_its_commands_with_its_default(section: str) -> None:
    cls = SECTIONS[section]
    found: dict[str, list[argparse.Action]] = {}
    for argv in COMMANDS[section]:
        for dest, action in _option_dests(argv).items():
            found.setdefault(dest, []).append(action)
    for item in describe(cls):
        if not item.cli:
            assert item.name not in found or section == "transfer", item.name
            continue
        actions = found.get(item.name)
        assert actions, f"{section}.{item.name} has no option on {COMMANDS[section]}"
        for action in actions:
            assert item.flag in action.option_strings
            assert action.default is None  # "not given": the declaration's default applies
            shown = "pollination" if item.negate else str(item.default).replace("None", "none")
            assert f"(default: {shown})" in " ".join((action.help or "").split())


CONFIG: dict[str, Any] = {
    "name": "s",
    "objective": "propulate.problems.demo:demo_loss",
    "parameters": {"x": {"type": "float", "low": 0.0, "high": 1.0}},
    "task_space": {"t": {"type": "float", "low": 0.0, "high": 10.0}},
    "training_tasks": {"listed": {"a": {"t": 1.0}, "b": {"t": 2.0}}},
    "new_tasks": {"n": {"t": 3.0}},
    "evolve": {"max_evaluations": 10},
    "mla": {},
}


def _other(item: Any) -> Any:
    """A valid value of a setting other than its default."""
    if item.kind is bool:
        return not item.default
    if item.kind is str and item.choices:
        return next(c for c in item.choices if c != item.default)
    if item.kind is str:
        return {"propagator": "random", "pruner": "asha", "portfolio": "cma,nm"}.get(
            item.name, "other"
        )
    base = item.default if item.default is not None else (item.low or 0) + 1
    value = base + 1 if item.kind is int else base * 0.5 + (item.low or 0) * 0.5 + 0.01
    if item.high is not None:
        value = min(value, item.high)
    return value


def _job_options(campaign: Campaign) -> str:
    return " ".join(
        [
            opts.evolve_options(campaign, "propulate"),
            opts.lcm_options(campaign),
            opts.mla_options(campaign),
            opts.transfer_options(campaign, "tla1"),
            opts.transfer_options(campaign, "tla2"),
        ]
    )


@pytest.mark.parametrize(
    ("section", "name"),
    [
        (section, item.name)
        for section in ("evolve", "lcm", "mla", "transfer")
        for item in describe(SECTIONS[section])
        if item.config
    ],
)
def test_every_config_setting_reaches_its_job(section: str, name: str) -> None:
    item = next(s for s in describe(SECTIONS[section]) if s.name == name)
    base = Campaign.from_config(CONFIG)
    config = {**CONFIG, section: {**CONFIG.get(section, {}), name: _other(item)}}
    changed = Campaign.from_config(config) if name != "weights" else base
    if name == "measure_tla1":
        assert opts.transfer_options(changed, "tla1") != opts.transfer_options(base, "tla1")
        return
    if name == "weights":  # merged into the objectives' canonical form, which the jobs get
        evolve = {**CONFIG["evolve"], "objectives": "other", "weights": "other=2"}
        weighted = Campaign.from_config({**CONFIG, "evolve": evolve})
        assert "--objectives other:min:2" in opts.evolve_options(weighted, "propulate")
        return
    assert _job_options(changed) != _job_options(base), f"{section}.{name} reaches no job"
    assert item.flag in _job_options(changed).split() or item.negate or item.kind is bool


def test_job_options_are_only_declared_flags() -> None:
    campaign = Campaign.from_config(CONFIG)
    declared = {item.flag for cls in SECTIONS.values() for item in describe(cls)}
    declared |= {"--no-" + item.flag[2:] for cls in SECTIONS.values() for item in describe(cls)}
    flags = {word for word in _job_options(campaign).split() if word.startswith("--")}
    assert flags - declared == {"--objective"}


def test_propagator_and_radius_are_passed_only_when_the_config_sets_them() -> None:
    """Adding a setting must not change the job options (and re-run the jobs) of campaigns
    that do not use it."""
    campaign = Campaign.from_config(CONFIG)
    assert "--propagator" not in opts.evolve_options(campaign, "propulate")
    assert "--radius" not in opts.mla_options(campaign)
    evolve = {"max_evaluations": 10, "propagator": "auto"}
    given = Campaign.from_config({**CONFIG, "evolve": evolve})
    assert "--propagator auto" in opts.evolve_options(given, "propulate")
    assert replace(given.evolve) == campaign.evolve


def test_the_schema_offers_exactly_the_search_methods() -> None:
    from propulate.methods import SEARCH_METHODS

    enum = SCHEMA["properties"]["evolve"]["properties"]["methods"]["items"]["enum"]
    assert sorted(enum) == sorted(SEARCH_METHODS)
