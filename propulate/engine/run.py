"""Running the island model from a run's settings: what ``evolve --method propulate|random``
calls on every rank (the Propulate-1.2 front ends :class:`propulate.Islands` and
:class:`propulate.Propulator` build the same :class:`~propulate.engine.worker.Worker`)."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from propulate.engine.config import EngineConfig
from propulate.engine.result import RunResult, gather_result
from propulate.engine.worker import Worker
from propulate.plugins.facts import RunFacts
from propulate.plugins.registry import Spec
from propulate.plugins.resolve import resolve
from propulate.propagators.registry import build_propagator
from propulate.pruners.registry import build_pruner

if TYPE_CHECKING:
    from propulate.runs.job import Job


def rank_rng(seed: int, rank: int) -> random.Random:
    """The random stream of one rank of a run with ``seed``."""
    return random.Random(seed * 1_000_003 + rank)


def run_engine(job: Job, comm: Any, propagator: Spec | None = None) -> RunResult:
    """Run the island model on every rank of ``comm`` (collective).

    Parameters
    ----------
    job : Job
        The run's objective, space, task, directory, settings, record fields and initial
        configurations.
    comm : MPI.Comm
        All ranks of the run.
    propagator : Spec, optional
        The propagator (default: the job's, checked once by the command line).

    Returns
    -------
    RunResult
        The same on every rank.
    """
    settings = job.settings
    plugins = job.plugins if job.plugins is not None else resolve(settings)
    rng = rank_rng(settings.seed, comm.Get_rank())
    facts = RunFacts.of(settings, job.space, comm.Get_size())
    built = build_propagator(propagator or plugins.propagator, job.space, rng, facts)
    pruner = None if plugins.pruner is None else build_pruner(plugins.pruner, job.space)
    config = EngineConfig.from_settings(
        settings,
        checkpoint_path=job.out,
        space=job.space,
        task=job.task,
        meta=job.meta,
        initial=job.initial,
        pruner=pruner,
    )
    worker = Worker(job.loss, built, rng, config, comm)
    worker.run()
    return gather_result(worker, comm)


def run_islands(job: Job, comm: Any) -> RunResult:
    """Method ``propulate``: the island model with the settings' propagator."""
    return run_engine(job, comm)


def run_random(job: Job, comm: Any) -> RunResult:
    """Method ``random``: uniform random search, distinct configurations, in the engine."""
    from propulate.propagators.registry import PROPAGATORS

    return run_engine(job, comm, PROPAGATORS.spec("random"))
