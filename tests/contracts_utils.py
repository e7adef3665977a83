"""What the contract tests share: the spaces, and the correct propagator that the broken ones
spoil one way each."""

from __future__ import annotations

import random
from collections.abc import Sequence

from propulate.population import Individual
from propulate.propagators.base import Propagator
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


class Base(Propagator):
    """A correct random propagator that the broken ones of the contract tests spoil one way
    each."""

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
