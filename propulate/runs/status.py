"""The statuses of an evaluation record, in one table.

Every layer (the engine, the baselines, MLA and TLA2, the record readers, the status command,
the report and the tuning database) asks this table what a status means instead of listing
statuses itself, so a new status is one entry here.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Status:
    """What one status of a record means.

    Attributes
    ----------
    name : str
        The status as written into the record.
    has_loss : bool
        The record holds a final loss (only such records are bred from, modelled and reported
        as results).
    failure : bool
        The objective failed: counted by the failure limit, the summaries and ``status``.
    description : str
        One line for documentation.
    """

    name: str
    has_loss: bool
    failure: bool
    description: str


#: Every status a record may have, by name.
STATUSES: dict[str, Status] = {
    s.name: s
    for s in (
        Status("ok", True, False, "the objective returned a finite loss"),
        Status("failed", False, True, "the objective raised or returned no finite loss"),
        Status("timeout", False, True, "the evaluation ran past its eval_timeout"),
        Status(
            "interrupted",
            False,
            False,
            "the run's own stop (a signal, the time limit) ended the evaluation",
        ),
        Status(
            "pruned",
            False,
            False,
            "a pruner stopped the evaluation early; the record keeps the step it reached and "
            "its intermediate values",
        ),
    )
}

OK, FAILED, TIMEOUT, INTERRUPTED, PRUNED = "ok", "failed", "timeout", "interrupted", "pruned"

#: Statuses of records that hold a final loss (a set: hot paths test membership).
LOSS_STATUSES = frozenset(name for name, s in STATUSES.items() if s.has_loss)

#: Statuses that are failures of the objective.
FAILURE_STATUSES = frozenset(name for name, s in STATUSES.items() if s.failure)

#: Statuses that are not failures (a loss, or a stop the run or a pruner decided).
NOT_FAILED = tuple(name for name, s in STATUSES.items() if not s.failure)


def is_failure(status: object) -> bool:
    """Whether a record's status is a failure of the objective.

    An unknown or missing status counts as a failure: a record that cannot say it succeeded
    has not.
    """
    known = STATUSES.get(status) if isinstance(status, str) else None
    return True if known is None else known.failure


def has_loss(status: object) -> bool:
    """Whether a record with this status holds a final loss."""
    known = STATUSES.get(status) if isinstance(status, str) else None
    return known is not None and known.has_loss
