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
