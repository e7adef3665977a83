"""Every registered propagator and pruner passes every named contract check
(``propulate.contracts``), parametrized per (entry, check)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from propulate.contracts import propagator_checks, pruner_checks
from propulate.contracts.script import DEFAULT_SPACE, Player, script
from propulate.propagators.base import Propagator
from propulate.propagators.registry import PROPAGATORS, build_propagator
from propulate.pruners.base import Pruner
from propulate.pruners.registry import PRUNERS, build_pruner
from propulate.space import SearchSpace
from tests.contracts_utils import BRANCHED, SPACE

#: Children per check for the propagators that are slow to breed (the rest use the defaults).
BUDGET = {"bo": 20}


def _build_propagator(name: str, space: SearchSpace, rng: random.Random) -> Propagator:
    """The registered propagator ``name`` for one rank, with its default options."""
    return build_propagator(name, space, rng)


def _build_pruner(name: str, space: SearchSpace) -> Pruner:
    """The registered pruner ``name`` with its default options."""
    return build_pruner(name, space)


def _budget(name: str) -> dict[str, Any]:
    """The check's parameters for propagator ``name``."""
    return {"steps": BUDGET[name]} if name in BUDGET else {}


@pytest.mark.parametrize("check", list(propagator_checks()), ids=lambda c: c.__name__)
@pytest.mark.parametrize("name", sorted(PROPAGATORS))
def test_every_registered_propagator_passes_every_check(name: str, check: Any) -> None:
    check(_build_propagator(name, SPACE, random.Random(3)), **_budget(name))


@pytest.mark.parametrize("check", list(propagator_checks()), ids=lambda c: c.__name__)
@pytest.mark.parametrize("name", sorted(PROPAGATORS))
def test_every_registered_propagator_passes_every_check_in_a_conditional_space(
    name: str, check: Any
) -> None:
    """Or refuses the space when it is built, naming the conditional parameter."""
    try:
        prop = _build_propagator(name, BRANCHED, random.Random(4))
    except ValueError as err:
        assert "conditional parameter 'k'" in str(err)
        return
    check(prop, **_budget(name))


@pytest.mark.parametrize("check", list(pruner_checks()), ids=lambda c: c.__name__)
@pytest.mark.parametrize("name", sorted(PRUNERS))
def test_every_registered_pruner_passes_every_check(name: str, check: Any) -> None:
    check(_build_pruner(name, DEFAULT_SPACE))


@pytest.mark.parametrize("name", sorted(PRUNERS))
def test_the_script_makes_every_registered_pruner_stop_some_evaluations(name: str) -> None:
    """The pruner checks compare decisions: they would be empty if nothing were stopped."""
    played = Player(_build_pruner(name, DEFAULT_SPACE)).play(script(DEFAULT_SPACE))
    stops = [d for d in played.decisions if d[2]]
    assert stops and len(stops) < len(played.decisions)
