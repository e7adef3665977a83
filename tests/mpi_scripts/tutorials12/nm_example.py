"""Propulate 1.2's Nelder-Mead tutorial: ``ParallelNelderMead`` from a seeded random start,
the ``Propulator`` given ``propulate_comm`` (not ``island_comm``) as 1.2's tutorial does."""

import pathlib
import random

import numpy as np
from mpi4py import MPI

from propulate import Propulator
from propulate.propagators.nm import ParallelNelderMead
from propulate.utils import set_logger_config
from propulate.utils.benchmark_functions import get_function_search_space, parse_arguments

if __name__ == "__main__":
    comm = MPI.COMM_WORLD
    config, _ = parse_arguments(comm)
    set_logger_config(
        level=config.logging_level,
        log_file=f"{config.checkpoint}/{pathlib.Path(__file__).stem}.log",
    )
    rng = random.Random(config.seed + comm.rank)
    function, limits = get_function_search_space(config.function)
    low = np.array([lo for lo, _ in limits.values()])
    high = np.array([hi for _, hi in limits.values()])
    start = np.random.default_rng(seed=config.seed + 1000).uniform(low=low, high=high)
    propagator = ParallelNelderMead(limits, rng=rng, start=start)
    propulator = Propulator(
        loss_fn=function,
        propagator=propagator,
        rng=rng,
        propulate_comm=comm,
        generations=config.generations,
        checkpoint_path=config.checkpoint,
    )
    propulator.propulate(logging_interval=config.logging_interval, debug=config.verbosity)
    propulator.summarize(top_n=config.top_n, debug=config.verbosity)
