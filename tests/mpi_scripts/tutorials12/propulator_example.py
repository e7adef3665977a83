"""Propulate 1.2's Propulator tutorial: the default GA on a benchmark function chosen on the
command line (``parse_arguments``), a log file in the checkpoint folder."""

import pathlib
import random

from mpi4py import MPI

from propulate import Propulator
from propulate.utils import get_default_propagator, set_logger_config
from propulate.utils.benchmark_functions import get_function_search_space, parse_arguments

if __name__ == "__main__":
    comm = MPI.COMM_WORLD
    config, _ = parse_arguments(comm)
    set_logger_config(
        level=config.logging_level,
        log_file=f"{config.checkpoint}/{pathlib.Path(__file__).stem}.log",
        log_to_stdout=True,
        log_rank=False,
        colors=True,
    )
    rng = random.Random(config.seed + comm.rank)
    function, limits = get_function_search_space(config.function)
    propagator = get_default_propagator(
        pop_size=config.pop_size,
        limits=limits,
        crossover_prob=config.crossover_probability,
        mutation_prob=config.mutation_probability,
        random_init_prob=config.random_init_probability,
        rng=rng,
    )
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
