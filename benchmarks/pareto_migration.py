"""Emigrants with several objectives: by front and crowding distance against by loss alone.

Two islands of one worker each (2 MPI ranks), pollination, the default migration probability,
the Pareto GA with a pool of 40, on ZDT1 in 30-D. Variant ``pareto`` is the engine's default
(emigrants by non-dominated front, then crowding distance, ties at random, looked for in the
worker's Pareto pool); ``loss`` picks the emigrants with the lowest loss, i.e. the first
objective, as the engine did before. Printed per run: the hypervolume of every evaluation
(w.r.t. ``(1.1, 1.1)``; the true front's is 0.8767) and the slowest rank's seconds.

Usage::

    mpiexec -n 2 python benchmarks/pareto_migration.py --budget 20000 --seeds 1 2 3
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from mpi4py import MPI
from suite_runs import timed_run

from propulate import get_default_propagator
from propulate.population import Individual
from propulate.propagators.base import Propagator
from propulate.runs.declared_objectives import Objectives
from propulate.runs.dominance import hypervolume
from propulate.space import SearchSpace

DIM = 30


class ByLoss(Propagator):
    """The ``offspring`` lowest losses (not a ``SelectMin``, so the engine does not replace it
    by the Pareto choice)."""

    def __init__(self, offspring: int) -> None:
        super().__init__(-1, offspring)

    def __call__(self, inds: Sequence[Individual]) -> list[Individual]:
        return sorted(inds, key=lambda i: float(i.loss))[: self.offspring]  # type: ignore[arg-type]


def zdt1(x: np.ndarray) -> tuple[float, float]:
    """ZDT1's two objectives."""
    g = 1 + 9 * float(np.mean(x[1:]))
    return float(x[0]), g * (1 - float(np.sqrt(x[0] / g)))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--budget", type=int, default=20000)
    p.add_argument("--seeds", type=int, nargs="+", default=[1])
    p.add_argument("--variants", nargs="+", default=["pareto", "loss"])
    args = p.parse_args()
    comm = MPI.COMM_WORLD
    declared = Objectives.parse("f1:min,f2:min")
    space = SearchSpace({f"x{i}": (0.0, 1.0) for i in range(DIM)})
    names = space.names
    for seed in args.seeds:
        for variant in args.variants:
            trace: list[tuple[float, float, float]] = []

            def loss(params: Any, trace: list = trace) -> dict[str, float]:
                f = zdt1(np.fromiter((params[k] for k in names), float, DIM))
                trace.append((time.time(), *f))
                return {"f1": f[0], "f2": f[1]}

            rng = random.Random(seed * 1_000_003 + comm.rank)
            prop = get_default_propagator(40, space, rng=rng, objectives=declared)
            extra = {} if variant == "pareto" else {"emigration_propagator": ByLoss}
            done = timed_run(
                comm, loss, prop, rng, space, args.budget, trace, None,
                objectives=declared, num_islands=2, **extra,
            )  # fmt: skip
            if done is not None:
                merged, seconds = done
                points = np.array([e[1:] for e in merged[: args.budget]])
                hv = hypervolume(points, (1.1, 1.1))
                line = {"variant": variant, "seed": seed, "budget": args.budget}
                print(json.dumps({**line, "hv": round(hv, 4), "seconds": round(seconds, 1)}))


if __name__ == "__main__":
    main()
