"""The evaluation log's writing of a child's state (:class:`propulate.runs.log.EvaluationLog`):
what propagators carry per individual goes to the records JSON-safe and unchanged."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from propulate.compat.history import iter_records
from propulate.runs.log import EvaluationLog
from propulate.runs.outcome import Outcome


def test_a_childs_state_is_written_json_safe(tmp_path: Path) -> None:
    """A propagator's state (CMA-ES's step vectors) is written as it is when it holds finite
    floats only, and with non-finite floats as null and numpy scalars as numbers otherwise."""
    state = {
        "y": [0.25, -1.5, 1e-300],
        "bad": [1.0, float("nan"), float("inf")],
        "mixed": [1, np.float64(2.5), (3.0, float("-inf"))],
        "nested": {"k": [0.5]},
    }
    with EvaluationLog(tmp_path, 0, session="s") as log:
        log.record({"x": 0.5}, Outcome(1.0), island=0, generation=0, state=state)
    back = next(iter_records(tmp_path))["state"]
    assert back == {
        "y": [0.25, -1.5, 1e-300],
        "bad": [1.0, None, None],
        "mixed": [1, 2.5, [3.0, None]],
        "nested": {"k": [0.5]},
    }
