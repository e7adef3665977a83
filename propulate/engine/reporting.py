"""Progress lines of a run: evaluations, best loss, rate, failures and the time left."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from propulate.runs.outcome import Outcome

log = logging.getLogger("propulate")


def report_progress(worker: Any, t0: float, final: bool = False) -> None:
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


def reached(worker: Any) -> str:
    """``best loss ...``, or for declared objectives their own terms
    (:func:`propulate.runs.front.describe`: the Pareto set's size and hypervolume, a maximised
    objective in its own sign)."""
    declared = worker.config.objectives
    if declared is None:
        best = worker.population.best
        return f"best loss {best.loss:.6g}" if best else "best loss -"
    from propulate.runs.front import describe

    return describe(declared, [i.objectives for i in worker.population if i.objectives])


def eta(worker: Any, done: int, rate: float, now: float) -> str:
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


def neighbour_losses(
    space: Any, population: Any, island: int, ind: Any
) -> Callable[[], list[float]] | None:
    """A function giving the losses of ``island``'s evaluated configurations nearest to ``ind``
    (the outlier rule of objectives that confirm their measurements); ``None`` without a space."""
    if space is None:
        return None

    def losses() -> list[float]:
        from propulate.user_objective.noise import nearest_losses

        done: Sequence[Any] = [i for i in population.active(island) if i.loss is not None]
        if not done:
            return []
        return nearest_losses(space.encode(ind), space.encode_many(done), [i.loss for i in done])

    return losses


def describe_failure(out: Outcome) -> str:
    """What a failed evaluation shows the user: the objective's own traceback, or for a failure
    the package reports with details (a command objective: :class:`EvaluationError`) the
    program's own error: its command line, exit code and the tail of its stderr, with no
    traceback through this package."""
    details = out.details or {}
    if "command" not in details:
        return out.traceback or out.error or out.status
    error = (out.error or out.status).removeprefix("EvaluationError: ")
    lines = [error, f"command: {details['command']}"]
    if details.get("timed_out"):
        lines.append("timed out (process group killed)")
    elif details.get("exit_code") is not None:
        lines.append(f"exit code: {details['exit_code']}")
    for stream in ("stderr", "stdout"):
        tail = str(details.get(stream) or "").rstrip()
        if tail:
            lines.append(f"{stream} (last lines):")
            lines += ["  " + line for line in tail.splitlines()[-10:]]
    return "\n".join(lines)
