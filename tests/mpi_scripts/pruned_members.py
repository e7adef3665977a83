"""Multi-rank workers with a pruner: every rank of a worker must stop at the leader's step.

usage: pruned_members.py OUT RANKS_PER_WORKER
Each rank appends one line per evaluation to OUT/steps-r<rank>.txt: the steps its objective
ran. The objective yields 6 values with a collective per step (as a data-parallel training
would); the pruner stops every evaluation whose parameter x is above 0.5 at step 2.
"""

import random
import sys
from pathlib import Path

from mpi4py import MPI

from propulate import Islands, get_default_propagator
from propulate.pruners import Pruner

out, rpw = Path(sys.argv[1]), int(sys.argv[2])
rank = MPI.COMM_WORLD.Get_rank()


def loss(params, comm):
    steps = 0
    try:
        for step in range(6):
            total = comm.allreduce(params["x"])  # every rank of the worker takes part
            steps += 1
            yield total / comm.Get_size() + 1.0 / (step + 1)
    finally:
        with open(out / f"steps-r{rank}.txt", "a") as fh:
            fh.write(f"{params['x']:.17g} {steps}\n")


class StopHigh(Pruner):
    def start(self, params):
        self.x = params["x"]

    def should_stop(self, curve):
        return self.x > 0.5 and curve[-1][0] >= 2


rng = random.Random(rank)
limits = {"x": (0.0, 1.0)}
isl = Islands(
    loss,
    get_default_propagator(4, limits, rng=rng),
    rng,
    checkpoint_path=out / "run",
    ranks_per_worker=rpw,
    max_evaluations=12,
    space=limits,
    pruner=StopHigh(),
    progress_interval=1e6,
)
isl.propulate()
isl.result()
