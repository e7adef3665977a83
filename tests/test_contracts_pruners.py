"""The pruner checks (``propulate.contracts.pruner``): each deliberately broken pruner below
is caught by the check of the contract it breaks, by name, alone and as the first failure of
``check_pruner``."""

from __future__ import annotations

import math
import random
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

from propulate.contracts import check_pruner, pruner_checks
from propulate.contracts.script import DEFAULT_SPACE, Player, script
from propulate.pruners.base import Pruner


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
