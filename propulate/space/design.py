"""Space-filling designs of a search space: Latin hypercubes with infeasible points redrawn."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from propulate.space.dimensions import SpaceError

if TYPE_CHECKING:
    from propulate.space.search import Params, SearchSpace


def latin_hypercube(
    space: SearchSpace,
    n: int,
    seed: int | np.random.Generator | None = None,
    task: Mapping[str, Any] | None = None,
    max_rounds: int = 100,
) -> list[Params]:
    """``n`` feasible, distinct configurations of ``space`` from Latin hypercubes (see
    :meth:`SearchSpace.latin_hypercube`)."""
    if n <= 0:
        return []
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    out: list[Params] = []
    seen: set[tuple[Any, ...]] = set()
    drawn = feasible = 0
    for _ in range(max_rounds):
        missing = n - len(out)
        # Oversample redraws by the observed constraint rejection rate (capped), so a tight
        # constraint does not exhaust max_rounds drawing one point at a time.
        size = (
            missing
            if feasible == drawn
            else max(
                missing,
                min(math.ceil(missing * drawn / max(feasible, 1)), max(1000, 4 * missing)),
            )
        )
        from scipy.stats import qmc  # here: workers that never draw a design skip scipy.stats

        sampler = qmc.LatinHypercube(d=space.dim, seed=rng)
        for row in sampler.random(size):
            params = space.decode(row)
            k = space.key(params)
            drawn += 1
            if not space.satisfies(params, task):
                continue
            feasible += 1
            if k not in seen:
                seen.add(k)
                out.append(params)
                if len(out) == n:
                    return out
    if out:
        # Small discrete spaces may hold fewer than n distinct feasible points.
        return out
    raise SpaceError(f"no feasible configuration found in {max_rounds} Latin hypercubes")
