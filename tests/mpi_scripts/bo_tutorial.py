"""The development branch's Bayesian optimization tutorial wiring: a ``BayesianOptimizer`` per
rank, built with the rank, run by ``Propulator`` on the 2-D sphere.

    mpiexec -n 2 python bo_tutorial.py OUT

Rank 0 writes ``OUT/result.json``: the evaluations, the best loss and whether every evaluated
configuration stayed inside the limits.
"""

import json
import random
import sys
from pathlib import Path

from mpi4py import MPI

from propulate import Propulator
from propulate.compat.history import iter_records
from propulate.compat.utils import set_logger_config
from propulate.compat.utils.benchmark_functions import get_function_search_space
from propulate.propagators.bayesopt import BayesianOptimizer, MultiStartAcquisitionOptimizer

out = Path(sys.argv[1])
comm = MPI.COMM_WORLD
set_logger_config(level=40, log_file=None, log_to_stdout=False)
function, limits = get_function_search_space("sphere")
rng = random.Random(0 + comm.rank)
propagator = BayesianOptimizer(
    limits=limits,
    rank=comm.rank,
    optimizer=MultiStartAcquisitionOptimizer(n_candidates=256, n_restarts=8),
    acquisition_type="EI",
    acquisition_params={"xi": 0.05, "kappa": 2.5},
    rank_stretch=True,
    factor_min=0.5,
    factor_max=2.0,
    sparse=False,
    sparse_params={"max_points": 500},
    n_initial=8,
    initial_design="sobol",
    rng=rng,
)
propulator = Propulator(
    loss_fn=function,
    propagator=propagator,
    rng=random.Random(0 + comm.rank),
    island_comm=comm,
    generations=30,
    checkpoint_path=out / "run",
)
propulator.propulate(logging_interval=10, debug=0)
if comm.rank == 0:
    records = list(iter_records(out / "run"))
    inside = all(limits[k][0] <= v <= limits[k][1] for r in records for k, v in r["params"].items())
    best = min(r["loss"] for r in records)
    (out / "result.json").write_text(
        json.dumps({"evaluations": len(records), "best": best, "inside": inside})
    )
