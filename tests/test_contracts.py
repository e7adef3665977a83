"""The named contract checks (``propulate.contracts``): every deliberately broken propagator and
pruner below is caught by the check of the contract it breaks, by name; every registered
propagator and pruner passes every check."""

from __future__ import annotations

import copy
import math
import random
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

from propulate.contracts import check_propagator, check_pruner, propagator_checks, pruner_checks
from propulate.contracts import propagator as pc
from propulate.contracts.pruner import DEFAULT_SPACE, Player, script
from propulate.population import Individual
from propulate.propagators.base import Propagator
from propulate.propagators.registry import PROPAGATORS
from propulate.pruners.base import Pruner
from propulate.pruners.registry import PRUNERS
from propulate.space import Categorical, Float, Integer, SearchSpace

SPACE = SearchSpace(
    {
        "x": Float(-5.0, 5.0),
        "lr": Float(1e-4, 1.0, log=True),
        "n": Integer(1, 9),
        "act": Categorical(("relu", "tanh", "gelu")),
    }
)
#: A conditional space: ``k`` is active only with ``algo == "b"``.
BRANCHED = SearchSpace(
    {
        "algo": Categorical(("a", "b")),
        "x": Float(0.0, 1.0),
        "k": {"type": "int", "low": 1, "high": 8, "when": {"algo": ["b"]}},
    }
)
#: Children per check for the propagators that are slow to breed (the rest use the defaults).
BUDGET = {"bo": 30}


def _build_propagator(name: str, space: SearchSpace, rng: random.Random) -> Propagator:
    """The registered propagator ``name`` for one rank."""
    build = getattr(PROPAGATORS, "build", None)
    if build is not None:
        return build(name, space, rng=rng)
    from propulate.propagators.registry import make_propagator
    from propulate.settings import EvolveSettings

    return make_propagator(name, space, EvolveSettings(), rng)


def _build_pruner(name: str, space: SearchSpace) -> Pruner:
    """The registered pruner ``name`` with its default options."""
    build = getattr(PRUNERS, "build", None)
    if build is not None:
        return build(name, space=space)
    from propulate.pruners.registry import make_pruner

    return make_pruner(name, {}, space=space)


# ====================================================================== broken propagators
class Base(Propagator):
    """A correct random propagator that the broken ones below spoil one way each."""

    def __init__(self, rng: random.Random, space: SearchSpace = SPACE) -> None:
        super().__init__(-1, 1, rng)
        self.space = space

    def __call__(self, inds: Sequence[Individual]) -> Individual:
        return Individual(self.space.decode([self.rng.random() for _ in range(self.space.dim)]))


class WithState(Base):
    """Correct too: each child carries a JSON-ready state."""

    def __call__(self, inds: Sequence[Individual]) -> Individual:
        child = super().__call__(inds)
        child.state = {"k": self.rng.randrange(100), "v": [0.5, 1.5]}
        return child


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


class ObserveModifies(Base):
    def observe(self, individual: Individual) -> None:
        if individual.failed:
            individual.loss = 1e9  # "a finite loss is easier to rank"


class ObserveModifiesAnother(Base):
    def __init__(self, rng: random.Random) -> None:
        super().__init__(rng)
        self.seen: list[Individual] = []

    def observe(self, individual: Individual) -> None:
        if self.seen:
            self.seen[0].rank = -5  # a late change to an individual seen before
        self.seen.append(individual)


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


class SetInState(Base):
    def __call__(self, inds: Sequence[Individual]) -> Individual:
        child = super().__call__(inds)
        child.state = {"velocity": {1, 2}}
        return child


class TupleInState(Base):
    def __call__(self, inds: Sequence[Individual]) -> Individual:
        child = super().__call__(inds)
        child.state = {"velocity": (0.5, 1.5)}  # comes back from JSON as a list
        return child


class NaNInState(Base):
    def __call__(self, inds: Sequence[Individual]) -> Individual:
        child = super().__call__(inds)
        child.state = {"sigma": math.nan}
        return child


class EmptyState(Base):
    """An empty state is not recorded: it comes back as None after a resume."""

    def __call__(self, inds: Sequence[Individual]) -> Individual:
        child = super().__call__(inds)
        child.state = {}
        return child


class GlobalRandom(Base):
    def __call__(self, inds: Sequence[Individual]) -> Individual:
        return Individual(SPACE.decode([random.random() for _ in range(SPACE.dim)]))


class NumpyGlobalRandom(Base):
    def __call__(self, inds: Sequence[Individual]) -> Individual:
        return Individual(SPACE.decode(np.random.random(SPACE.dim)))  # noqa: NPY002 - the bug


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


class ObserveFailsOnFailures(Base):
    def observe(self, individual: Individual) -> None:
        assert individual.status == "ok", "cannot learn from a failure"


class ObserveFailsOnForeignState(Base):
    def observe(self, individual: Individual) -> None:
        if individual.state is not None:
            int(individual.state["k"])  # KeyError on another method's state


class StateNotRestored(Base):
    """Keeps what it knows of its children in memory only: a resumed copy knows nothing."""

    def __init__(self, rng: random.Random) -> None:
        super().__init__(rng)
        self.memo: dict[tuple[Any, ...], float] = {}

    def __call__(self, inds: Sequence[Individual]) -> Individual:
        child = super().__call__(inds)
        self.memo[tuple(child.values())] = self.rng.random()
        return child

    def observe(self, individual: Individual) -> None:
        if individual.rank == 0:
            self.memo[tuple(individual.values())] += 1.0  # KeyError after a resume


class HiddenObserves(Base):
    """Learns in observe, but says it does not: the engine never calls it."""

    def __init__(self, rng: random.Random) -> None:
        super().__init__(rng)
        self.centre = 0.5

    def __call__(self, inds: Sequence[Individual]) -> Individual:
        u = [min(max(self.centre + 0.2 * (self.rng.random() - 0.5), 0), 1) for _ in range(4)]
        return Individual(self.space.decode(u))

    def observe(self, individual: Individual) -> None:
        if not individual.failed:
            self.centre = 0.9 * self.centre + 0.1 * float(self.space.encode(individual)[0])

    @property
    def observes(self) -> bool:
        return False


class Inconsistent(Base):
    """Breeds every parameter of a conditional space, active or not."""

    def __init__(self, rng: random.Random) -> None:
        super().__init__(rng, BRANCHED)

    def __call__(self, inds: Sequence[Individual]) -> Individual:
        return Individual({n: d.decode(self.rng.random()) for n, d in BRANCHED.dimensions.items()})


BROKEN_PROPAGATORS: list[tuple[type, str]] = [
    (ModifiesParams, "check_does_not_modify_inputs"),
    (ModifiesCurve, "check_does_not_modify_inputs"),
    (ModifiesGeneration, "check_does_not_modify_inputs"),
    (ModifiesObjectives, "check_does_not_modify_inputs"),
    (ModifiesParentState, "check_does_not_modify_inputs"),
    (DeactivatesParent, "check_does_not_modify_inputs"),
    (SortsTheList, "check_does_not_modify_inputs"),
    (ObserveModifies, "check_observe_does_not_modify"),
    (ObserveModifiesAnother, "check_observe_does_not_modify"),
    (OutOfBounds, "check_stays_in_space"),
    (LeavesLate, "check_stays_in_space"),
    (IntegerAsFloat, "check_integer_types"),
    (IntegerAsNumpy, "check_integer_types"),
    (FloatAsNumpy, "check_integer_types"),
    (SetInState, "check_state_json_ready"),
    (TupleInState, "check_state_json_ready"),
    (NaNInState, "check_state_json_ready"),
    (EmptyState, "check_state_on_wire_and_records"),
    (GlobalRandom, "check_deterministic"),
    (NumpyGlobalRandom, "check_deterministic"),
    (ReturnsDict, "check_returns_individuals"),
    (ReturnsTuple, "check_returns_individuals"),
    (ReturnsParent, "check_offspring_fresh"),
    (SharesParentState, "check_offspring_fresh"),
    (ExtraParameter, "check_parameter_names"),
    (MissingParameter, "check_parameter_names"),
    (CrashesOnEmpty, "check_empty_island"),
    (MaxOfEmpty, "check_empty_island"),
    (Undeclared, "check_declares_space"),
    (ObserveFailsOnFailures, "check_observe_accepts_any_outcome"),
    (ObserveFailsOnForeignState, "check_observe_accepts_any_outcome"),
    (StateNotRestored, "check_resume"),
    (HiddenObserves, "check_observes_flag"),
    (Inconsistent, "check_conditional_consistency"),
]
PROPAGATOR_CHECKS = {c.__name__: c for c in propagator_checks()}


@pytest.mark.parametrize(
    ("cls", "name"), BROKEN_PROPAGATORS, ids=lambda v: getattr(v, "__name__", v)
)
def test_each_broken_propagator_is_caught_by_the_check_of_its_contract(
    cls: type, name: str
) -> None:
    with pytest.raises(AssertionError, match=f"^{name}: "):
        PROPAGATOR_CHECKS[name](cls(random.Random(0)))


@pytest.mark.parametrize(
    ("cls", "name"), BROKEN_PROPAGATORS, ids=lambda v: getattr(v, "__name__", v)
)
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


# ====================================================================== broken pruners
class BasePruner(Pruner):
    """A correct pruner: stop a value more than 0.5 above the best finished evaluation's final
    loss, once two have finished and from step 2 on."""

    def __init__(self) -> None:
        self.finals: list[float] = []

    def should_stop(self, curve: Sequence[Sequence[float]]) -> bool:
        step, value = curve[-1][0], curve[-1][1]
        return len(self.finals) >= 2 and step >= 2 and value > min(self.finals) + 0.5

    def observe(self, individual: Any) -> None:
        if individual.status == "ok" and individual.loss is not None:
            self.finals.append(float(individual.loss))


class StopsAtOnce(BasePruner):
    def should_stop(self, curve: Sequence[Sequence[float]]) -> bool:
        return True


class ReturnsNumpyBool(BasePruner):
    def should_stop(self, curve: Sequence[Sequence[float]]) -> bool:
        return np.bool_(super().should_stop(curve))  # type: ignore[return-value]


class ReturnsNone(BasePruner):
    def should_stop(self, curve: Sequence[Sequence[float]]) -> bool:
        return True if super().should_stop(curve) else None  # type: ignore[return-value]


class SortsTheCurve(BasePruner):
    def should_stop(self, curve: Sequence[Sequence[float]]) -> bool:
        curve.sort(key=lambda p: p[1])  # type: ignore[attr-defined]
        return super().should_stop(curve)


class RoundsTheCurve(BasePruner):
    def should_stop(self, curve: Sequence[Sequence[float]]) -> bool:
        curve[-1][1] = round(curve[-1][1], 1)  # type: ignore[index]
        return super().should_stop(curve)


class ObserveNeedsALoss(BasePruner):
    def observe(self, individual: Any) -> None:
        self.finals.append(float(individual.curve[-1][1]))  # TypeError on a curve of None


class ObserveFailsOnPruned(BasePruner):
    def observe(self, individual: Any) -> None:
        if individual.status == "pruned":
            raise ValueError("a pruned run has no final loss")
        super().observe(individual)


class ObserveDropsTheCurve(BasePruner):
    def observe(self, individual: Any) -> None:
        super().observe(individual)
        individual.curve = None  # "free the memory"


class HiddenObservesPruner(BasePruner):
    @property
    def observes(self) -> bool:
        return False


class ObservesIsNotABool(BasePruner):
    @property
    def observes(self) -> bool:
        return 1  # type: ignore[return-value]


class GlobalRandomPruner(BasePruner):
    def should_stop(self, curve: Sequence[Sequence[float]]) -> bool:
        return len(curve) > 1 and random.random() < 0.3


class SharedFinals(BasePruner):
    """Keeps the finals in a class attribute: every copy (every rank's) shares them."""

    shared: list[float] = []  # noqa: RUF012 - the bug under test

    def __init__(self) -> None:
        self.finals = SharedFinals.shared


class HoldsALock(BasePruner):
    def __init__(self) -> None:
        super().__init__()
        self.lock = threading.Lock()


class NeverResets(BasePruner):
    """Remembers the best value of the evaluation before: start() does not reset it."""

    def __init__(self) -> None:
        super().__init__()
        self.best = math.inf

    def should_stop(self, curve: Sequence[Sequence[float]]) -> bool:
        self.best = min(self.best, curve[-1][1])
        return len(self.finals) >= 2 and curve[-1][0] >= 2 and self.best > min(self.finals) + 0.5


BROKEN_PRUNERS: list[tuple[Callable[[], Pruner], str]] = [
    (StopsAtOnce, "check_pruner_no_early_stop"),
    (ReturnsNumpyBool, "check_pruner_should_stop_returns_bool"),
    (ReturnsNone, "check_pruner_should_stop_returns_bool"),
    (SortsTheCurve, "check_pruner_does_not_modify_curve"),
    (RoundsTheCurve, "check_pruner_does_not_modify_curve"),
    (ObserveNeedsALoss, "check_pruner_observe_accepts_any_outcome"),
    (ObserveFailsOnPruned, "check_pruner_observe_accepts_any_outcome"),
    (ObserveDropsTheCurve, "check_pruner_observe_does_not_modify"),
    (HiddenObservesPruner, "check_pruner_observes_flag"),
    (ObservesIsNotABool, "check_pruner_observes_flag"),
    (GlobalRandomPruner, "check_pruner_deterministic"),
    (SharedFinals, "check_pruner_copies_independent"),
    (HoldsALock, "check_pruner_pickle"),
    (NeverResets, "check_pruner_start_resets"),
]
PRUNER_CHECKS = {c.__name__: c for c in pruner_checks()}


@pytest.mark.parametrize(("cls", "name"), BROKEN_PRUNERS, ids=lambda v: getattr(v, "__name__", v))
def test_each_broken_pruner_is_caught_by_the_check_of_its_contract(cls: type, name: str) -> None:
    """Checked through its factory (the class), as the engine builds one per rank."""
    SharedFinals.shared.clear()
    with pytest.raises(AssertionError, match=f"^{name}: "):
        PRUNER_CHECKS[name](cls)


@pytest.mark.parametrize(("cls", "name"), BROKEN_PRUNERS, ids=lambda v: getattr(v, "__name__", v))
def test_check_pruner_reports_the_broken_contract_first(cls: type, name: str) -> None:
    """Run together, the first failing check is the broken contract's."""
    SharedFinals.shared.clear()
    with pytest.raises(AssertionError, match=f"^{name}: "):
        check_pruner(cls)


@pytest.mark.parametrize("cls", [HoldsALock, SharedFinals])
def test_given_as_an_instance_the_pruner_must_deep_copy(cls: type) -> None:
    """A lock cannot be deep-copied, and a deep copy severs the class attribute: checked as an
    instance, the lock fails every check on the copy, the shared list passes unseen."""
    SharedFinals.shared.clear()
    if cls is HoldsALock:
        with pytest.raises(AssertionError, match="^check_pruner_no_early_stop: .*deepcopy"):
            check_pruner(cls())
    else:
        check_pruner(cls())


def test_the_correct_pruner_passes_and_stops_some_evaluations() -> None:
    check_pruner(BasePruner())
    played = Player(BasePruner()).play(script(DEFAULT_SPACE))
    assert any(stop for _, _, stop in played.decisions)


class Threshold(BasePruner):
    """Documented rule: any value above ``limit`` stops the evaluation, first value included."""

    def __init__(self, limit: float = 100.0) -> None:
        super().__init__()
        self.limit = limit

    def should_stop(self, curve: Sequence[Sequence[float]]) -> bool:
        return curve[-1][1] > self.limit or super().should_stop(curve)


def test_a_documented_early_stop_is_an_expected_failure() -> None:
    with pytest.raises(AssertionError, match="^check_pruner_no_early_stop: .*step 0"):
        check_pruner(Threshold())
    check_pruner(
        Threshold(),
        expected_failures={"check_pruner_no_early_stop": "stops any value above the limit"},
    )
    with pytest.raises(ValueError, match="unknown checks"):
        check_pruner(Threshold(), expected_failures={"check_no_early_stop": "typo"})


# ====================================================================== every registered one
def _budget(name: str) -> dict[str, Any]:
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


def test_the_island_breeds_and_evaluates_as_many_children_as_asked() -> None:
    """The checks' runs are as long as they say (150 children for check_stays_in_space)."""
    from propulate.contracts.island import Island

    island = Island(SPACE, copy.deepcopy(Base(random.Random(0))), 0)
    island.run(pc.LONG_STEPS)
    assert len(island.own) == pc.LONG_STEPS
    statuses = {i.status for i in island.evaluated}
    assert statuses == {"ok", "failed", "pruned", "timeout"}
    assert {i.rank for i in island.evaluated} == {0, 1, 2, 3}
