"""What a run ended with, the same on every rank: :class:`RunResult`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: Stop reasons, most decisive first: when workers stopped for different reasons, the run's
#: reason is the first of this order that any worker gives.
STOP_REASONS = ("failures", "signal", "space exhausted", "time limit", "budget", "generations")


@dataclass
class RunResult:
    """The outcome of one session of a run (:meth:`propulate.Islands.result`).

    Attributes
    ----------
    best_params : dict or None
        The best configuration over all islands (None when nothing succeeded).
    best_loss : float or None
        Its loss.
    session_evaluations : int
        Evaluations of this session over all workers (resumed ones not counted).
    failures : int
        Failed evaluations (status ``failed`` or ``timeout``) of the whole run, resumed
        sessions included.
    wall_time : float
        Seconds this session's workers ran (the longest of them).
    stop_reason : str or None
        ``"budget"``, ``"generations"``, ``"time limit"``, ``"signal"``, ``"failures"`` or
        ``"space exhausted"`` (None before the run).
    first_error : str or None
        When ``stop_reason == "failures"``: the traceback text of this session's first failed
        evaluation.
    """

    best_params: dict[str, Any] | None
    best_loss: float | None
    session_evaluations: int
    failures: int
    wall_time: float
    stop_reason: str | None
    first_error: str | None


def combine_stop_reasons(reasons: list[str | None]) -> str | None:
    """The run's stop reason from the workers' (see :data:`STOP_REASONS`)."""
    present = {r for r in reasons if r is not None}
    for reason in STOP_REASONS:
        if reason in present:
            return reason
    return next(iter(sorted(present)), None)


def gather_result(worker: Any, comm: Any) -> RunResult:
    """What a run ended with, from every rank's worker (collective: call on every rank after
    :meth:`~propulate.engine.worker.Worker.run`).

    Returns
    -------
    RunResult
        Best configuration and loss over all islands, this session's evaluations, the run's
        failures, wall time, stop reason and, when failures stopped the run, the first
        failure's traceback; the same on every rank.
    """
    w = worker
    mine: tuple[Any, ...] | None = None
    if w.is_leader:
        best = w.population.best_of(w.island, 1)
        mine = (
            w.island,
            w.island_index,
            (dict(best[0]), best[0].loss) if best else None,
            w.evaluations,
            w.population.failures,
            w.wall_time,
            w.stop_reason,
            w.first_error,
        )
    everyone = comm.allgather(mine)
    leaders = [m for m in everyone if m is not None]
    bests = [m[2] for m in leaders if m[2] is not None]
    params, loss = min(bests, key=lambda b: b[1]) if bests else (None, None)
    failures = sum(m[4] for m in leaders if m[1] == 0)  # one view per island
    reason = combine_stop_reasons([m[6] for m in leaders])
    errors = sorted(m[7] for m in leaders if m[7] is not None)
    return RunResult(
        best_params=params,
        best_loss=loss,
        session_evaluations=sum(m[3] for m in leaders),
        failures=failures,
        wall_time=max(m[5] for m in leaders),
        stop_reason=reason,
        first_error=errors[0][1] if errors and reason == "failures" else None,
    )
