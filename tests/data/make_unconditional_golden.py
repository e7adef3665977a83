"""Compute unconditional-space proposals of the GA, random search and the space's samplers."""

import json
import random
import sys

import numpy as np

from propulate.engine.breeder import Breeder
from propulate.propagators import get_default_propagator
from propulate.propagators.random_search import RandomSearch
from propulate.space import SearchSpace

SPACE = SearchSpace(
    {
        "x": (-5.0, 5.0),
        "lr": {"type": "float", "low": 1e-5, "high": 0.1, "log": True},
        "n": (1, 64),
        "k": {"type": "int", "low": 1, "high": 1024, "log": True},
        "act": ("relu", "tanh", "gelu"),
    }
)


def loss(p):
    return (
        p["x"] ** 2 + abs(np.log10(p["lr"]) + 3) + (p["n"] - 20) ** 2 / 100 + (p["act"] != "tanh")
    )


def ga(seed, n=50):
    rng = random.Random(seed)
    prop = get_default_propagator(8, SPACE, rng=rng)
    breeder = Breeder(prop, SPACE, None, np.random.default_rng(seed))
    pop, out = [], []
    for _ in range(n):
        ind = breeder(pop)
        ind.loss = float(loss(ind))
        ind.active = True
        breeder.seen.add(ind)
        pop.append(ind)
        pop.sort(key=lambda i: i.loss)
        out.append(dict(ind))
    return out


def main():
    rs = RandomSearch(SPACE, random.Random(3))
    data = {
        "ga": ga(1),
        "random": [dict(rs()) for _ in range(20)],
        "sample": [SPACE.sample(np.random.default_rng(5)) for _ in range(1)]
        + [SPACE.sample(np.random.default_rng(5 + i)) for i in range(10)],
        "lhs": SPACE.latin_hypercube(10, seed=7),
        "keys": [list(SPACE.key(p)) for p in SPACE.latin_hypercube(5, seed=7)],
    }
    json.dump(data, sys.stdout, indent=0)


if __name__ == "__main__":
    main()
