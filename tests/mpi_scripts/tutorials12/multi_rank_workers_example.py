"""Propulate 1.2's multi-rank-worker tutorial: islands of workers of ``--ranks_per_worker``
ranks, each rank of a worker squaring one coordinate of a 2-D sphere; ``parse_arguments()``
called without a communicator. Needs ``num_islands * ranks_per_worker`` ranks at least (4 with
the defaults)."""

import pathlib
import random

import numpy as np
from mpi4py import MPI

from propulate import Islands
from propulate.propagators import SelectMax, SelectMin
from propulate.utils import get_default_propagator, set_logger_config
from propulate.utils.benchmark_functions import parse_arguments


def parallel_sphere(params: dict[str, float], comm: MPI.Comm = MPI.COMM_SELF) -> float:
    """A sphere whose squares the worker's ranks share: rank r squares coordinate r."""
    values = list(params.values())
    if comm == MPI.COMM_SELF:
        return float(np.sum(np.square(values)))
    return comm.allreduce(values[comm.rank] ** 2)


if __name__ == "__main__":
    world = MPI.COMM_WORLD
    config, _ = parse_arguments()
    set_logger_config(
        level=config.logging_level,
        log_file=f"{config.checkpoint}/{pathlib.Path(__file__).stem}.log",
    )
    rng = random.Random(config.seed + world.rank)
    limits = {"a": (-5.12, 5.12), "b": (-5.12, 5.12)}
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
        loss_fn=parallel_sphere,
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
        ranks_per_worker=config.ranks_per_worker,
    )
    islands.propulate(logging_interval=config.logging_interval, debug=config.verbosity)
    islands.summarize(top_n=config.top_n, debug=config.verbosity)
