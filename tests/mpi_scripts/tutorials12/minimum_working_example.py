"""Propulate 1.2's minimum working example, as its users write it: ``propulate.utils`` used as
an attribute right after ``import propulate``, defaults everywhere, ``summarize()`` without
arguments (which prints the best individual). Runs in the current directory."""

import random

from mpi4py import MPI

import propulate

comm = MPI.COMM_WORLD
rng = random.Random(comm.rank)
propulate.utils.set_logger_config()


def loss_fn(params: dict[str, float]) -> float:
    """A 2-D sphere."""
    return params["x"] ** 2 + params["y"] ** 2


limits = {"x": (-5.12, 5.12), "y": (-5.12, 5.12)}
propagator = propulate.utils.get_default_propagator(pop_size=2 * comm.size, limits=limits, rng=rng)
propulator = propulate.Propulator(
    loss_fn=loss_fn,
    propagator=propagator,
    rng=rng,
    island_comm=comm,
    generations=40,
    checkpoint_path="./propulate_checkpoints",
)
propulator.propulate()
propulator.summarize()
