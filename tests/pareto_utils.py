"""Several-objective runs in-process for tests: the Pareto GA over a space, its summary written."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from propulate import Islands, get_default_propagator
from propulate.runs.declared_objectives import Objectives
from propulate.runs.summary import summarize_directory, write_summary
from propulate.space import SearchSpace


def evolve_objectives(
    fn: Callable[[dict[str, Any]], Any],
    space: SearchSpace,
    objectives: str | None,
    out: Path,
    evaluations: int,
    seed: int,
    pop_size: int = 8,
    meta: Mapping[str, Any] | None = None,
) -> Path:
    """Run the default propagator (Pareto-aware with several ``objectives``) on one rank for
    ``evaluations`` evaluations into ``out`` and write its ``summary.json``."""
    rng = random.Random(seed)
    declared = Objectives.maybe(objectives)
    Islands(
        fn,
        get_default_propagator(pop_size, space, rng=rng, objectives=declared),
        rng,
        max_evaluations=evaluations,
        checkpoint_path=out,
        space=space,
        objectives=declared,
        meta=dict(meta) if meta else None,
        progress_interval=1e9,
    ).propulate()
    write_summary(out, summarize_directory(out, objectives=objectives))
    return out
