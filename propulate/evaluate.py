"""One evaluation's outcome, decided in one place for every method.

The island model, random search, the Optuna baseline, MLA and TLA2 all call the objective
through :func:`evaluate` (or hand its return value to :func:`outcome_of`), so "what counts as a
loss" and the error text of a failure are the same everywhere.
"""

from __future__ import annotations

import math
import numbers
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

#: Status values of a record.
OK, FAILED, TIMEOUT, INTERRUPTED = "ok", "failed", "timeout", "interrupted"


class EvaluationError(Exception):
    """An objective's failure that carries details for the record (e.g. a command's exit code).

    Parameters
    ----------
    message : str
        One line saying what went wrong.
    details : dict
        JSON-ready details kept in the record (``exit_code``, ``stderr`` tail, ...).
    """

    def __init__(self, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.details = dict(details or {})


@dataclass
class Outcome:
    """The result of one evaluation.

    Attributes
    ----------
    loss : float or None
        The loss; ``None`` unless ``status == "ok"``.
    status : str
        ``ok``, ``failed``, ``timeout`` or ``interrupted``.
    error : str or None
        One line: the exception type and message (``None`` when ok).
    traceback : str or None
        The full traceback of a failure raised by the objective.
    details : dict
        Extra fields of the record (e.g. a command's exit code and stderr tail, its repeats).
    start : float
        Unix time at which the evaluation started.
    seconds : float
        How long it took.
    """

    loss: float | None
    status: str = OK
    error: str | None = None
    traceback: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    start: float = 0.0
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """Whether the evaluation gave a usable loss."""
        return self.status == OK


def as_loss(value: Any) -> float:
    """``value`` as a loss, or ``ValueError`` saying why it is not one.

    A loss is a real number (Python or numpy, not a bool, not a string) that is finite.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"loss is not a number: {value!r} ({type(value).__name__})")
    loss = float(value)
    if not math.isfinite(loss):
        raise ValueError(f"loss is not a finite number: {loss!r}")
    return loss


def outcome_of(value: Any) -> Outcome:
    """The outcome of an objective that returned ``value``.

    A ``float`` subclass with a ``details`` dict (a command's :class:`Measured` loss, holding
    every repeat) hands those details to the outcome.
    """
    try:
        out = Outcome(as_loss(value))
    except ValueError as err:
        return Outcome(None, FAILED, str(err))
    details = getattr(value, "details", None)
    if isinstance(details, dict):
        out.details = dict(details)
    return out


def failure(err: BaseException, status: str = FAILED) -> Outcome:
    """The outcome of an objective that raised ``err`` (with its traceback)."""
    tb = "".join(traceback.format_exception(type(err), err, err.__traceback__))
    details = dict(err.details) if isinstance(err, EvaluationError) else {}
    return Outcome(None, status, f"{type(err).__name__}: {err}".strip(), tb, details)


def evaluate(fn: Callable[..., Any], *args: Any) -> Outcome:
    """Call ``fn(*args)`` and return its outcome, timed; an exception is a failed outcome.

    ``KeyboardInterrupt`` and ``SystemExit`` are not caught.
    """
    start, t = time.time(), time.perf_counter()
    try:
        out = outcome_of(fn(*args))
    except Exception as err:  # noqa: BLE001 - any failure of user code is an outcome
        out = failure(err)
    out.start, out.seconds = start, time.perf_counter() - t
    return out
