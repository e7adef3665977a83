"""Optuna TPE as a baseline: every MPI rank is an Optuna worker on one shared journal file.

This is how Optuna's users parallelise a study over processes: one storage that all workers
see, one study, and each worker looping ``ask`` / evaluate / ``tell`` on its own, with its own
sampler. MPI is used only to start and end the run together; no optimization traffic goes over
it.

Set-up
    Rank 0 opens (or creates) the study ``"propulate"`` in the journal storage
    ``OUT/optuna-journal.log`` (:class:`optuna.storages.JournalStorage` over
    :class:`optuna.storages.journal.JournalFileBackend`, file locking by symlink, which works on
    NFS); the other ranks wait for it without spinning (:func:`wait_quietly`) and load it. Each
    rank samples with ``TPESampler(seed=seed + rank)`` (Optuna 5's default constant liar on, so
    running trials of the other workers are taken into account).
Search space
    :class:`~propulate.space.Float` maps to ``FloatDistribution(low, high, log=log)``,
    :class:`~propulate.space.Integer` to ``IntDistribution(low, high, log=log)`` and
    :class:`~propulate.space.Categorical` to ``CategoricalDistribution(choices)``, asked with
    ``study.ask(fixed_distributions)``.
Constraints
    A suggestion that violates the space's constraint is not evaluated: it is told to the study
    as a ``FAIL`` trial and recorded as a failed evaluation (``error="constraint violated"``),
    so it uses one evaluation of the budget. TPE has no way to avoid infeasible regions it is
    not told about, and Optuna's ``constraints_func`` only works on evaluated trials; charging
    the budget is the honest accounting. Exceptions and non-finite losses of the objective are
    ``FAIL`` trials and failed records too.
Budget
    ``--max-evaluations`` is a total over all ranks and sessions, enforced with the study's
    trial numbers, which the journal hands out atomically: a trial whose number is past the
    budget is not evaluated (it is told ``FAIL`` with the user attribute
    ``propulate_skip="surplus"`` and not recorded), so the run has exactly the budget of
    evaluations whatever the race between workers. ``--generations`` is trials per rank;
    ``--time-limit`` means that no trial starts after it.
Stopping
    SIGTERM or SIGUSR1 (:class:`~propulate.engine.signals.StopFlag`) stops a rank after its
    current trial; the rank also sets the study's user attribute ``propulate_stop`` to the
    session id, which makes every other rank stop after its current trial as well.
Records
    Every evaluation goes through :class:`~propulate.history.EvaluationLog` into ``OUT/evals/``
    with the fields of the island engine's records (island 0, ``generation`` the trial counter
    of the rank), so reports treat every method alike.
Resume
    Re-running with the same ``OUT`` reopens the journal: the study keeps its trials (TPE
    learns from them), trials left running by a killed run are told ``FAIL``, and the
    evaluations recorded before count against the budget. A trial told but not yet recorded
    when the run was killed stays in the study but is not counted, so the records always hold
    exactly the budget. The samplers of a resumed session are seeded with
    ``seed + rank + 100003 * (evaluations so far)`` so they do not replay the first session's
    draws.
"""

from __future__ import annotations

import argparse
import logging
import math
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from propulate.engine.signals import StopFlag
from propulate.history import EvaluationLog, iter_records, new_session_id
from propulate.space import Categorical, Float, Integer, SearchSpace

log = logging.getLogger("propulate")

#: File name of the study's journal inside the run directory.
JOURNAL_FILE = "optuna-journal.log"
#: Name of the study in the journal.
STUDY_NAME = "propulate"
#: Study user attribute: the session id of a run some rank of which was asked to stop.
STOP_ATTR = "propulate_stop"
#: Trial user attribute marking trials that were not evaluated (over the budget).
SKIP_ATTR = "propulate_skip"


def distributions(space: SearchSpace) -> dict[str, Any]:
    """Optuna distributions of a search space, in the space's order.

    Parameters
    ----------
    space : SearchSpace
        The parameter space.

    Returns
    -------
    dict[str, optuna.distributions.BaseDistribution]
        Parameter name to ``FloatDistribution``, ``IntDistribution`` (both with ``log``) or
        ``CategoricalDistribution``.
    """
    from optuna.distributions import (
        CategoricalDistribution,
        FloatDistribution,
        IntDistribution,
    )

    out: dict[str, Any] = {}
    for name, dim in space.dimensions.items():
        if isinstance(dim, Float):
            out[name] = FloatDistribution(float(dim.low), float(dim.high), log=dim.log)
        elif isinstance(dim, Integer):
            out[name] = IntDistribution(int(dim.low), int(dim.high), log=dim.log)
        elif isinstance(dim, Categorical):
            out[name] = CategoricalDistribution(list(dim.choices))
        else:  # pragma: no cover - SearchSpace only builds the three kinds
            raise TypeError(f"parameter {name!r}: unsupported dimension {dim!r}")
    return out


def wait_quietly(comm: Any, poll: float = 0.01) -> None:
    """A barrier that sleeps instead of spinning while it waits.

    A blocking ``MPI_Barrier`` busy-polls a core; here a rank that arrives early must leave the
    cores to the ranks still evaluating.

    Parameters
    ----------
    comm : MPI.Comm
        The communicator (collective).
    poll : float
        Seconds between completion tests.
    """
    req = comm.Ibarrier()
    while not req.Test():
        time.sleep(poll)


def journal_storage(out: Path) -> Any:
    """The journal-file storage of a run directory (``OUT/optuna-journal.log``)."""
    import optuna

    backend = optuna.storages.journal.JournalFileBackend(str(out / JOURNAL_FILE))
    return optuna.storages.JournalStorage(backend)


def _previous_records(out: Path) -> dict[str, Any]:
    """Counts of a run directory's earlier records: total, failures, last generation per rank."""
    total = failures = 0
    last_gen: dict[int, int] = {}
    for rec in iter_records(out):
        total += 1
        failures += rec.get("status") == "failed"
        r = int(rec.get("rank", 0))
        last_gen[r] = max(last_gen.get(r, -1), int(rec.get("generation", -1)))
    return {"records": total, "failures": failures, "last_gen": last_gen}


def _open_study(out: Path, rank: int, seed: int, comm: Any,
                ) -> tuple[Any, Any, dict[str, Any]]:
    """Create (rank 0) or load (others) the shared study; returns it, its storage and the
    resume state."""
    import optuna
    from optuna.trial import TrialState

    info: dict[str, Any] | None = None
    study = None
    storage = journal_storage(out)
    if rank == 0:
        study = optuna.create_study(storage=storage, study_name=STUDY_NAME,
                                    direction="minimize", load_if_exists=True)
        stale = study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
        for trial in stale:  # left running by a killed run: nobody will finish them
            study.tell(trial.number, state=TrialState.FAIL, skip_if_finished=True)
        info = _previous_records(out)
        info["trials"] = len(study.get_trials(deepcopy=False))
        info["stale"] = len(stale)
        info["session"] = new_session_id()
        study.set_user_attr(STOP_ATTR, None)
    wait_quietly(comm)  # the study exists before the other ranks load it
    info = comm.bcast(info, root=0)
    assert info is not None
    resumed = int(info["records"])
    sampler = optuna.samplers.TPESampler(seed=seed + rank + (100_003 * resumed if resumed else 0))
    if study is None:
        study = optuna.load_study(study_name=STUDY_NAME, storage=storage, sampler=sampler)
    else:
        study.sampler = sampler
    # every worker starts asking together: a rank slow to load the journal would otherwise
    # find the budget of a fast objective already spent by the others
    wait_quietly(comm)
    return study, storage, info


def _evaluate(loss_fn: Callable[[Mapping[str, Any]], float], space: SearchSpace,
              params: Mapping[str, Any], task: Mapping[str, Any] | None,
              ) -> tuple[float | None, str | None]:
    """Loss and error text of one configuration (constraint checked first)."""
    if not space.satisfies(params, task):
        return None, "constraint violated"
    try:
        loss = float(loss_fn(params))
    except Exception as err:  # noqa: BLE001 - any failure of user code is recorded
        return None, f"{type(err).__name__}: {err}"
    if not math.isfinite(loss):
        return None, f"loss is not a finite number: {loss!r}"
    return loss, None


def run_optuna(loss: Callable[[Mapping[str, Any]], float], space: SearchSpace,
               task: Mapping[str, Any] | None, out: Path, meta: Mapping[str, Any],
               args: argparse.Namespace, comm: Any) -> dict[str, Any]:
    """Run Optuna TPE on every rank of ``comm`` against one shared study (collective).

    Parameters
    ----------
    loss : callable
        ``loss(params) -> float`` (a task already bound).
    space : SearchSpace
        The parameter space and its constraint.
    task : mapping or None
        The task, for the constraint.
    out : Path
        The run directory (exists on entry); holds the journal and ``evals/``.
    meta : mapping
        Record fields ``task``, ``run``, ``method``.
    args : argparse.Namespace
        The ``evolve`` options: ``seed``, ``max_evaluations``, ``generations``, ``time_limit``,
        ``progress_interval``, ``ranks_per_worker`` (must be 1).
    comm : MPI.Comm
        All ranks of the run.

    Returns
    -------
    dict
        ``best_params``, ``best_loss`` (of the whole study, resumed trials included),
        ``session_evaluations`` (this session, all ranks), ``failures`` (whole run, from the
        records), ``wall_time`` (seconds on rank 0) and ``stop_reason`` (rank 0's).
    """
    import optuna
    from optuna.trial import TrialState

    if getattr(args, "ranks_per_worker", 1) != 1:
        raise ValueError("--method optuna evaluates on one rank per worker (--ranks-per-worker 1)")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    rank = comm.Get_rank()
    study, storage, info = _open_study(out, rank, int(args.seed), comm)
    session = info["session"]
    if rank == 0 and info["records"]:
        log.info("resuming optuna study: %d trials, %d evaluations recorded in %s",
                 info["trials"], info["records"], out)
    study_id = storage.get_study_id_from_name(STUDY_NAME)
    # Trial numbers below ``limit`` are evaluations within the budget; the offset skips the
    # trials of earlier sessions that have no record (killed mid-trial, or surplus).
    limit = None
    if args.max_evaluations is not None:
        limit = int(args.max_evaluations) + info["trials"] - info["records"]
    dists = distributions(space)
    generation = int(info["last_gen"].get(rank, -1)) + 1
    evaluations = failures = 0
    stop_reason: str | None = None
    t0 = time.monotonic()
    progress_at = t0
    with EvaluationLog(out, rank, session, meta) as logger, StopFlag() as flag:
        while True:
            if flag.raised:
                study.set_user_attr(STOP_ATTR, session)  # tell the other workers
                stop_reason = "signal"
                break
            if study.user_attrs.get(STOP_ATTR) == session:
                stop_reason = "signal"
                break
            if args.generations is not None and generation >= args.generations:
                stop_reason = "generations"
                break
            if args.time_limit is not None and time.monotonic() - t0 >= args.time_limit:
                stop_reason = "time limit"
                break
            if limit is not None and storage.get_n_trials(study_id) >= limit:
                stop_reason = "budget"  # early out; the trial number below is the authority
                break
            trial = study.ask(dists)
            if limit is not None and trial.number >= limit:
                trial.set_user_attr(SKIP_ATTR, "surplus")
                study.tell(trial, state=TrialState.FAIL)
                stop_reason = "budget"
                break
            params = {name: trial.params[name] for name in space.names}
            start, t = time.time(), time.perf_counter()
            value, error = _evaluate(loss, space, params, task)
            seconds = time.perf_counter() - t
            if error is None:
                study.tell(trial, value)
            else:
                study.tell(trial, state=TrialState.FAIL)
            logger.append(params, value, island=0, generation=generation, start=start,
                          seconds=seconds, error=error)
            generation += 1
            evaluations += 1
            if error is not None:
                failures += 1
                if failures <= 3:
                    log.warning("evaluation failed (recorded): %s", error)
            if rank == 0 and time.monotonic() - progress_at >= args.progress_interval:
                progress_at = time.monotonic()
                log.info("optuna: %d evaluations on rank 0 in %.1f s", evaluations,
                         progress_at - t0)
    wait_quietly(comm)  # every trial is told before the best is read
    wall_time = time.monotonic() - t0
    session_evaluations = comm.allreduce(evaluations)
    session_failures = comm.allreduce(failures)
    best_params: dict[str, Any] | None = None
    best_loss: float | None = None
    if rank == 0:
        try:
            best = study.best_trial
            best_params = {name: best.params[name] for name in space.names}
            best_loss = float(best.value)  # type: ignore[arg-type]
        except ValueError:  # no completed trial
            pass
        log.info("optuna finished (%s): %d evaluations in %.1f s, best loss %s", stop_reason,
                 session_evaluations, wall_time, best_loss)
    return {"best_params": best_params, "best_loss": best_loss,
            "session_evaluations": session_evaluations,
            "failures": int(info["failures"]) + session_failures,
            "wall_time": wall_time, "stop_reason": stop_reason}
