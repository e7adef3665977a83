"""Propulate 1.2's island tutorial: the default GA on several islands with a fully connected
topology of ``--num_migrants`` emigrants, migration or (``--pollination``) pollination."""

import pathlib
import random

import numpy as np
from mpi4py import MPI

from propulate import Islands
from propulate.propagators import SelectMax, SelectMin
from propulate.utils import get_default_propagator, set_logger_config
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
    propagator = get_default_propagator(
        pop_size=config.pop_size,
        limits=limits,
        crossover_prob=config.crossover_probability,
        mutation_prob=config.mutation_probability,
        random_init_prob=config.random_init_probability,
        rng=rng,
    )
    topology = config.num_migrants * np.ones((config.num_islands, config.num_islands), dtype=int)
    np.fill_diagonal(topology, 0)
    islands = Islands(
        loss_fn=function,
        propagator=propagator,
        rng=rng,
        generations=config.generations,
        num_islands=config.num_islands,
        migration_topology=topology,
        migration_probability=config.migration_probability,
        emigration_propagator=SelectMin,
        immigration_propagator=SelectMax,
        pollination=config.pollination,
        checkpoint_path=config.checkpoint,
    )
    islands.propulate(logging_interval=config.logging_interval, debug=config.verbosity)
    islands.summarize(config.top_n, debug=config.verbosity)
