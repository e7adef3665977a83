"""A run's plug-ins, resolved once from its settings.

:func:`resolve` turns the settings' propagator and pruner (specs as the command line or a
campaign gives them) into checked :class:`~propulate.plugins.registry.Spec` s: the names exist,
every option has its type and range, several objectives meet a propagator that ranks them, an
Optuna run has a pruner Optuna knows. The command line calls it before any rank starts and the
campaign's checks call it for ``snakemake -n``, so a bad spec is refused in one line before any
job; the engine then builds each rank's objects from the specs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from propulate.plugins.registry import Spec


class PluginError(ValueError):
    """A spec that cannot run; ``key`` is the setting it came from (``propagator``,
    ``pruner``)."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


@dataclass(frozen=True)
class Plugins:
    """The checked plug-ins of a run.

    Attributes
    ----------
    propagator : Spec
        The island model's propagator (options of older settings fields merged in).
    pruner : Spec or None
        The pruner (``None``: evaluations run to their end).
    """

    propagator: Spec
    pruner: Spec | None = None


def resolve(settings: Any) -> Plugins:
    """The checked plug-ins of ``settings`` (an :class:`~propulate.settings.EvolveSettings`).

    Raises
    ------
    PluginError
        Naming the setting and what is wrong, in one line.
    """
    from propulate.propagators.registry import check_objectives, parse_plan, propagator_spec
    from propulate.pruners.registry import pruner_spec, pruner_text
    from propulate.runs.declared_objectives import Objectives

    plan = getattr(settings, "portfolio", None)
    if plan is not None:  # the older setting, which a portfolio spec takes as its plan
        try:
            parse_plan(plan)
        except ValueError as err:
            raise PluginError("portfolio", str(err)) from None
    try:
        propagator = propagator_spec(settings)
    except ValueError as err:
        raise PluginError("propagator", str(err)) from None
    objectives = Objectives.maybe(getattr(settings, "objectives", None))
    if getattr(settings, "method", "propulate") == "propulate":
        try:
            check_objectives(propagator.name, objectives)
        except ValueError as err:
            raise PluginError("objectives", str(err)) from None
    pruner = None
    if getattr(settings, "pruner", None):
        try:
            pruner = pruner_spec(settings.pruner)
            pruner_text(pruner)  # built once: a combination its class refuses fails here
        except ValueError as err:
            raise PluginError("pruner", str(err)) from None
        if getattr(settings, "method", None) == "optuna" and not pruner.entry.capabilities.optuna:
            raise PluginError(
                "pruner", f"pruner {pruner.name} has no Optuna counterpart (method optuna)"
            )
    return Plugins(propagator, pruner)


def describe_choice(plugins: Plugins, settings: Any, space: Any, ranks: int) -> dict[str, Any]:
    """What ``run.json`` says of the propagator: its spec, and for ``auto`` the rule table's
    choice for this run (first choice, challenger, race; the method that polishes and after how
    many evaluations; the landscape probe's evaluations and the method it may pick) and its
    reason in words."""
    from propulate.plugins.facts import RunFacts

    out: dict[str, Any] = {"spec": plugins.propagator.text()}
    if plugins.propagator.name == "auto":
        from propulate.propagators.auto_rules import choose

        facts = RunFacts.of(settings, space, ranks)
        choice = choose(facts, plugins.propagator.options.race)
        out.update(
            first=choice.first, challenger=choice.challenger, race=choice.race, reason=choice.reason
        )
        if choice.then is not None:
            out.update(then=choice.then, handoff=choice.handoff)
        if choice.probe:
            out.update(probe=choice.probe, probe_pick=choice.probe_pick)
    return out
