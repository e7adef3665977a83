"""Propulate 1.2's ``Migrator``: one rank's part of an island run with real migration.

In Propulate 1.2, :class:`propulate.Islands` built a ``Migrator`` (or, with pollination, a
:class:`~propulate.compat.pollinator.Pollinator`) on every rank from the island layout it had worked
out: the rank's island index, its island's communicator, and every island's first rank and
worker count (``island_displs``, ``island_counts``). Here the engine lays the islands out
itself, so a ``Migrator`` built with 1.2's arguments checks that they describe the engine's
layout -- islands of consecutive ranks, in order -- and runs the same island model as
``Islands(num_islands=len(island_counts), island_sizes=island_counts, pollination=False)``
over ``propulate_comm``. Without ``island_counts`` it is a single island on ``island_comm``,
as :class:`propulate.Propulator`. ``worker_sub_comm`` is not used: ``ranks_per_worker`` says
how many ranks form a worker.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from mpi4py import MPI

from propulate.compat.islands import Islands
from propulate.propagators.base import Propagator
from propulate.propagators.selection import SelectMax, SelectMin


def island_run_arguments(
    island_idx: int,
    island_comm: MPI.Comm,
    propulate_comm: MPI.Comm | None,
    island_displs: Sequence[int] | np.ndarray | None,
    island_counts: Sequence[int] | np.ndarray | None,
    ranks_per_worker: int,
) -> dict[str, Any]:
    """The ``Islands`` arguments (``comm``, ``num_islands``, ``island_sizes``) of 1.2's layout.

    Raises
    ------
    ValueError
        When the layout is not islands of consecutive workers in order, or this rank's worker
        lies on another island than ``island_idx``.
    """
    if island_counts is None:
        return {"comm": island_comm, "num_islands": 1, "island_sizes": None}
    if propulate_comm is None:
        raise ValueError(
            "propulate_comm is None (a Propulate 1.2 sub-worker rank): build the run with "
            "Islands(..., ranks_per_worker=...) on all ranks instead"
        )
    counts = [int(c) for c in island_counts]
    starts = [int(s) for s in np.cumsum([0, *counts[:-1]])]
    if island_displs is not None and [int(d) for d in island_displs] != starts:
        raise ValueError(
            f"island_displs {list(island_displs)} must be each island's first worker for "
            f"consecutive islands of island_counts {counts}, i.e. {starts}"
        )
    worker = propulate_comm.Get_rank() // ranks_per_worker
    owner = next((i for i, s in enumerate(starts) if s <= worker < s + counts[i]), None)
    if owner != island_idx:
        raise ValueError(
            f"worker {worker} lies on island {owner} of island_counts {counts}, "
            f"not on island_idx {island_idx}"
        )
    return {"comm": propulate_comm, "num_islands": len(counts), "island_sizes": counts}


class Migrator(Islands):
    """One rank's part of an island run with real migration (Propulate 1.2's signature).

    Emigrants leave their island (they are deactivated there). Parameters are Propulate 1.2's;
    ``migration_prob`` is :class:`Islands`' ``migration_probability``, and ``generations``,
    ``checkpoint_path``, ``surrogate_factory``, ``ranks_per_worker`` and the keyword-only ones
    (``max_evaluations``, ``time_limit``, ...) are :class:`Islands`' own. See the module
    docstring for the layout arguments.
    """

    def __init__(
        self,
        loss_fn: Callable[..., Any],
        propagator: Propagator,
        rng: random.Random | None = None,
        island_idx: int = 0,
        island_comm: MPI.Comm = MPI.COMM_WORLD,
        propulate_comm: MPI.Comm | None = MPI.COMM_WORLD,
        worker_sub_comm: MPI.Comm | None = None,
        generations: int = -1,
        checkpoint_path: str | Path = Path("./"),
        migration_topology: np.ndarray | Sequence[Sequence[int]] | None = None,
        migration_prob: float = 0.0,
        emigration_propagator: Any = SelectMin,
        island_displs: Sequence[int] | np.ndarray | None = None,
        island_counts: Sequence[int] | np.ndarray | None = None,
        surrogate_factory: Any = None,
        ranks_per_worker: int = 1,
        **options: Any,
    ) -> None:
        super().__init__(
            loss_fn,
            propagator,
            rng,
            generations=generations,
            migration_topology=migration_topology,
            migration_probability=migration_prob,
            emigration_propagator=emigration_propagator,
            immigration_propagator=options.pop("immigration_propagator", SelectMax),
            pollination=options.pop("pollination", False),
            checkpoint_path=checkpoint_path,
            ranks_per_worker=ranks_per_worker,
            surrogate_factory=surrogate_factory,
            **island_run_arguments(
                island_idx,
                island_comm,
                propulate_comm,
                island_displs,
                island_counts,
                ranks_per_worker,
            ),
            **options,
        )
