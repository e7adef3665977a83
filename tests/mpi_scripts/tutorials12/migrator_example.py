"""``Migrator`` and ``Pollinator`` built by hand with Propulate 1.2's layout arguments: two
islands of one worker each on two ranks (island_counts [1, 1], island_displs [0, 1]).

    mpiexec -n 2 python migrator_example.py OUT migrator|pollinator

Rank 0 writes ``OUT/summary.json``: the number of islands summarized and their best losses.
"""

import json
import random
import sys
from pathlib import Path

import numpy as np
from mpi4py import MPI

from propulate import Migrator, Pollinator
from propulate.utils import get_default_propagator
from propulate.utils.benchmark_functions import get_function_search_space

out, kind = Path(sys.argv[1]), sys.argv[2]
world = MPI.COMM_WORLD
island = world.rank  # one worker per island
island_comm = world.Split(island, world.rank)
rng = random.Random(5 + world.rank)
function, limits = get_function_search_space("sphere")
cls = Migrator if kind == "migrator" else Pollinator
optimizer = cls(
    function,
    get_default_propagator(pop_size=4, limits=limits, rng=rng),
    rng,
    island_idx=island,
    island_comm=island_comm,
    propulate_comm=world,
    generations=60,
    checkpoint_path=out,
    migration_topology=np.array([[0, 1], [1, 0]]),
    migration_prob=0.5,
    island_displs=np.array([0, 1]),
    island_counts=np.array([1, 1]),
)
optimizer.propulate()
best = optimizer.summarize(top_n=1, debug=-1)
if world.rank == 0:
    (out / "summary.json").write_text(
        json.dumps({"islands": len(best), "best": [b[0].loss for b in best]})
    )
