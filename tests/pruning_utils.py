"""What the pruning tests share: a learning curve set by the parameters, a pruner that stops
everything."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from propulate.pruners.base import Pruner


def level_curve(epochs: int, rise: float) -> Callable[[Any], Iterator[float]]:
    """A generator objective of ``epochs`` decreasing values ``level * (1 + rise / (e + 1))``
    whose level is ``0.1 + a + b``."""

    def loss(params: Any) -> Iterator[float]:
        level = 0.1 + params["a"] + params["b"]
        for epoch in range(epochs):
            yield level * (1.0 + rise / (epoch + 1))

    return loss


class StopAtSecond(Pruner):
    """Stops every evaluation at its second value: nothing ever finishes."""

    def should_stop(self, curve: Any) -> bool:
        return len(curve) >= 2
