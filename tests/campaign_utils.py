"""Campaign configs for tests of :mod:`propulate.campaign` without Snakemake."""

from __future__ import annotations

import copy
from typing import Any

#: Two Latin-hypercube training tasks and a listed one, one new task, small evolve budgets.
TINY: dict[str, Any] = {
    "name": "tiny",
    "objective": "propulate.problems.demo:demo_loss",
    "parameters": {"x": {"type": "float", "low": 0.0, "high": 1.0}},
    "task_space": {"t": {"type": "float", "low": 0.0, "high": 10.0}},
    "training_tasks": {"latin_hypercube": {"n": 2, "seed": 0}, "listed": {"mid": {"t": 5.0}}},
    "new_tasks": {"t_new": {"t": 4.5}},
    "evolve": {"seeds": [1], "max_evaluations": 16, "time_limit": 20, "pop_size": 4},
}


def config(**changes: Any) -> dict[str, Any]:
    """A deep copy of :data:`TINY` with top-level keys replaced (``None`` removes one)."""
    cfg = copy.deepcopy(TINY)
    for key, value in changes.items():
        if value is None:
            cfg.pop(key, None)
        else:
            cfg[key] = value
    return cfg
