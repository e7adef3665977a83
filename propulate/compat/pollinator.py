"""Propulate 1.2's ``Pollinator``: one rank's part of an island run with pollination.

As :class:`propulate.compat.migrator.Migrator` (same layout arguments, same checks), but emigrants
are copies that stay on their island, and on the target island each immigrant replaces an
individual chosen by ``immigration_propagator`` (default the worst, ``SelectMax``).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from mpi4py import MPI

from propulate.compat.migrator import Migrator
from propulate.propagators.base import Propagator
from propulate.propagators.selection import SelectMax, SelectMin


class Pollinator(Migrator):
    """One rank's part of an island run with pollination (Propulate 1.2's signature).

    Parameters are :class:`~propulate.compat.migrator.Migrator`'s, with ``immigration_propagator``
    after ``emigration_propagator`` as in Propulate 1.2.
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
        immigration_propagator: Any = SelectMax,
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
            island_idx,
            island_comm,
            propulate_comm,
            worker_sub_comm,
            generations,
            checkpoint_path,
            migration_topology,
            migration_prob,
            emigration_propagator,
            island_displs,
            island_counts,
            surrogate_factory,
            ranks_per_worker,
            immigration_propagator=immigration_propagator,
            pollination=True,
            **options,
        )
