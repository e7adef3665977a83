"""A script written for Propulate 1.2 (PyPI), unchanged apart from its paths."""

import random
import sys

from mpi4py import MPI

import propulate
from propulate.utils import get_default_propagator, set_logger_config
from propulate.utils.benchmark_functions import get_function_search_space

if __name__ == "__main__":
    checkpoint = sys.argv[1]
    comm = MPI.COMM_WORLD
    rng = random.Random(42 + comm.rank)
    benchmark_function, limits = get_function_search_space("sphere")
    set_logger_config()
    propagator = get_default_propagator(
        pop_size=4,
        limits=limits,
        crossover_prob=0.7,
        mutation_prob=0.4,
        random_init_prob=0.1,
        rng=rng,
    )
    if sys.argv[2] == "propulator":
        optimizer = propulate.Propulator(
            loss_fn=benchmark_function,
            propagator=propagator,
            rng=rng,
            island_comm=comm,
            generations=100,
            checkpoint_path=checkpoint,
        )
    else:
        optimizer = propulate.Islands(
            loss_fn=benchmark_function,
            propagator=propagator,
            rng=rng,
            generations=100,
            num_islands=2,
            migration_probability=0.9,
            pollination=True,
            checkpoint_path=checkpoint,
        )
    optimizer.propulate(logging_interval=10, debug=1)
    best = optimizer.summarize(top_n=1, debug=1)
    if comm.rank == 0:
        print("BEST", best[0][0].loss)
