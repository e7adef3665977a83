"""The message of an ``evolve`` run none of whose evaluations succeeded.

A run that stops within its budget before the failure limit (e.g. 16 evaluations under the
default limit of 20) ends like a successful one, and its failures only show later, in a step
that needs its losses ("no successful evaluations"). :func:`no_success_message` tells the run
itself: how many evaluations failed and the first failure, whose one-line error comes last, so
that the tail of a job's log shows it.
"""

from __future__ import annotations

from pathlib import Path

from propulate.engine.failures import describe_failure
from propulate.runs.log import iter_records
from propulate.runs.outcome import Outcome
from propulate.runs.status import is_failure


def no_success_message(out: Path) -> str | None:
    """The message for the run in ``out`` when it has failures and no loss, else ``None``.

    Only evaluations that could have given a loss count: a pruned one did (its run is not
    wasted), an interrupted one neither failed nor succeeded.
    """
    failed = 0
    first: dict | None = None
    for rec in iter_records(out):
        status = rec.get("status")
        if not is_failure(status):
            if status in ("ok", "pruned"):
                return None
            continue
        failed += 1
        if first is None or rec.get("start", 0.0) < first.get("start", 0.0):
            first = rec
    if first is None:
        return None
    outcome = Outcome(
        None,
        first.get("status", "failed"),
        first.get("error"),
        first.get("traceback"),
        first.get("details") or {},
    )
    text = describe_failure(outcome).rstrip()
    error = (first.get("error") or "").strip()
    lines = text.splitlines()
    if error and lines and lines[-1].strip() != error:  # the error line last, once
        same = {error, error.removeprefix("EvaluationError: ")}
        text = "\n".join(line for line in lines if line.strip() not in same) + "\n" + error
    what = "the only evaluation" if failed == 1 else f"all {failed} evaluations"
    return (
        f"propulate evolve: {what} of the run failed, none gave a loss (records in "
        f"{out}/evals); the first error:\n{text}"
    )
