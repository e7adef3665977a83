"""The median rule: stop an evaluation whose best value so far is worse than the median of the
finished evaluations' values at the same step."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sortedcontainers import SortedList

from propulate.pruners.base import Pruner
from propulate.runs.status import has_loss


class MedianPruner(Pruner):
    """Stop when the running evaluation's best value so far is worse than the median, at the
    same step, of the evaluations that finished with a loss (as Optuna's ``MedianPruner``).

    Parameters
    ----------
    startup : int
        Never stop before this many evaluations finished with a loss (on any rank).
    warmup : float
        Never stop before this step.
    min_values : int
        Never stop at a step fewer finished evaluations reported.
    """

    def __init__(self, startup: int = 5, warmup: float = 0, min_values: int = 1) -> None:
        for name, value in (("startup", startup), ("min_values", min_values)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"median {name} must be a whole number >= 0, got {value!r}")
        if isinstance(warmup, bool) or not warmup >= 0:
            raise ValueError(f"median warmup must be >= 0, got {warmup!r}")
        self.startup = startup
        self.warmup = warmup
        self.min_values = max(min_values, 1)
        self.finished = 0
        self.by_step: dict[float, SortedList] = {}
        self._best = float("inf")

    def start(self, params: Any) -> None:
        self._best = float("inf")

    def should_stop(self, curve: Sequence[Sequence[float]]) -> bool:
        if len(curve) == 1:
            self._best = float("inf")
        step, value = curve[-1][0], curve[-1][1]
        self._best = min(self._best, value)
        if self.finished < self.startup or step < self.warmup:
            return False
        values = self.by_step.get(step)
        if values is None or len(values) < self.min_values:
            return False
        n = len(values)
        median = values[n // 2] if n % 2 else 0.5 * (values[n // 2 - 1] + values[n // 2])
        return self._best > median

    def observe(self, individual: Any) -> None:
        """Keep the curve of an evaluation that finished with a loss."""
        curve = getattr(individual, "curve", None)
        if not curve or not has_loss(getattr(individual, "status", None)):
            return
        self.finished += 1
        for step, value in curve:
            self.by_step.setdefault(step, SortedList()).add(float(value))
