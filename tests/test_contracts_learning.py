"""The propagator checks of what it learns and keeps (``propulate.contracts.learning``):
each deliberately broken propagator below is caught by the check of the contract it breaks, by
name, alone and as the first failure of ``check_propagator``."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from propulate.contracts import check_propagator, propagator_checks
from propulate.population import Individual
from tests.contracts_utils import SPACE, Base


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


BROKEN: list[tuple[type, str]] = [
    (ObserveModifies, "check_observe_does_not_modify"),
    (ObserveModifiesAnother, "check_observe_does_not_modify"),
    (SetInState, "check_state_json_ready"),
    (TupleInState, "check_state_json_ready"),
    (NaNInState, "check_state_json_ready"),
    (EmptyState, "check_state_on_wire_and_records"),
    (GlobalRandom, "check_deterministic"),
    (NumpyGlobalRandom, "check_deterministic"),
    (ObserveFailsOnFailures, "check_observe_accepts_any_outcome"),
    (ObserveFailsOnForeignState, "check_observe_accepts_any_outcome"),
    (StateNotRestored, "check_resume"),
    (HiddenObserves, "check_observes_flag"),
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
