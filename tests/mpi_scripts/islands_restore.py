"""Run ``Islands`` (or only construct it on an existing checkpoint) and print, per rank, what
its island holds: each individual's parameters, loss, island, active flag and migration steps.

usage: islands_restore.py OUT JSON_OPTIONS   (islands, pollination, generations, restore)
"""

import json
import random
import sys

from mpi4py import MPI

from propulate import Islands, get_default_propagator
from propulate.space import SearchSpace

out, opts = sys.argv[1], json.loads(sys.argv[2])
comm = MPI.COMM_WORLD
space = SearchSpace({f"x{i}": (-5.0, 5.0) for i in range(3)})
rng = random.Random(1000 + comm.rank)
islands = Islands(
    lambda p: sum(v * v for v in p.values()),
    get_default_propagator(4, space, rng=rng),
    rng,
    generations=opts.get("generations", 12),
    num_islands=opts["islands"],
    migration_probability=0.6,
    pollination=opts["pollination"],
    checkpoint_path=out,
)
if not opts.get("restore"):
    islands.propulate()
held = sorted(
    (sorted(ind.items()), ind.loss, ind.island, ind.active, ind.migration_steps)
    for ind in islands.propulator.population
)
sys.stdout.write(json.dumps({"rank": comm.rank, "held": held}) + "\n")
sys.stdout.flush()
