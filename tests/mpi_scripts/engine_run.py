"""A configurable engine run for the MPI tests; writes a JSON report per rank.

usage: engine_run.py OUT JSON_OPTIONS
options: islands, pollination, migration_probability, max_evaluations, generations, time_limit,
dims, loss ("sphere", "failing", "slow", "cat"), ranks_per_worker, seed, pop_size
"""

import json
import math
import random
import sys
import time

from mpi4py import MPI

from propulate import Islands, get_default_propagator
from propulate.space import Categorical, SearchSpace

out, opts = sys.argv[1], json.loads(sys.argv[2])
comm = MPI.COMM_WORLD
dims = opts.get("dims", 4)
dimensions = {f"x{i}": (-5.0, 5.0) for i in range(dims)}
if opts.get("loss") == "cat":
    dimensions["c"] = Categorical(("a", "b", "c", "d"))
space = SearchSpace(dimensions)


def sphere(p):
    return sum(v * v for k, v in p.items() if k.startswith("x"))


def failing(p):
    if p["x0"] > 2.5:
        raise RuntimeError("boom")
    if p["x0"] < -2.5:
        return math.nan
    if p["x1"] > 4.0:
        return math.inf
    return sphere(p)


def slow(p):
    time.sleep(opts.get("sleep", 0.01))
    return sphere(p)


def cat(p):
    return sphere(p) + {"a": 3.0, "b": 2.0, "c": 0.0, "d": 1.0}[p["c"]]


def multirank(p, subcomm):
    # Every rank of the worker contributes; the leader's value is the loss.
    parts = subcomm.allreduce(sphere(p) / subcomm.Get_size())
    return parts


losses = {"sphere": sphere, "failing": failing, "slow": slow, "cat": cat, "multirank": multirank}
rng = random.Random(opts.get("seed", 1) * 1000 + comm.rank)
prop = get_default_propagator(opts.get("pop_size", 4), space, 0.7, 0.4, 0.1, rng=rng)
isl = Islands(
    losses[opts.get("loss", "sphere")], prop, rng,
    generations=opts.get("generations", -1),
    num_islands=opts.get("islands", 1),
    migration_probability=opts.get("migration_probability", 0.0),
    pollination=opts.get("pollination", True),
    checkpoint_path=out,
    ranks_per_worker=opts.get("ranks_per_worker", 1),
    max_evaluations=opts.get("max_evaluations"),
    time_limit=opts.get("time_limit"),
    progress_interval=1.0,
)
if opts.get("ready_file") and comm.rank == 0:
    open(opts["ready_file"], "w").close()
isl.propulate()
best = isl.summarize(top_n=1)
w = isl.worker
report = {
    "rank": comm.rank,
    "leader": w.is_leader,
    "population": len(w.population),
    "uids": sorted(i.uid for i in w.population) if w.is_leader else [],
    "own_island_uids": sorted(i.uid for i in w.population if i.rank >= 0 and
                              i.island == w.island) if w.is_leader else [],
    "island": w.island if w.is_leader else None,
    "evaluations": w.evaluations,
    "stop_reason": w.stop_reason,
    "best": [b[0].loss for b in best],
    "migrated": sum(1 for i in w.population if i.migration_steps > 0) if w.is_leader else 0,
    "world_size": comm.Get_size(),
}
with open(f"{out}/report-{comm.rank}.json", "w") as fh:
    json.dump(report, fh)
