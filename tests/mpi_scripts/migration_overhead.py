"""CPU per evaluation of one oversubscribed island-model run, for the scaling regression test.

usage: migration_overhead.py OUT ISLANDS MIGRATION_PROBABILITY EVALUATIONS_PER_RANK

Every evaluation sleeps 20 ms (no CPU), so the CPU the ranks spend inside ``propulate()`` is
the engine's own. Rank 0 writes ``OUT/overhead.json``: the CPU seconds of all ranks, the
evaluations, and their ratio in milliseconds.
"""

import json
import random
import sys
import time
from pathlib import Path

from mpi4py import MPI

from propulate import Islands, get_default_propagator
from propulate.space import SearchSpace

out, islands, probability, per_rank = (
    sys.argv[1],
    int(sys.argv[2]),
    float(sys.argv[3]),
    int(sys.argv[4]),
)
comm = MPI.COMM_WORLD
rng = random.Random(11 + comm.rank)
space = SearchSpace({f"x{i}": (-5.0, 5.0) for i in range(4)})


def loss(params: dict[str, float]) -> float:
    time.sleep(0.02)
    return sum(v * v for v in params.values())


opt = Islands(
    loss,
    get_default_propagator(8, space, rng=rng),
    rng,
    num_islands=islands,
    migration_probability=probability,
    checkpoint_path=out,
    progress_interval=1e9,
    max_evaluations=per_rank * comm.Get_size(),
    space=space,
)
cpu = time.process_time()
opt.propulate()
cpu = comm.reduce(time.process_time() - cpu, op=MPI.SUM, root=0)
evaluations = comm.reduce(opt.worker.evaluations, op=MPI.SUM, root=0)
if comm.rank == 0:
    report = {"cpu": cpu, "evaluations": evaluations, "ms_per_evaluation": 1000 * cpu / evaluations}
    Path(out, "overhead.json").write_text(json.dumps(report))
