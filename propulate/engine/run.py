"""Running the island model from a run's settings: what ``evolve --method propulate|random``
calls on every rank (the Propulate-1.2 front ends :class:`propulate.Islands` and
:class:`propulate.Propulator` build the same :class:`~propulate.engine.worker.Worker`)."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from propulate.engine.config import EngineConfig
from propulate.engine.result import RunResult, gather_result
from propulate.engine.worker import Worker
from propulate.propagators.registry import make_propagator

if TYPE_CHECKING:
    from propulate.methods import Job


def rank_rng(seed: int, rank: int) -> random.Random:
    """The random stream of one rank of a run with ``seed``."""
    return random.Random(seed * 1_000_003 + rank)


def run_engine(job: Job, comm: Any, propagator_name: str) -> RunResult:
    """Run the island model with the named propagator on every rank of ``comm`` (collective).

    Parameters
    ----------
    job : Job
        The run's objective, space, task, directory, settings, record fields and initial
        configurations.
    comm : MPI.Comm
        All ranks of the run.
    propagator_name : str
        A propagator of :data:`propulate.propagators.registry.PROPAGATORS`.

    Returns
    -------
    RunResult
        The same on every rank.
    """
    settings = job.settings
    rng = rank_rng(settings.seed, comm.Get_rank())
    propagator = make_propagator(propagator_name, job.space, settings, rng)
    pruner = None
    if settings.pruner:
        from propulate.pruners.registry import make_pruner

        pruner = make_pruner(settings.pruner, space=job.space)
    config = EngineConfig.from_settings(
        settings,
        checkpoint_path=job.out,
        space=job.space,
        task=job.task,
        meta=job.meta,
        initial=job.initial,
        pruner=pruner,
    )
    worker = Worker(job.loss, propagator, rng, config, comm)
    worker.run()
    return gather_result(worker, comm)


def run_islands(job: Job, comm: Any) -> RunResult:
    """Method ``propulate``: the island model with the settings' propagator."""
    return run_engine(job, comm, job.settings.propagator)


def run_random(job: Job, comm: Any) -> RunResult:
    """Method ``random``: uniform random search, distinct configurations, in the engine."""
    return run_engine(job, comm, "random")
