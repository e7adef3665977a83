"""One evaluation's outcome, decided in one place for every method.

The island model, random search, the Optuna baseline, MLA and TLA2 all call the objective
through :func:`evaluate` (or hand its return value to :func:`outcome_of`), so "what counts as a
loss" and the error text of a failure are the same everywhere. The statuses are those of
:mod:`propulate.runs.status`.
"""

from __future__ import annotations

import math
import numbers
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from propulate.runs.declared_objectives import Objectives, several_values_hint
from propulate.runs.status import FAILED, INTERRUPTED, LOSS_STATUSES, OK, PRUNED, TIMEOUT

__all__ = [
    "FAILED",
    "INTERRUPTED",
    "OK",
    "PRUNED",
    "TIMEOUT",
    "EvaluationError",
    "Outcome",
    "as_loss",
    "evaluate",
    "failure",
    "outcome_from",
    "outcome_of",
]


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
        The loss; ``None`` unless the status has one (``"ok"``). An outcome built with status
        ``"ok"`` and no finite loss becomes a failure naming the value.
    status : str
        A status of :data:`propulate.runs.status.STATUSES` (``ok``, ``failed``, ``timeout``,
        ``interrupted``, ``pruned``).
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
    curve : list of [int, float]
        The intermediate values the objective reported, ``[step, value]`` each (empty for an
        objective that reports none).
    values : dict or None
        A run with declared objectives (:mod:`propulate.runs.declared_objectives`): each objective's
        value, in natural units (``None`` without a declaration, or when not ok).
    """

    loss: float | None
    status: str = OK
    error: str | None = None
    traceback: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    start: float = 0.0
    seconds: float = 0.0
    curve: list[list[float]] = field(default_factory=list)
    values: dict[str, float] | None = None

    def __post_init__(self) -> None:
        if self.status in LOSS_STATUSES:
            loss = self.loss
            if type(loss) is not float or loss - loss != 0.0:
                try:
                    self.loss = as_loss(loss)
                except ValueError as err:
                    self.loss, self.status, self.values = None, FAILED, None
                    self.error = self.error or str(err)
        else:
            self.loss = self.values = None

    @property
    def ok(self) -> bool:
        """Whether the evaluation gave a usable loss."""
        return self.status in LOSS_STATUSES


def as_loss(value: Any) -> float:
    """``value`` as a loss, or ``ValueError`` saying why it is not one.

    A loss is a real number (Python or numpy, not a bool, not a string) that is finite.
    """
    if type(value) is float and value - value == 0.0:  # the common case, without the checks
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"loss is not a number: {value!r} ({type(value).__name__})")
    loss = float(value)
    if not math.isfinite(loss):
        raise ValueError(f"loss is not a finite number: {loss!r}")
    return loss


def outcome_of(value: Any, objectives: Objectives | None = None) -> Outcome:
    """The outcome of an objective that returned ``value``.

    A ``float`` subclass with a ``details`` dict (a command's :class:`Measured` loss, holding
    every repeat) hands those details to the outcome. With declared ``objectives`` the value
    holds one value per objective (:meth:`Objectives.values_of`); the loss is
    :meth:`Objectives.loss_of` them (the first, signed for minimisation, or the weighted sum),
    and a missing or non-finite value is a failure naming it.
    """
    if objectives is None and type(value) is float and value - value == 0.0:
        return Outcome(value)  # a plain finite float: no details to carry
    try:
        if objectives is None:
            out = Outcome(as_loss(value))
        else:
            values = objectives.values_of(value)
            out = Outcome(objectives.loss_of(values), values=values)
    except ValueError as err:
        hint = several_values_hint(value) if objectives is None else None
        return Outcome(None, FAILED, hint or str(err))
    details = getattr(value, "details", None)
    if isinstance(details, dict):
        out.details = dict(details)
    return out


def outcome_from(
    loss: Any,
    status: str | None = None,
    error: str | None = None,
    traceback: str | None = None,
    details: Mapping[str, Any] | None = None,
) -> Outcome:
    """The outcome given as its parts (e.g. by a log writer's caller).

    A loss that is not a finite number, an ``error`` or a ``status`` other than ``"ok"`` make
    it no loss: the status is the one given (``"failed"`` when none or ``"ok"`` was given) and
    the error says what was wrong.
    """
    extra = dict(details or {})
    if error is None and status in (None, OK):
        return Outcome(loss, OK, None, traceback, extra)
    status = FAILED if status in (None, OK) else status
    if error is None:
        error = f"evaluation {status}"
    return Outcome(None, status, error, traceback, extra)


def failure(err: BaseException, status: str = FAILED) -> Outcome:
    """The outcome of an objective that raised ``err`` (with its traceback)."""
    tb = "".join(traceback.format_exception(type(err), err, err.__traceback__))
    details = dict(err.details) if isinstance(err, EvaluationError) else {}
    return Outcome(None, status, f"{type(err).__name__}: {err}".strip(), tb, details)


def evaluate(fn: Callable[..., Any], *args: Any, objectives: Objectives | None = None) -> Outcome:
    """Call ``fn(*args)`` and return its outcome, timed; an exception is a failed outcome.

    With declared ``objectives`` the return value is read as them (:func:`outcome_of`).
    ``KeyboardInterrupt`` and ``SystemExit`` are not caught.
    """
    start, t = time.time(), time.perf_counter()
    try:
        out = outcome_of(fn(*args), objectives)
    except Exception as err:  # noqa: BLE001 - any failure of user code is an outcome
        out = failure(err)
    out.start, out.seconds = start, time.perf_counter() - t
    return out
