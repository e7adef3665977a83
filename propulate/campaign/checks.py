"""The checks behind :meth:`propulate.campaign.config.Campaign.from_config`.

Each raises :class:`CampaignError`, whose message names the config key it cannot use.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from propulate.campaign.files import suite_objective
from propulate.settings import from_mapping
from propulate.space import SearchSpace, SpaceError, load_callable


class CampaignError(ValueError):
    """A config value the campaign cannot use; the message names its key."""

    def __init__(self, key: str, message: str) -> None:
        self.key = key
        super().__init__(f"config key '{key}': {message}")


def space_of(
    key: str, spec: Any, constraint: str | None = None, forbidden: list[str] | None = None
) -> SearchSpace:
    """The search space the config key ``key`` describes (its constraint and forbidden clauses
    included); :class:`CampaignError` naming the key (or ``constraint``) when it is invalid."""
    try:
        return SearchSpace(spec or {}, constraint, forbidden=forbidden)
    except SpaceError as err:
        raise CampaignError(key, str(err)) from None
    except ImportError as err:
        raise CampaignError("constraint", str(err)) from None


def check_importable(key: str, ref: str | None) -> None:
    """That ``module:function`` ``ref`` (of config key ``key``; ``None``: nothing to check)
    can be imported."""
    if ref is None:
        return
    try:
        load_callable(ref)
    except ImportError as err:
        raise CampaignError(key, str(err)) from None


def check_command(objective: Mapping[str, Any], names: list[str], tasks: list[str]) -> None:
    """A command objective's mapping: its keys, and placeholders and program (built first)."""
    from propulate.user_objective import Command

    try:
        Command.from_config(objective).check(names, tasks)
    except ValueError as err:
        raise CampaignError("objective", str(err)) from None


def check_cores(value: Any) -> int:
    """The ``evaluation_cores`` key: a positive integer."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise CampaignError("evaluation_cores", f"give a positive integer, got {value!r}")
    return value


def benchmark_files(paths: Any) -> tuple[str, ...]:
    """The ``report.benchmarks`` key: files that exist (relative to where Snakemake runs)."""
    missing = [p for p in paths or () if not Path(p).is_file()]
    if missing:
        raise CampaignError("report.benchmarks", f"no such file: {', '.join(missing)}")
    return tuple(paths or ())


def check_objectives(evolve: Mapping[str, Any], methods: tuple[str, ...]) -> str:
    """The canonical string of ``evolve.objectives`` (a mapping or a string), checked against
    the campaign's methods and propagator (:mod:`propulate.runs.declared_objectives`)."""
    from propulate.runs.declared_objectives import Objectives

    try:
        objectives = Objectives.parse(evolve["objectives"], evolve.get("weights"))
        if objectives.several:
            from propulate.methods import check_several_objectives

            for name in methods:
                check_several_objectives(name, evolve.get("propagator") or "auto", objectives)
    except ValueError as err:
        raise CampaignError("evolve.objectives", str(err)) from None
    return objectives.text()


def check_objective_stages(objectives: str | None, stages: list[str]) -> None:
    """Refuse several objectives without weights in a campaign with stages that model one
    loss to minimise (MLA, TLA1/TLA2, the baselines' measurements)."""
    if objectives is None or not stages:
        return
    from propulate.runs.declared_objectives import Objectives

    declared = Objectives.parse(objectives)
    if not declared.scalar:
        example = ", ".join(f"{n}: 1" for n in declared.names)
        raise CampaignError(
            "evolve.objectives",
            f"{declared.text()}: the stages {', '.join(stages)} model one loss to minimise; "
            f"give evolve.weights (e.g. {{{example}}}) to minimise the weighted sum of the "
            "objectives there, or remove those stages",
        )


def check_propagator(spec: Any) -> str:
    """The canonical string of ``evolve.propagator`` (a ``{type: NAME, ...}`` mapping or a
    ``NAME[:KEY=VALUE,...]`` string; :mod:`propulate.propagators.registry`)."""
    from propulate.propagators.registry import PROPAGATORS

    try:
        return PROPAGATORS.text(spec)
    except ValueError as err:
        raise CampaignError("evolve.propagator", str(err)) from None


def check_pruner(spec: Any, methods: tuple[str, ...]) -> str:
    """The canonical string of ``evolve.pruner`` (a mapping or a string), checked against
    the campaign's methods (:mod:`propulate.pruners.registry`)."""
    from propulate.pruners.registry import pruner_spec, pruner_text

    try:
        text = pruner_text(spec)
    except ValueError as err:
        raise CampaignError("evolve.pruner", str(err)) from None
    checked = pruner_spec(text)
    if "optuna" in methods and not checked.entry.capabilities.optuna:
        raise CampaignError(
            "evolve.pruner", f"pruner {checked.name} has no Optuna counterpart (methods: optuna)"
        )
    return text


def check_plugins(evolve: Any, methods: tuple[str, ...]) -> None:
    """That the evolve jobs of ``methods`` can build their plug-ins from the settings
    ``evolve`` (:func:`propulate.plugins.resolve.resolve`, as each job does): the propagator,
    the portfolio's plan, the pruner, several objectives."""
    import dataclasses

    from propulate.plugins.resolve import PluginError, resolve

    for name in methods:
        try:
            resolve(dataclasses.replace(evolve, method=name))
        except PluginError as err:
            raise CampaignError(f"evolve.{err.key}", str(err)) from None


def settings_of(key: str, cls: type, values: Mapping[str, Any] | None) -> Any:
    """The settings dataclass ``cls`` (:mod:`propulate.settings`) from the config section
    ``key``'s ``values``; :class:`CampaignError` naming the key when one is unknown or invalid."""
    try:
        return from_mapping(cls, dict(values or {}))
    except (TypeError, ValueError) as err:
        raise CampaignError(key, str(err)) from None


def check_suite(
    config: Mapping[str, Any], suite: tuple[str, ...], training: bool, new: bool
) -> None:
    """That a benchmark-suite campaign names known functions and nothing a suite brings itself
    (objective, parameters, constraint, task space) or cannot have (tasks)."""
    from propulate.problems.benchmark import FUNCTIONS

    clash = [
        k
        for k in ("objective", "parameters", "constraint", "task_space")
        if config.get(k) is not None
    ]
    if clash:
        raise CampaignError(
            "suite",
            f"a suite of benchmark functions brings its own objectives and spaces; remove {clash}",
        )
    for key, given in (("training_tasks", training), ("new_tasks", new)):
        if given:
            raise CampaignError("suite", f"a suite has no tasks; remove '{key}'")
    if not suite:
        raise CampaignError("suite", "name at least one benchmark function")
    for function in suite:
        if function not in FUNCTIONS:
            raise CampaignError(
                "suite",
                f"unknown benchmark function {function!r}; valid names: {', '.join(FUNCTIONS)}",
            )
        check_importable("suite", suite_objective(function))


def read_file_tasks(path: str | None, space: SearchSpace | None) -> dict[str, dict[str, Any]]:
    """The tasks of the new-tasks file (none while it does not exist)."""
    if path is None:
        return {}
    if space is None:
        raise CampaignError("new_tasks_file", "new tasks need a 'task_space'")
    from propulate.tuningdb.newtasks import read_new_tasks

    try:
        return read_new_tasks(path, space)
    except (OSError, ValueError) as err:
        raise CampaignError("new_tasks_file", str(err)) from None


def check_tasks(key: str, tasks: dict[str, dict[str, Any]], space: SearchSpace | None) -> None:
    """That each task of config key ``key`` names exactly the task space's parameters, within
    its bounds."""
    for name, values in tasks.items():
        if space is None:
            raise CampaignError(f"{key}.{name}", "tasks need a 'task_space'")
        missing = set(space.names) - set(values)
        extra = set(values) - set(space.names)
        if missing or extra:
            raise CampaignError(
                f"{key}.{name}",
                f"task values must name exactly {list(space.names)} "
                f"(missing {sorted(missing)}, unknown {sorted(extra)})",
            )
        if not space.in_bounds(values):
            raise CampaignError(f"{key}.{name}", f"{values} is outside the task space")
