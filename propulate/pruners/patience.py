"""Patience: stop only an evaluation that stopped improving (optionally: and that another pruner
would stop)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from propulate.pruners.base import Pruner


class PatientPruner(Pruner):
    """Stop a stalled evaluation, if ``wrapped`` (when given) says stop too.

    An evaluation stalls when the best of its last ``patience + 1`` values is worse than its
    best before them by more than ``min_delta``; as Optuna's ``PatientPruner`` (so the
    Optuna baseline's ``patience`` option means the same), the wrapped pruner is asked only
    while the evaluation stalls.

    Parameters
    ----------
    wrapped : Pruner or None
        The rule applied to stalled evaluations (``None``: stop every stalled one).
    patience : int
        Steps without improvement tolerated (>= 1).
    min_delta : float
        How much worse than the earlier best the recent best may be without stalling, in the
        values' unit (>= 0).
    """

    def __init__(
        self, wrapped: Pruner | None = None, patience: int = 3, min_delta: float = 0.0
    ) -> None:
        if isinstance(patience, bool) or not isinstance(patience, int) or patience < 1:
            raise ValueError(f"patience must be a whole number >= 1, got {patience!r}")
        if isinstance(min_delta, bool) or not min_delta >= 0:
            raise ValueError(f"min_delta must be >= 0, got {min_delta!r}")
        self.wrapped = wrapped
        self.patience = patience
        self.min_delta = float(min_delta)

    def start(self, params: Any) -> None:
        if self.wrapped is not None:
            self.wrapped.start(params)

    def stalled(self, curve: Sequence[Sequence[float]]) -> bool:
        """Whether the best of the last ``patience + 1`` values is worse than the best before
        them by more than ``min_delta``."""
        window = self.patience + 1
        if len(curve) <= window:
            return False
        before = min(v for _, v in curve[:-window])
        recent = min(v for _, v in curve[-window:])
        return recent > before + self.min_delta

    def should_stop(self, curve: Sequence[Sequence[float]]) -> bool:
        if not self.stalled(curve):
            return False
        return True if self.wrapped is None else self.wrapped.should_stop(curve)

    def observe(self, individual: Any) -> None:
        if self.wrapped is not None and self.wrapped.observes:
            self.wrapped.observe(individual)

    @property
    def observes(self) -> bool:
        return self.wrapped is not None and self.wrapped.observes
