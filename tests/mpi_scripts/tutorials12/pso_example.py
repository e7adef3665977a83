"""Propulate 1.2's particle-swarm tutorial: the ``--variant`` swarm, one particle per rank,
started by ``InitUniformPSO`` until the pool is full; constriction and canonical swarms take
2.05 for the coefficients the command line does not give (``hp_set``)."""

import pathlib
import random

from mpi4py import MPI

from propulate import Propulator, set_logger_config
from propulate.propagators import Conditional, Propagator
from propulate.propagators.pso import (
    BasicPSO,
    CanonicalPSO,
    ConstrictionPSO,
    InitUniformPSO,
    VelocityClampingPSO,
)
from propulate.utils.benchmark_functions import get_function_search_space, parse_arguments

if __name__ == "__main__":
    comm = MPI.COMM_WORLD
    config, hp_set = parse_arguments(comm)
    set_logger_config(
        level=config.logging_level,
        log_file=f"{config.checkpoint}/{pathlib.Path(__file__).stem}.log",
    )
    rng = random.Random(config.seed + comm.rank)
    function, limits = get_function_search_space(config.function)
    if config.variant in ("Constriction", "Canonical"):
        for name in ("cognitive", "social"):
            if not hp_set[name]:
                setattr(config, name, 2.05)
    rank = MPI.COMM_WORLD.rank
    swarm: Propagator
    if config.variant == "Basic":
        swarm = BasicPSO(config.inertia, config.cognitive, config.social, rank, limits, rng)
    elif config.variant == "VelocityClamping":
        swarm = VelocityClampingPSO(
            config.inertia,
            config.cognitive,
            config.social,
            rank,
            limits,
            rng,
            config.clamping_factor,
        )
    elif config.variant == "Constriction":
        swarm = ConstrictionPSO(config.cognitive, config.social, rank, limits, rng)
    else:
        swarm = CanonicalPSO(config.cognitive, config.social, rank, limits, rng)
    start = InitUniformPSO(limits, rng=rng, rank=rank)
    propagator = Conditional(config.pop_size, swarm, start)
    propulator = Propulator(
        function,
        propagator,
        rng=rng,
        island_comm=comm,
        generations=config.generations,
        checkpoint_path=config.checkpoint,
    )
    propulator.propulate(logging_interval=config.logging_interval, debug=config.verbosity)
    propulator.summarize(top_n=config.top_n, debug=config.verbosity)
