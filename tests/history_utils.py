"""The record fields and the writer helper shared by the tests of the evaluation log."""

from __future__ import annotations

from typing import Any

from propulate.compat.history import EvaluationLog

META = {"task": "t1", "run": "seed0", "method": "evolve"}


def append(log: EvaluationLog, loss: Any, start: float, x: Any = 0.5, **kw: Any) -> dict[str, Any]:
    """Write one record of a three-parameter configuration (``x`` varies) through ``log``."""
    return log.append(
        {"x": x, "n": 3, "act": "relu"},
        loss,
        island=kw.pop("island", 0),
        generation=kw.pop("generation", log.seq),
        start=start,
        seconds=kw.pop("seconds", 1.0),
        **kw,
    )
