"""A Propulate 1.2 script in which one rank dies: rank 1 raises after building the optimizer,
while rank 0 runs. The whole job must end (non-zero) instead of rank 0 waiting on rank 1."""

import random
import sys
import time

from mpi4py import MPI

from propulate import Propulator
from propulate.utils import get_default_propagator


def slow_sphere(params: dict[str, float]) -> float:
    time.sleep(0.01)
    return sum(v * v for v in params.values())


comm = MPI.COMM_WORLD
rng = random.Random(comm.rank)
limits = {"a": (-1.0, 1.0), "b": (-1.0, 1.0)}
propulator = Propulator(
    loss_fn=slow_sphere,
    propagator=get_default_propagator(pop_size=4, limits=limits, rng=rng),
    rng=rng,
    island_comm=comm,
    generations=100_000,
    checkpoint_path=sys.argv[1],
)
if comm.rank == 1:
    raise RuntimeError("rank 1 fails on purpose")
propulator.propulate()
