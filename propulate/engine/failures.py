"""A worker's failure rule: a run whose last ``failure_limit`` evaluations all failed stops;
and what a failed evaluation shows the user (:func:`describe_failure`).

An objective that always fails is a broken objective, not a hard problem. Only failures of the
objective count (:func:`propulate.runs.status.is_failure`): an interrupted or pruned evaluation
neither counts nor breaks a streak, a loss resets it. An objective that returns several values
to a run that declares no objectives (:data:`propulate.runs.declared_objectives.UNDECLARED`) is a
mistake of the run's options, which no further evaluation fixes: it stops the run at once.
"""

from __future__ import annotations

import logging

from propulate.runs.declared_objectives import UNDECLARED
from propulate.runs.outcome import Outcome
from propulate.runs.status import is_failure

log = logging.getLogger("propulate")


class FailureRule:
    """Counts one worker's failures and says when they stop the run.

    Parameters
    ----------
    limit : int
        Consecutive failures that stop the run (0: never).
    rank : int
        The worker's rank, for the log line.
    """

    def __init__(self, limit: int, rank: int) -> None:
        self.limit, self.rank = limit, rank
        self.count = 0
        self.streak = 0
        self.first_error: tuple[float, str] | None = None

    def after(self, out: Outcome) -> str | None:
        """Account for one evaluation's outcome; ``"failures"`` when the run must stop."""
        if out.ok:
            self.streak = 0
            return None
        if not is_failure(out.status):
            return None
        self.count += 1
        self.streak += 1
        if self.first_error is None:
            self.first_error = (out.start, describe_failure(out))
        if self.count <= 3:  # the progress lines count the rest
            log.warning("evaluation failed (recorded, never bred from): %s", out.error)
        if UNDECLARED in (out.error or ""):
            log.error("rank %d: %s; stopping the run", self.rank, out.error)
            return "failures"
        if self.limit and self.streak >= self.limit:
            log.error(
                "rank %d: the last %d evaluations all failed; stopping the run. First error:\n%s",
                self.rank,
                self.limit,
                self.first_error[1],
            )
            return "failures"
        return None


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
