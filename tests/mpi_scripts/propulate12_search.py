"""Propulate 1.2's tutorials for CMA-ES, PSO and Nelder-Mead, wired as they wire them: one
propagator per rank, the rank given at construction, run by ``Propulator``.

    mpiexec -n 2 python propulate12_search.py OUT

Writes ``OUT/<variant>.json`` on rank 0 for every variant: the best loss and whether every
evaluated configuration stayed inside the limits.
"""

import json
import random
import sys
from pathlib import Path

import numpy as np
from mpi4py import MPI

from propulate import Propulator
from propulate.propagators import (
    ActiveCMA,
    BasicCMA,
    CMAAdapter,
    CMAPropagator,
    Conditional,
    Propagator,
    StatelessPSO,
)
from propulate.propagators.nm import ParallelNelderMead
from propulate.propagators.pso import (
    BasicPSO,
    CanonicalPSO,
    ConstrictionPSO,
    InitUniformPSO,
    VelocityClampingPSO,
)
from propulate.utils import set_logger_config
from propulate.utils.benchmark_functions import get_function_search_space

out = Path(sys.argv[1])
comm = MPI.COMM_WORLD
set_logger_config(level=40, log_file=None, log_to_stdout=False)
function, limits = get_function_search_space("sphere")


def propagator(variant: str, rng: random.Random) -> Propagator:
    rank = MPI.COMM_WORLD.rank
    if variant in ("basic_cma", "active_cma"):
        adapter: CMAAdapter = BasicCMA() if variant == "basic_cma" else ActiveCMA()
        return CMAPropagator(adapter, limits, rng=rng)
    if variant == "nm":
        low = np.array([v[0] for v in limits.values()])
        high = np.array([v[1] for v in limits.values()])
        start = np.random.default_rng(seed=235231).uniform(low=low, high=high)
        return ParallelNelderMead(limits, rng=rng, start=start)
    if variant == "Basic":
        pso: Propagator = BasicPSO(0.729, 1.49445, 1.49445, rank, limits, rng)
    elif variant == "VelocityClamping":
        pso = VelocityClampingPSO(0.729, 1.49445, 1.49445, rank, limits, rng, 0.6)
    elif variant == "Constriction":
        pso = ConstrictionPSO(2.05, 2.05, rank, limits, rng)
    elif variant == "Canonical":
        pso = CanonicalPSO(2.05, 2.05, rank, limits, rng)
    else:
        pso = StatelessPSO(1.49445, 1.49445, rank, limits, rng)
    init = InitUniformPSO(limits, rng=rng, rank=rank)
    return Conditional(4, pso, init)


for variant in (
    "basic_cma",
    "active_cma",
    "nm",
    "Basic",
    "VelocityClamping",
    "Constriction",
    "Canonical",
    "Stateless",
):
    rng = random.Random(7 + comm.rank)
    folder = out / variant
    propulator = Propulator(
        loss_fn=function,
        propagator=propagator(variant, rng),
        rng=rng,
        island_comm=comm,
        generations=150,
        checkpoint_path=folder,
    )
    propulator.propulate(logging_interval=10, debug=0)
    best = propulator.summarize(top_n=1, debug=0)
    inside = all(
        limits[k][0] <= v <= limits[k][1] for ind in propulator.population for k, v in ind.items()
    )
    everything = comm.gather(inside, root=0)
    if comm.rank == 0:
        (out / f"{variant}.json").write_text(
            json.dumps({"best": best[0][0].loss, "inside": all(everything)})
        )
