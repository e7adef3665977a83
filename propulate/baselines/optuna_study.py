"""The shared Optuna study of a baseline run: its journal storage, distributions and set-up.

Every MPI rank of an Optuna baseline run works on one study (``"propulate"``) in one journal
file (``OUT/optuna-journal.log``). This module opens that study on every rank (rank 0 creates
or resumes it, the others load it), maps a :class:`~propulate.space.SearchSpace` to Optuna
distributions, and provides the quiet barrier the ranks wait at. The worker loop itself is
:func:`propulate.baselines.optuna_worker.run_optuna`.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from propulate.runs.log import iter_records, new_session_id
from propulate.runs.status import NOT_FAILED
from propulate.space import Categorical, Float, Integer, SearchSpace

__all__ = [
    "JOURNAL_FILE",
    "SKIP_ATTR",
    "STOP_ATTR",
    "STUDY_NAME",
    "ask",
    "distributions",
    "journal_storage",
    "open_study",
    "previous_records",
    "tpe_sampler",
    "wait_quietly",
]

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


def tpe_sampler(seed: int, conditional: bool = False) -> Any:
    """Optuna's TPE sampler with ``seed``; for a conditional space ``group=True`` (with
    ``multivariate=True``, Optuna's setting for conditional spaces): the parameters are
    modelled jointly within each group that past trials held together (a branch and the
    shared parameters), instead of the branch's parameters one by one."""
    import warnings

    import optuna

    if not conditional:
        return optuna.samplers.TPESampler(seed=seed)
    with warnings.catch_warnings():  # group is an experimental feature of Optuna
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        return optuna.samplers.TPESampler(seed=seed, multivariate=True, group=True)


def ask(study: Any, space: SearchSpace, dists: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """A new trial and its configuration, in the space's order.

    An unconditional space is asked with fixed distributions (``study.ask(dists)``). A
    conditional one is asked define-by-run: each parameter is suggested, in an order that puts
    every parent before its children, only when its condition holds on the values suggested so
    far, so the trial holds the active parameters only (Optuna's TPE then models each
    parameter on the trials where it was active).

    Parameters
    ----------
    study : optuna.Study
        The study.
    space : SearchSpace
        The parameter space.
    dists : dict
        Its :func:`distributions`.
    """
    if not space.conditions:
        trial = study.ask(dists)
        params = trial.params  # a copy per access: once, not once per parameter
        return trial, {name: params[name] for name in space.names}
    from optuna.distributions import CategoricalDistribution, IntDistribution

    trial = study.ask()
    values: dict[str, Any] = {}
    for name in space.order:
        cond = space.conditions.get(name)
        if cond is not None and not cond.holds(values):
            continue
        d = dists[name]
        if isinstance(d, CategoricalDistribution):
            values[name] = trial.suggest_categorical(name, d.choices)
        elif isinstance(d, IntDistribution):
            values[name] = trial.suggest_int(name, d.low, d.high, log=d.log)
        else:
            values[name] = trial.suggest_float(name, d.low, d.high, log=d.log)
    return trial, {n: values[n] for n in space.names if n in values}


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
    """The journal-file storage of a run directory (``OUT/optuna-journal.log``).

    Optuna's file backend forces every journal line to disk (``fsync``), 33 per trial of 30
    parameters; this one forces a trial's lines once, with its result
    (:class:`propulate.baselines.optuna_journal.TrialDurableBackend`).

    Parameters
    ----------
    out : Path
        The run directory.

    Returns
    -------
    optuna.storages.JournalStorage
        The storage over a :class:`optuna.storages.journal.JournalFileBackend`.
    """
    import optuna

    from propulate.baselines.optuna_journal import TrialDurableBackend

    return optuna.storages.JournalStorage(TrialDurableBackend(str(out / JOURNAL_FILE)))


def previous_records(out: Path) -> dict[str, Any]:
    """Counts of a run directory's earlier records.

    Parameters
    ----------
    out : Path
        The run directory.

    Returns
    -------
    dict[str, Any]
        ``records`` (total), ``failures`` and ``last_gen`` (rank to its last generation).
    """
    total = failures = 0
    last_gen: dict[int, int] = {}
    for rec in iter_records(out):
        total += 1
        failures += rec.get("status") not in NOT_FAILED
        r = int(rec.get("rank", 0))
        last_gen[r] = max(last_gen.get(r, -1), int(rec.get("generation", -1)))
    return {"records": total, "failures": failures, "last_gen": last_gen}


def open_study(
    out: Path,
    rank: int,
    seed: int,
    comm: Any,
    pruner: Any = None,
    objectives: int = 1,
    conditional: bool = False,
) -> tuple[Any, Any, dict[str, Any]]:
    """Create (rank 0) or load (others) the shared study (collective).

    Rank 0 fails the trials a killed run left running, counts the earlier records and draws
    the session id; every rank then gets a ``TPESampler`` seeded with ``seed + rank`` (plus
    ``100003`` times the evaluations so far when resuming), grouped for a conditional space
    (:func:`tpe_sampler`).

    Parameters
    ----------
    out : Path
        The run directory.
    rank : int
        This rank in ``comm``.
    seed : int
        The run's seed.
    comm : MPI.Comm
        All ranks of the run.
    pruner : optuna.pruners.BasePruner, optional
        The study's pruner (default: none, Optuna's ``NopPruner``).
    objectives : int
        Number of objectives, each told signed for minimisation; with more than one the
        sampler is Optuna's ``NSGAIISampler`` (same seeds) instead of TPE.
    conditional : bool
        Whether the search space has conditional parameters (:func:`tpe_sampler`).

    Returns
    -------
    tuple
        The study, its storage and the resume state: the keys of :func:`previous_records`
        plus ``trials``, ``stale`` (trials failed because left running) and ``session``.
    """
    import optuna
    from optuna.trial import TrialState

    if pruner is None:
        pruner = optuna.pruners.NopPruner()
    info: dict[str, Any] | None = None
    study = None
    storage = journal_storage(out)
    if rank == 0:
        study = optuna.create_study(
            storage=storage,
            study_name=STUDY_NAME,
            directions=["minimize"] * objectives,
            load_if_exists=True,
            pruner=pruner,
        )
        stale = study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
        for trial in stale:  # left running by a killed run: nobody will finish them
            study.tell(trial.number, state=TrialState.FAIL, skip_if_finished=True)
        info = previous_records(out)
        info["trials"] = len(study.get_trials(deepcopy=False))
        info["stale"] = len(stale)
        info["session"] = new_session_id()
        study.set_user_attr(STOP_ATTR, None)
    wait_quietly(comm)  # the study exists before the other ranks load it
    info = comm.bcast(info, root=0)
    assert info is not None
    resumed = int(info["records"])
    sampler_seed = seed + rank + (100_003 * resumed if resumed else 0)
    sampler = (
        optuna.samplers.NSGAIISampler(seed=sampler_seed)
        if objectives > 1
        else tpe_sampler(sampler_seed, conditional)
    )
    if study is None:
        study = optuna.load_study(
            study_name=STUDY_NAME, storage=storage, sampler=sampler, pruner=pruner
        )
    else:
        study.sampler = sampler
        study.pruner = pruner
    # every worker starts asking together: a rank slow to load the journal would otherwise
    # find the budget of a fast objective already spent by the others
    wait_quietly(comm)
    return study, storage, info
