"""``Propulator``: a single-island asynchronous run (Propulate 1.2's basic front end)."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from mpi4py import MPI

from propulate.compat.islands import Islands
from propulate.propagators.base import Propagator
from propulate.space import SearchSpace


class Propulator(Islands):
    """Minimize ``loss_fn`` with all ranks of ``island_comm`` on one island.

    Parameters are those of :class:`Islands` with one island; ``island_comm`` names the ranks.
    Propulate 1.2's remaining arguments (``island_idx``, ``propulate_comm``,
    ``worker_sub_comm``, ``migration_topology``, ``migration_prob``, ``emigration_propagator``,
    ``island_displs``, ``island_counts``) are accepted and ignored: a single island has no
    migration. ``eval_timeout`` and ``failure_limit`` are those of :class:`Islands` (default:
    ``EvolveSettings``). Constructed on a ``checkpoint_path`` with records, it holds that
    population at once, as Propulate 1.2 does.
    """

    def __init__(
        self,
        loss_fn: Callable[..., Any],
        propagator: Propagator,
        rng: random.Random | None = None,
        island_idx: int = 0,
        island_comm: MPI.Comm = MPI.COMM_WORLD,
        propulate_comm: MPI.Comm | None = None,
        worker_sub_comm: MPI.Comm | None = None,
        generations: int = -1,
        checkpoint_path: str | Path = Path("./"),
        migration_topology: Any = None,
        migration_prob: float = 0.0,
        emigration_propagator: Any = None,
        island_displs: Any = None,
        island_counts: Any = None,
        surrogate_factory: Any = None,
        ranks_per_worker: int = 1,
        *,
        max_evaluations: int | None = None,
        time_limit: float | None = None,
        eval_timeout: float | None = None,
        failure_limit: int | None = None,
        space: SearchSpace | Mapping[str, Any] | None = None,
        task: Mapping[str, Any] | None = None,
        meta: Mapping[str, Any] | None = None,
        progress_interval: float = 10.0,
    ) -> None:
        super().__init__(
            loss_fn,
            propagator,
            rng,
            generations=generations,
            num_islands=1,
            checkpoint_path=checkpoint_path,
            ranks_per_worker=ranks_per_worker,
            surrogate_factory=surrogate_factory,
            max_evaluations=max_evaluations,
            time_limit=time_limit,
            eval_timeout=eval_timeout,
            **({} if failure_limit is None else {"failure_limit": failure_limit}),
            space=space,
            task=task,
            meta=meta,
            progress_interval=progress_interval,
            comm=island_comm,
        )
