"""Four workers of the ``bo`` propagator on a slow 4-D sphere: they tell each other what they
are evaluating.

    mpiexec -n 4 python bo_pending.py OUT

Rank r writes ``OUT/peers-<r>.json``: the announcements its propagator received, the most
points it held pending at once and its island's best loss.
"""

import json
import random
import sys
import time
from pathlib import Path

from mpi4py import MPI

from propulate.engine.config import EngineConfig
from propulate.engine.worker import Worker
from propulate.propagators.registry import make_propagator
from propulate.settings import EvolveSettings
from propulate.space import Float, SearchSpace

SPACE = SearchSpace({f"x{i}": Float(-5.0, 5.0) for i in range(4)})


def loss(params: dict) -> float:
    time.sleep(0.2)
    return sum((v - 1.0) ** 2 for v in params.values())


out = Path(sys.argv[1])
comm = MPI.COMM_WORLD
rng = random.Random(11 + comm.rank)
prop = make_propagator("bo", SPACE, EvolveSettings(propagator="bo"), rng)
config = EngineConfig(checkpoint_path=out, max_evaluations=48, space=SPACE, progress_interval=1e9)
worker = Worker(loss, prop, rng, config, comm)
worker.run()
best = min(ind.loss for ind in worker.population.active(0))
(out / f"peers-{comm.rank}.json").write_text(
    json.dumps({"received": prop.peers.received, "pending_seen": prop.peers.most, "best": best})
)
