"""A propagator with per-individual state and the outcome hook, run by the engine on every rank.

    mpiexec -n 2 python stateful_run.py OUT BUDGET

Each child carries ``state = {"born": rank, "n": k}``; the propagator counts what ``observe``
shows it. Rank r writes ``OUT/observed-<r>-<session>.json``: the states it observed.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

from mpi4py import MPI

from propulate.engine.config import EngineConfig
from propulate.engine.worker import Worker
from propulate.population import Individual
from propulate.propagators.base import Propagator
from propulate.space import Float, SearchSpace

SPACE = SearchSpace({"x": Float(-1.0, 1.0), "y": Float(-1.0, 1.0)})


class Counting(Propagator):
    """Random children carrying a state; remembers every state it observes."""

    def __init__(self, rank: int, rng: random.Random) -> None:
        super().__init__(-1, 1, rng)
        self.space = SPACE
        self.rank = rank
        self.bred = 0
        self.observed: list[dict | None] = []

    def __call__(self, inds):
        child = Individual({"x": self.rng.uniform(-1, 1), "y": self.rng.uniform(-1, 1)})
        child.state = {"born": self.rank, "n": self.bred}
        self.bred += 1
        return child

    def observe(self, individual: Individual) -> None:
        self.observed.append(individual.state)


def loss(params: dict) -> float:
    return params["x"] ** 2 + params["y"] ** 2


def main() -> None:
    out, budget = Path(sys.argv[1]), int(sys.argv[2])
    comm = MPI.COMM_WORLD
    rng = random.Random(11 + comm.rank)
    prop = Counting(comm.rank, rng)
    config = EngineConfig(
        checkpoint_path=out, max_evaluations=budget, space=SPACE, progress_interval=1e9
    )
    worker = Worker(loss, prop, rng, config, comm)
    resumed = list(prop.observed)  # observed while loading the earlier records
    worker.run()
    (out / f"observed-{comm.rank}-{worker.session}.json").write_text(
        json.dumps({"resumed": resumed, "all": prop.observed})
    )


if __name__ == "__main__":
    main()
