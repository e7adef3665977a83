"""A configurable engine run for the MPI tests; writes a JSON report per rank.

usage: engine_run.py OUT JSON_OPTIONS
options: islands, pollination, migration_probability, max_evaluations, generations, time_limit,
eval_timeout, failure_limit, dims, loss ("sphere", "failing", "slow", "cat", "multirank",
"uneven", "always_fail", "sometimes_fail", "hang", "hang_once", "grid"), sleep, slow_sleep,
space ("grid" for nb 1..128 x threads 1..4, "tiny" for 4 x 2 configurations), propagator
("random" for InitUniform), ranks_per_worker, seed, pop_size, confirm (bool), share_window
(seconds, the engine's SHARE_WINDOW), design (the propagator says its first so many children
per worker come from a design the island's workers share)
"""

import json
import math
import random
import sys
import time

from mpi4py import MPI

from propulate import Islands, get_default_propagator
from propulate.engine import worker
from propulate.propagators import InitUniform, Propagator
from propulate.runs.outcome import Outcome
from propulate.space import Categorical, Integer, SearchSpace

out, opts = sys.argv[1], json.loads(sys.argv[2])
if "share_window" in opts:
    worker.SHARE_WINDOW = opts["share_window"]
comm = MPI.COMM_WORLD
dims = opts.get("dims", 4)
if opts.get("space") == "grid":
    space = SearchSpace({"nb": Integer(1, 128), "threads": Integer(1, 4)})
elif opts.get("space") == "tiny":
    space = SearchSpace({"a": Integer(0, 3), "b": Categorical(("x", "y"))})
else:
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


def uneven(p):
    # Rank 0 (the budget's host) is slow, the others fast.
    time.sleep(opts.get("slow_sleep", 0.5) if comm.rank == 0 else opts.get("sleep", 0.02))
    return sphere(p)


def cat(p):
    return sphere(p) + {"a": 3.0, "b": 2.0, "c": 0.0, "d": 1.0}[p["c"]]


def multirank(p, subcomm):
    # Every rank of the worker contributes; the leader's value is the loss.
    parts = subcomm.allreduce(sphere(p) / subcomm.Get_size())
    return parts


def always_fail(p):
    time.sleep(0.005)
    raise ValueError(f"broken objective at {p['x0']:.3f}")


def sometimes_fail(p):
    time.sleep(0.002)
    if random.random() < 0.3:
        raise RuntimeError("flaky")
    return sphere(p)


def hang(p):
    time.sleep(3600)
    return 0.0


def hang_once(p):
    # Every third evaluation of each rank hangs; the others are quick.
    hang_once.calls = getattr(hang_once, "calls", 0) + 1
    time.sleep(3600 if hang_once.calls % 3 == 1 else 0.01)
    return sphere(p)


def grid(p):
    time.sleep(0.002)
    return abs(p["nb"] - 77) + abs(p["threads"] - 3) if "nb" in p else abs(p["a"] - 2)


class Confirming:
    """A noisy objective that confirms would-be bests by re-measuring (loss + 1)."""

    def __init__(self):
        self.confirmed = 0

    def __call__(self, p):
        return sphere(p)

    def confirm(self, params, outcome):
        self.confirmed += 1
        return Outcome(outcome.loss + 1.0, details={"repeats": 2, "raw": outcome.loss})


losses = {
    "sphere": sphere,
    "failing": failing,
    "slow": slow,
    "cat": cat,
    "multirank": multirank,
    "uneven": uneven,
    "always_fail": always_fail,
    "sometimes_fail": sometimes_fail,
    "hang": hang,
    "hang_once": hang_once,
    "grid": grid,
}
loss = Confirming() if opts.get("confirm") else losses[opts.get("loss", "sphere")]
rng = random.Random(opts.get("seed", 1) * 1000 + comm.rank)
random.seed(opts.get("seed", 1) * 7 + comm.rank)
if opts.get("propagator") == "random":
    prop = InitUniform(space, rng=rng)
else:
    prop = get_default_propagator(opts.get("pop_size", 4), space, 0.7, 0.4, 0.1, rng=rng)


class SharedDesign(Propagator):
    """The propagator above, its first ``left`` children said to be of a shared design."""

    def __init__(self, inner: Propagator, left: int) -> None:
        super().__init__(-1, 1, rng)
        self.inner, self.left, self.space = inner, left, inner.space

    @property
    def shares_design(self) -> bool:
        return self.left > 0

    def __call__(self, inds):
        self.left -= 1
        return self.inner(inds)


if opts.get("design"):
    prop = SharedDesign(prop, opts["design"])
kwargs = {k: opts[k] for k in ("eval_timeout", "failure_limit") if k in opts}
isl = Islands(
    loss,
    prop,
    rng,
    generations=opts.get("generations", -1),
    num_islands=opts.get("islands", 1),
    migration_probability=opts.get("migration_probability", 0.0),
    pollination=opts.get("pollination", True),
    checkpoint_path=out,
    ranks_per_worker=opts.get("ranks_per_worker", 1),
    max_evaluations=opts.get("max_evaluations"),
    time_limit=opts.get("time_limit"),
    progress_interval=1.0,
    **kwargs,
)
if opts.get("ready_file") and comm.rank == 0:
    open(opts["ready_file"], "w").close()
isl.propulate()
result = isl.result()
best = isl.summarize(top_n=1)
w = isl.worker
report = {
    "rank": comm.rank,
    "leader": w.is_leader,
    "population": len(w.population),
    "uids": sorted(i.uid for i in w.population) if w.is_leader else [],
    "own_island_uids": sorted(i.uid for i in w.population if i.rank >= 0 and i.island == w.island)
    if w.is_leader
    else [],
    "island": w.island if w.is_leader else None,
    "evaluations": w.evaluations,
    "messages_sent": w.messenger.messages_sent if w.is_leader else 0,
    "stop_reason": w.stop_reason,
    "best": [b[0].loss for b in best if b],
    "migrated": sum(1 for i in w.population if i.migration_steps > 0) if w.is_leader else 0,
    "active_uids": sorted(i.uid for i in w.population if i.active and i.island == w.island)
    if w.is_leader
    else [],
    "emigrations": w.migration.emigrations if w.is_leader else 0,
    "migration_messages": w.migration.messages if w.is_leader else 0,
    "world_size": comm.Get_size(),
    "result": result.__dict__,
    "confirmed": getattr(loss, "confirmed", 0),
    "propulator_population": len(isl.propulator.population),
}
with open(f"{out}/report-{comm.rank}.json", "w") as fh:
    json.dump(report, fh)
