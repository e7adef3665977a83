"""Optuna TPE as a baseline: every MPI rank is an Optuna worker on one shared journal file.

With several declared objectives the ranks sample with Optuna's ``NSGAIISampler`` instead of
TPE (:func:`propulate.baselines.optuna_study.open_study`), and reports name the run "Optuna
NSGA-II" (:meth:`propulate.methods.Method.label_for`).

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
    running trials of the other workers are taken into account); in a conditional space with
    ``multivariate=True, group=True``, Optuna's setting for conditional spaces (each branch's
    parameters modelled jointly).
Search space
    :class:`~propulate.space.Float` maps to ``FloatDistribution(low, high, log=log)``,
    :class:`~propulate.space.Integer` to ``IntDistribution(low, high, log=log)`` and
    :class:`~propulate.space.Categorical` to ``CategoricalDistribution(choices)``, asked with
    ``study.ask(fixed_distributions)``; a conditional space is asked define-by-run, suggesting
    only the parameters whose condition holds (:func:`~propulate.baselines.optuna_study.ask`).
Constraints
    A suggestion that violates the space's constraint or a forbidden clause is not evaluated:
    it is recorded as a failed evaluation (``error="constraint violated"``), so it uses one
    evaluation of the budget, and told to the study as the worst loss this rank has measured
    (``FAIL`` before there is one): TPE ignores failed trials and would keep proposing an
    infeasible region it is not told about, and Optuna's ``constraints_func`` only works on
    evaluated trials; charging the budget is the honest accounting. The objective is called through
    :func:`propulate.runs.outcome.evaluate`, the outcome function of every method: exceptions
    (recorded with their traceback) and losses that are not finite numbers are ``FAIL`` trials
    and failed records too.
Budget
    ``--max-evaluations`` is a total over all ranks and sessions, enforced with the study's
    trial numbers, which the journal hands out atomically: a trial whose number is past the
    budget is not evaluated (it is told ``FAIL`` with the user attribute
    ``propulate_skip="surplus"`` and not recorded), so the run has exactly the budget of
    evaluations whatever the race between workers. ``--generations`` is trials per rank;
    ``--time-limit`` means that no trial starts after it.
Stopping
    SIGTERM, SIGUSR1 (:class:`~propulate.engine.signals.StopFlag`) or SIGINT (Ctrl-C) stops a
    rank after its current trial; the rank also sets the study's user attribute
    ``propulate_stop`` to the session id, which makes every other rank stop after its current
    trial as well. A rank whose last ``failure_limit`` evaluations all failed stops the run the
    same way, with the stop reason ``"failures"`` and the first of those errors.
Records
    Every evaluation goes through :class:`~propulate.compat.history.EvaluationLog` into ``OUT/evals/``
    with the fields of the island engine's records (island 0, ``generation`` the trial counter
    of the rank, ``traceback`` of a failure), so reports treat every method alike.
Resume
    Re-running with the same ``OUT`` reopens the journal: the study keeps its trials (TPE
    learns from them), trials left running by a killed run are told ``FAIL``, and the
    evaluations recorded before count against the budget. A trial told but not yet recorded
    when the run was killed stays in the study but is not counted, so the records always hold
    exactly the budget. The samplers of a resumed session are seeded with
    ``seed + rank + 100003 * (evaluations so far)`` so they do not replay the first session's
    draws.

The study's storage, distributions and set-up are in :mod:`propulate.baselines.optuna_study`.
"""

from __future__ import annotations

import logging
import math
import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from propulate.baselines.optuna_study import (
    JOURNAL_FILE,
    SKIP_ATTR,
    STOP_ATTR,
    STUDY_NAME,
    ask,
    distributions,
    journal_storage,
    open_study,
    wait_quietly,
)
from propulate.engine.evaluation import run_objective
from propulate.engine.result import RunResult
from propulate.engine.signals import StopFlag
from propulate.engine.steps import accepts_report
from propulate.runs.declared_objectives import UNDECLARED, Objectives
from propulate.runs.log import EvaluationLog
from propulate.runs.outcome import FAILED, PRUNED, Outcome, failure
from propulate.settings import EvolveSettings
from propulate.space import SearchSpace

log = logging.getLogger("propulate")
#: The error of a suggestion the space rejects (constraint or forbidden clause).
INFEASIBLE = "constraint violated"

__all__ = [
    "JOURNAL_FILE",
    "SKIP_ATTR",
    "STOP_ATTR",
    "STUDY_NAME",
    "BaselineResult",
    "distributions",
    "journal_storage",
    "run_optuna",
    "wait_quietly",
]


#: The baseline's result is the engine's: the evolve command reads both alike.
BaselineResult = RunResult


class TrialPruner:
    """An Optuna trial as a pruner: each value goes to ``trial.report(value, step)`` and the
    study's pruner decides (``trial.should_prune()``)."""

    def __init__(self, trial: Any) -> None:
        self.trial = trial

    def should_stop(self, curve: list[list[float]]) -> bool:
        step, value = curve[-1]
        self.trial.report(float(value), int(step))
        return bool(self.trial.should_prune())


def _outcome(
    loss_fn: Callable[[Mapping[str, Any]], Any],
    space: SearchSpace,
    params: Mapping[str, Any],
    task: Mapping[str, Any] | None,
    pruner: TrialPruner | None = None,
    report: bool = False,
    objectives: Objectives | None = None,
) -> Outcome:
    """The outcome of one configuration: the constraint first, then the objective (its
    intermediate values reported to the trial when the study has a pruner; its value read as
    the one declared objective, signed for minimisation, when there is one)."""
    start, t = time.time(), time.perf_counter()
    try:
        feasible = space.satisfies(params, task)
    except Exception as err:  # noqa: BLE001 - the user's constraint failed: a failed evaluation
        out = failure(err)
        out.start = start
        return out
    if not feasible:
        return Outcome(None, FAILED, INFEASIBLE, start=start)
    out = run_objective(loss_fn, params, pruner=pruner, report=report, objectives=objectives)
    out.start, out.seconds = start, time.perf_counter() - t
    return out


def optuna_pruner(spec: str) -> Any:
    """Optuna's pruner of a pruner spec (:mod:`propulate.pruners.registry`): ``asha`` ->
    ``SuccessiveHalvingPruner(min_resource=min_steps, reduction_factor=eta,
    bootstrap_count=bootstrap)``, ``median`` -> ``MedianPruner(n_startup_trials=startup,
    n_warmup_steps=warmup, n_min_trials=min_values)``, ``patience`` (or the ``patience``
    option) -> ``PatientPruner``. ``ValueError`` for the types Optuna does not have."""
    import optuna

    from propulate.pruners.registry import PRUNERS, parse_pruner

    name, opts = parse_pruner(spec)
    if not PRUNERS[name].capabilities.optuna:
        raise ValueError(f"pruner {name} has no Optuna counterpart")
    inner: Any = None
    if name == "asha":
        min_steps = float(opts.get("min_steps", 1))
        if not min_steps.is_integer():
            raise ValueError(
                f"Optuna's successive halving needs a whole min_steps, got {min_steps}"
            )
        inner = optuna.pruners.SuccessiveHalvingPruner(
            min_resource=int(min_steps),
            reduction_factor=int(opts.get("eta", 3)),
            bootstrap_count=int(opts.get("bootstrap", 0)),
        )
    elif name == "median":
        inner = optuna.pruners.MedianPruner(
            n_startup_trials=int(opts.get("startup", 5)),
            n_warmup_steps=int(opts.get("warmup", 0)),
            n_min_trials=max(int(opts.get("min_values", 1)), 1),
        )
    if "patience" in opts or name == "patience":
        return optuna.pruners.PatientPruner(
            inner, patience=int(opts.get("patience", 3)), min_delta=float(opts.get("min_delta", 0))
        )
    return inner


@contextmanager
def _stop_on_sigint(flag: StopFlag) -> Iterator[None]:
    """Let Ctrl-C (SIGINT) raise ``flag`` like SIGTERM, instead of a KeyboardInterrupt."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handle(signum: int, frame: object) -> None:
        flag.signum = signum

    previous = signal.signal(signal.SIGINT, handle)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def run_optuna(
    loss: Callable[[Mapping[str, Any]], Any],
    space: SearchSpace,
    task: Mapping[str, Any] | None,
    out: Path,
    meta: Mapping[str, Any],
    settings: EvolveSettings,
    comm: Any,
) -> BaselineResult:
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
    settings : EvolveSettings
        Used: ``seed``, ``max_evaluations`` (over all ranks and sessions), ``generations``
        (trials per rank), ``time_limit`` (seconds), ``failure_limit`` and
        ``progress_interval`` (seconds), ``pruner`` (Optuna's counterpart,
        :func:`optuna_pruner`, on the study; the objective's intermediate values go to
        ``trial.report``, a pruned trial is told ``PRUNED`` and recorded as ``pruned``).
        ``eval_timeout`` and ``ranks_per_worker > 1`` are not supported (``ValueError``).
    comm : MPI.Comm
        All ranks of the run.

    Returns
    -------
    BaselineResult
        The same on every rank.
    """
    import optuna
    from optuna.trial import TrialState

    if settings.ranks_per_worker != 1 or settings.eval_timeout is not None:
        raise ValueError(
            "the optuna baseline evaluates on one rank per worker, without an evaluation timeout"
        )
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    rank = comm.Get_rank()
    pruner = optuna_pruner(settings.pruner) if settings.pruner else None
    report = accepts_report(loss)
    objectives = Objectives.maybe(settings.objectives)
    several = objectives is not None and objectives.several
    if several and pruner is not None:
        raise ValueError("the optuna baseline cannot prune a search of several objectives")
    count = 1 if objectives is None else len(objectives)
    study, storage, info = open_study(
        out, rank, int(settings.seed), comm, pruner, count, conditional=bool(space.conditions)
    )
    session = info["session"]
    if rank == 0 and info["records"]:
        log.info(
            "resuming optuna study: %d trials, %d evaluations recorded in %s",
            info["trials"],
            info["records"],
            out,
        )
    study_id = storage.get_study_id_from_name(STUDY_NAME)
    # Trial numbers below ``limit`` are evaluations within the budget; the offset skips the
    # trials of earlier sessions that have no record (killed mid-trial, or surplus).
    limit = None
    if settings.max_evaluations is not None:
        limit = int(settings.max_evaluations) + info["trials"] - info["records"]
    dists = distributions(space)
    generation = int(info["last_gen"].get(rank, -1)) + 1
    evaluations = failures = streak = 0
    worst = -math.inf  # the worst loss this rank measured: what an infeasible trial is told
    streak_error: str | None = None
    stop_reason: str | None = None
    t0 = time.monotonic()
    progress_at = t0
    with (
        EvaluationLog(out, rank, session, meta) as logger,
        StopFlag() as flag,
        _stop_on_sigint(flag),
    ):
        while True:
            if flag.raised:
                study.set_user_attr(STOP_ATTR, session)  # tell the other workers
                stop_reason = "signal"
                break
            if study.user_attrs.get(STOP_ATTR) == session:
                stop_reason = "signal"
                break
            if settings.generations is not None and generation >= settings.generations:
                stop_reason = "generations"
                break
            if settings.time_limit is not None and time.monotonic() - t0 >= settings.time_limit:
                stop_reason = "time limit"
                break
            if limit is not None and storage.get_n_trials(study_id) >= limit:
                stop_reason = "budget"  # early out; the trial number below is the authority
                break
            trial, params = ask(study, space, dists)
            if limit is not None and trial.number >= limit:
                trial.set_user_attr(SKIP_ATTR, "surplus")
                study.tell(trial, state=TrialState.FAIL)
                stop_reason = "budget"
                break
            outcome = _outcome(
                loss,
                space,
                params,
                task,
                TrialPruner(trial) if pruner else None,
                report,
                objectives,
            )
            if outcome.ok and several:  # NSGA-II: every objective, signed for minimisation
                study.tell(trial, list(objectives.oriented(outcome.values)))  # type: ignore[union-attr, arg-type]
            elif outcome.ok:
                study.tell(trial, outcome.loss)
                worst = max(worst, outcome.loss)
            elif outcome.status == PRUNED:
                study.tell(trial, state=TrialState.PRUNED)
            elif outcome.error == INFEASIBLE and math.isfinite(worst):
                study.tell(trial, worst)  # TPE ignores FAIL trials and would propose it again
            else:
                study.tell(trial, state=TrialState.FAIL)
            logger.record(params, outcome, generation=generation)
            generation += 1
            evaluations += 1
            if outcome.ok:
                streak, streak_error = 0, None
            elif outcome.status != PRUNED:  # pruned: neither a loss nor a failure
                failures += 1
                streak += 1
                streak_error = streak_error or outcome.traceback or outcome.error
                if failures <= 3:
                    log.warning("evaluation failed (recorded): %s", outcome.error)
                if UNDECLARED in str(outcome.error) or 0 < settings.failure_limit <= streak:
                    study.set_user_attr(STOP_ATTR, session)
                    stop_reason = "failures"
                    break
            if rank == 0 and time.monotonic() - progress_at >= settings.progress_interval:
                progress_at = time.monotonic()
                log.info(
                    "optuna: %d evaluations on rank 0 in %.1f s", evaluations, progress_at - t0
                )
    wait_quietly(comm)  # every trial is told before the best is read
    wall_time = time.monotonic() - t0
    session_evaluations = comm.allreduce(evaluations)
    session_failures = comm.allreduce(failures)
    stops = comm.allgather((stop_reason, streak_error if stop_reason == "failures" else None))
    first_error = next((err for reason, err in stops if reason == "failures"), None)
    stop_reason = "failures" if any(r == "failures" for r, _ in stops) else stops[0][0]
    best: tuple[dict[str, Any] | None, float | None] = (None, None)
    if rank == 0:
        try:
            if several:  # the best by the first objective, as the records' loss
                done = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
                trial = min(done, key=lambda t: t.values[0])
            else:
                trial = study.best_trial
            best = (space.active(trial.params), float(trial.values[0]))
        except ValueError:  # no completed trial
            pass
        log.info(
            "optuna finished (%s): %d evaluations in %.1f s, best loss %s",
            stop_reason,
            session_evaluations,
            wall_time,
            best[1],
        )
    best_params, best_loss = comm.bcast(best, root=0)
    return RunResult(
        best_params=best_params,
        best_loss=best_loss,
        session_evaluations=session_evaluations,
        failures=int(info["failures"]) + session_failures,
        wall_time=comm.bcast(wall_time, root=0),
        stop_reason=stop_reason,
        first_error=first_error,
    )


def run_job(job: Any, comm: Any) -> BaselineResult:
    """Method ``optuna`` (:data:`propulate.methods.METHODS`): :func:`run_optuna` on a job."""
    return run_optuna(job.loss, job.space, job.task, job.out, job.meta, job.settings, comm)
