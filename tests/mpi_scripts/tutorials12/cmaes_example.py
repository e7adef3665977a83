"""Propulate 1.2's CMA-ES tutorial: ``CMAPropagator`` with the adapter ``--adapter`` names."""

import pathlib
import random

from mpi4py import MPI

from propulate import Propulator
from propulate.propagators import ActiveCMA, BasicCMA, CMAAdapter, CMAPropagator
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
    adapters = {"basic": BasicCMA, "active": ActiveCMA}
    if config.adapter not in adapters:
        raise ValueError(f"unknown adapter {config.adapter!r}: basic or active")
    adapter: CMAAdapter = adapters[config.adapter]()
    propagator = CMAPropagator(adapter, limits, rng=rng)
    propulator = Propulator(
        loss_fn=function,
        propagator=propagator,
        rng=rng,
        island_comm=comm,
        generations=config.generations,
        checkpoint_path=config.checkpoint,
    )
    propulator.propulate(logging_interval=config.logging_interval, debug=config.verbosity)
    propulator.summarize(top_n=config.top_n, debug=config.verbosity)
