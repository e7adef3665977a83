"""The propagator checks of what it breeds (``propulate.contracts.propagator``): each
deliberately broken propagator below is caught by the check of the contract it breaks, by name,
alone and as the first failure of ``check_propagator``."""

from __future__ import annotations

import copy
import random
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from propulate.contracts import check_propagator, propagator_checks, pruner_checks
from propulate.contracts import propagator as pc
from propulate.contracts.island import Island
from propulate.population import Individual
from tests.contracts_utils import BRANCHED, SPACE, Base, WithState


class ModifiesParams(Base):
    def __call__(self, inds: Sequence[Individual]) -> Individual:
        for ind in list(inds)[:1]:
            ind["x"] = 0.0
        return super().__call__(inds)


class ModifiesCurve(Base):
    def __call__(self, inds: Sequence[Individual]) -> Individual:
        for ind in inds:
            if ind.curve:
                ind.curve[-1][1] = 0.0  # "smoothing" the parent's curve in place
                break
        return super().__call__(inds)


class ModifiesGeneration(Base):
    def __call__(self, inds: Sequence[Individual]) -> Individual:
        for ind in list(inds)[:1]:
            ind.generation += 1
        return super().__call__(inds)


class ModifiesObjectives(Base):
    def __call__(self, inds: Sequence[Individual]) -> Individual:
        for ind in inds:
            if ind.objectives:
                ind.objectives["size"] = -1.0
                break
        return super().__call__(inds)


class ModifiesParentState(WithState):
    def __call__(self, inds: Sequence[Individual]) -> Individual:
        for ind in inds:
            if isinstance(ind.state, dict) and "k" in ind.state:
                ind.state["k"] += 1
                break
        return super().__call__(inds)


class DeactivatesParent(Base):
    def __call__(self, inds: Sequence[Individual]) -> Individual:
        for ind in list(inds)[:1]:
            ind.active = False
        return super().__call__(inds)


class SortsTheList(Base):
    def __call__(self, inds: Sequence[Individual]) -> Individual:
        if isinstance(inds, list):
            inds.sort(key=lambda i: i.loss)
        return super().__call__(inds)


class OutOfBounds(Base):
    def __call__(self, inds: Sequence[Individual]) -> Individual:
        child = super().__call__(inds)
        child["x"] = 7.5
        return child


class LeavesLate(Base):
    """Steps grow until, after 100 children, they leave the space."""

    def __init__(self, rng: random.Random) -> None:
        super().__init__(rng)
        self.calls = 0

    def __call__(self, inds: Sequence[Individual]) -> Individual:
        self.calls += 1
        child = super().__call__(inds)
        if self.calls > 100:
            child["x"] = 5.0 + 0.01 * (self.calls - 100)
        return child


class IntegerAsFloat(Base):
    def __call__(self, inds: Sequence[Individual]) -> Individual:
        child = super().__call__(inds)
        child["n"] = float(child["n"])
        return child


class IntegerAsNumpy(Base):
    def __call__(self, inds: Sequence[Individual]) -> Individual:
        child = super().__call__(inds)
        child["n"] = np.int64(child["n"])
        return child


class FloatAsNumpy(Base):
    def __call__(self, inds: Sequence[Individual]) -> Individual:
        child = super().__call__(inds)
        child["x"] = np.float64(child["x"])
        return child


class ReturnsDict(Base):
    def __call__(self, inds: Sequence[Individual]) -> Any:
        return dict(super().__call__(inds))


class ReturnsTuple(Base):
    def __call__(self, inds: Sequence[Individual]) -> Any:
        return (super().__call__(inds),)


class ReturnsParent(Base):
    def __call__(self, inds: Sequence[Individual]) -> Individual:
        return inds[0] if len(inds) else super().__call__(inds)


class SharesParentState(WithState):
    def __call__(self, inds: Sequence[Individual]) -> Individual:
        child = super().__call__(inds)
        for ind in inds:
            if ind.state is not None:
                child.state = ind.state  # aliasing: a later change would change the parent
                break
        return child


class ExtraParameter(Base):
    def __call__(self, inds: Sequence[Individual]) -> Individual:
        child = super().__call__(inds)
        child["momentum"] = 0.9
        return child


class MissingParameter(Base):
    def __call__(self, inds: Sequence[Individual]) -> Individual:
        child = super().__call__(inds)
        del child["lr"]
        return child


class CrashesOnEmpty(Base):
    def __call__(self, inds: Sequence[Individual]) -> Individual:
        best = inds[0]  # IndexError on an empty island
        child = super().__call__(inds)
        child["act"] = best["act"]
        return child


class MaxOfEmpty(Base):
    def __call__(self, inds: Sequence[Individual]) -> Individual:
        worst = max(i.loss for i in inds)  # ValueError on an empty island
        child = super().__call__(inds)
        child["x"] = max(min(worst, 5.0), -5.0)
        return child


class Undeclared(Base):
    def __init__(self, rng: random.Random) -> None:
        super().__init__(rng)
        self.space = None  # type: ignore[assignment]


class Inconsistent(Base):
    """Breeds every parameter of a conditional space, active or not."""

    def __init__(self, rng: random.Random) -> None:
        super().__init__(rng, BRANCHED)

    def __call__(self, inds: Sequence[Individual]) -> Individual:
        return Individual({n: d.decode(self.rng.random()) for n, d in BRANCHED.dimensions.items()})


BROKEN: list[tuple[type, str]] = [
    (ModifiesParams, "check_does_not_modify_inputs"),
    (ModifiesCurve, "check_does_not_modify_inputs"),
    (ModifiesGeneration, "check_does_not_modify_inputs"),
    (ModifiesObjectives, "check_does_not_modify_inputs"),
    (ModifiesParentState, "check_does_not_modify_inputs"),
    (DeactivatesParent, "check_does_not_modify_inputs"),
    (SortsTheList, "check_does_not_modify_inputs"),
    (OutOfBounds, "check_stays_in_space"),
    (LeavesLate, "check_stays_in_space"),
    (IntegerAsFloat, "check_integer_types"),
    (IntegerAsNumpy, "check_integer_types"),
    (FloatAsNumpy, "check_integer_types"),
    (ReturnsDict, "check_returns_individuals"),
    (ReturnsTuple, "check_returns_individuals"),
    (ReturnsParent, "check_offspring_fresh"),
    (SharesParentState, "check_offspring_fresh"),
    (ExtraParameter, "check_parameter_names"),
    (MissingParameter, "check_parameter_names"),
    (CrashesOnEmpty, "check_empty_island"),
    (MaxOfEmpty, "check_empty_island"),
    (Undeclared, "check_declares_space"),
    (Inconsistent, "check_conditional_consistency"),
]
PROPAGATOR_CHECKS = {c.__name__: c for c in propagator_checks()}


@pytest.mark.parametrize(("cls", "name"), BROKEN, ids=lambda v: getattr(v, "__name__", v))
def test_each_broken_propagator_is_caught_by_the_check_of_its_contract(
    cls: type, name: str
) -> None:
    with pytest.raises(AssertionError, match=f"^{name}: "):
        PROPAGATOR_CHECKS[name](cls(random.Random(0)))


@pytest.mark.parametrize(("cls", "name"), BROKEN, ids=lambda v: getattr(v, "__name__", v))
def test_check_propagator_reports_the_broken_contract_first(cls: type, name: str) -> None:
    """Run together, the first failing check is the broken contract's: the checks before it
    do not trip over it."""
    with pytest.raises(AssertionError, match=f"^{name}: "):
        check_propagator(cls(random.Random(0)))


@pytest.mark.parametrize("cls", [Base, WithState])
def test_the_correct_propagators_pass_every_check(cls: type) -> None:
    check_propagator(cls(random.Random(0)))


def test_a_crash_on_an_empty_island_is_named_and_explained() -> None:
    with pytest.raises(AssertionError) as err:
        pc.check_empty_island(CrashesOnEmpty(random.Random(0)))
    text = str(err.value)
    assert text.startswith("check_empty_island: before anything was evaluated: breeding from ")
    assert "IndexError" in text and "start of every run" in text


def test_the_integer_message_names_the_parameter_and_its_type() -> None:
    with pytest.raises(AssertionError) as err:
        pc.check_integer_types(IntegerAsFloat(random.Random(0)))
    assert str(err.value).startswith("check_integer_types: offspring parameter n=")
    assert "is a float, Integer parameters must be int" in str(err.value)


def test_the_modification_message_names_the_field() -> None:
    with pytest.raises(AssertionError, match=r"generation: \d+ -> \d+"):
        pc.check_does_not_modify_inputs(ModifiesGeneration(random.Random(0)))


def test_leaving_the_space_late_is_missed_by_a_short_run_only() -> None:
    """The long default of check_stays_in_space is what catches it."""
    pc.check_stays_in_space(LeavesLate(random.Random(0)), steps=90)
    with pytest.raises(AssertionError, match="^check_stays_in_space: "):
        pc.check_stays_in_space(LeavesLate(random.Random(0)))


def test_expected_failures_skip_exactly_the_named_checks() -> None:
    prop = CrashesOnEmpty(random.Random(0))
    with pytest.raises(AssertionError, match="^check_empty_island: "):
        check_propagator(prop)
    check_propagator(prop, expected_failures={"check_empty_island": "needs a parent"})
    with pytest.raises(ValueError, match="unknown checks"):
        check_propagator(prop, expected_failures={"check_empty_islands": "typo"})
    with pytest.raises(ValueError, match="reason"):
        check_propagator(prop, expected_failures={"check_empty_island": ""})


def test_the_checks_are_named_functions_in_a_stable_order() -> None:
    for checks in (list(propagator_checks()), list(pruner_checks())):
        names = [c.__name__ for c in checks]
        assert len(set(names)) == len(names) and all(n.startswith("check_") for n in names)
        assert all(c.contract == c.__name__ for c in checks)  # type: ignore[attr-defined]
    assert list(PROPAGATOR_CHECKS)[:2] == ["check_declares_space", "check_empty_island"]


def test_the_original_propagator_is_left_unused() -> None:
    prop = LeavesLate(random.Random(0))
    state = prop.rng.getstate()
    check_propagator(prop, expected_failures={"check_stays_in_space": "known"})
    assert prop.calls == 0 and prop.rng.getstate() == state


def test_the_island_breeds_and_evaluates_as_many_children_as_asked() -> None:
    """The checks' runs are as long as they say (150 children for check_stays_in_space)."""
    island = Island(SPACE, copy.deepcopy(Base(random.Random(0))), 0)
    island.run(pc.LONG_STEPS)
    assert len(island.own) == pc.LONG_STEPS
    statuses = {i.status for i in island.evaluated}
    assert statuses == {"ok", "failed", "pruned", "timeout"}
    assert {i.rank for i in island.evaluated} == {0, 1, 2, 3}
