"""A toy propagator and a toy pruner, registered at run time by the plug-in seam's tests
(``tests/test_plugin_seam.py``): each is what a user writes -- one module with an options
dataclass and a factory -- plus one registry entry."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from propulate.plugins.facts import RunFacts
from propulate.plugins.registry import Entry
from propulate.population import Individual
from propulate.propagators.base import Propagator
from propulate.propagators.registry import Capabilities
from propulate.pruners.base import Pruner
from propulate.pruners.registry import Capabilities as PrunerCapabilities
from propulate.settings.spec import setting
from propulate.space import SearchSpace


@dataclass(frozen=True)
class ToyOptions:
    """The toy propagator's options."""

    step: float = setting(0.1, "how far a child moves from the best, in the unit cube", low=0.0)


class Toy(Propagator):
    """Moves the best individual's encoded point by at most ``step``; random while empty."""

    def __init__(self, space: SearchSpace, step: float, rng: random.Random) -> None:
        super().__init__(-1, 1, rng)
        self.space, self.step = space, step

    def __call__(self, inds: Sequence[Individual]) -> Individual:
        ok = [i for i in inds if i.loss is not None and i.status == "ok"]
        if not ok:
            return Individual(self.space.decode([self.rng.random() for _ in range(self.space.dim)]))
        best = min(ok, key=lambda i: i.loss)
        u = self.space.encode(best)
        moved = [min(max(x + self.rng.uniform(-self.step, self.step), 0.0), 1.0) for x in u]
        return Individual(self.space.decode(moved))


def toy_propagator(
    space: SearchSpace, options: ToyOptions, rng: random.Random, run: RunFacts
) -> Toy:
    """The toy entry's factory."""
    return Toy(space, options.step, rng)


TOY = Entry(
    "toy", "tests.plugin_utils:toy_propagator", "a toy hill climber", ToyOptions, Capabilities()
)


@dataclass(frozen=True)
class ThresholdOptions:
    """The toy pruner's options."""

    threshold: float = setting(1.0, "stop a run whose value exceeds this", low=0.0)


class Threshold(Pruner):
    """Stops a run as soon as a value exceeds ``threshold`` (like Optuna's ThresholdPruner)."""

    def __init__(self, threshold: float = 1.0) -> None:
        if not threshold >= 0:
            raise ValueError(f"threshold must be >= 0, got {threshold!r}")
        self.threshold = float(threshold)

    def should_stop(self, curve: Sequence[Sequence[float]]) -> bool:
        return bool(curve[-1][1] > self.threshold)


THRESHOLD = Entry(
    "threshold",
    "tests.plugin_utils:Threshold",
    "stop a run whose value exceeds a threshold",
    ThresholdOptions,
    PrunerCapabilities(optuna=False),
)

__all__ = ["THRESHOLD", "TOY", "Threshold", "Toy", "ToyOptions", "toy_propagator"]
