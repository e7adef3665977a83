"""A run's progress lines (rank 0): evaluations, best loss, rate, failures and the time left.

They read the worker's own state: its budget, population, configuration, resumed count, stop
reason and deadline (:class:`propulate.engine.worker.Worker`).
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from propulate.engine.worker import Worker

log = logging.getLogger("propulate")


def report_progress(worker: Worker, t0: float, final: bool = False) -> None:
    """Log one progress line of ``worker`` (rank 0): evaluations, best loss, rate since ``t0``
    (``time.monotonic()`` at the session's start), failures and the ETA; the final line names
    the stop reason instead of the ETA."""
    now = time.monotonic()
    used = worker.budget.used() if worker.budget.limited else None
    done = used if used is not None else len(worker.population)
    budget = worker.config.max_evaluations
    rate = (done - worker.resumed) / max(now - t0, 1e-9)
    log.info(
        "%sevaluations %d/%s | %s | %.1f evaluations/s | failures %d%s",
        f"finished ({worker.stop_reason}): " if final else "",
        done,
        budget if budget is not None else "-",
        reached(worker),
        rate,
        worker.population.failures,
        "" if final else eta(worker, done, rate, now),
    )


def reached(worker: Worker) -> str:
    """``best loss ...``, or for declared objectives their own terms
    (:func:`propulate.runs.front.describe`: the Pareto set's size and hypervolume, a maximised
    objective in its own sign)."""
    declared = worker.config.objectives
    if declared is None:
        best = worker.population.best
        return f"best loss {best.loss:.6g}" if best else "best loss -"
    from propulate.runs.front import describe

    return describe(declared, [i.objectives for i in worker.population if i.objectives])


def eta(worker: Worker, done: int, rate: float, now: float) -> str:
    """`` | ETA ...`` from the budget or the time limit, whichever ends the run first."""
    left = []
    budget = worker.config.max_evaluations
    if budget is not None and rate > 0:
        left.append(max(budget - done, 0) / rate)
    if worker.deadline is not None:
        left.append(max(worker.deadline - now, 0.0))
    if not left:
        return ""
    s = int(round(min(left)))
    return f" | ETA {s // 3600:d}:{s % 3600 // 60:02d}:{s % 60:02d}"
