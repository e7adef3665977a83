"""How workers are grouped into islands and which islands send emigrants where."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class IslandLayout:
    """Workers per island and the migration topology.

    Parameters
    ----------
    workers : int
        Number of workers.
    num_islands : int
        Number of islands (each needs at least one worker).
    island_sizes : sequence of int, optional
        Workers per island, summing to ``workers``; default: as equal as possible.
    topology : array-like, optional
        ``(num_islands, num_islands)`` matrix: entry ``[i, j]`` is the number of emigrants island
        ``i`` sends to island ``j`` in one migration event (diagonal ignored). Default: fully
        connected with one emigrant.
    """

    def __init__(
        self,
        workers: int,
        num_islands: int = 1,
        island_sizes: Sequence[int] | None = None,
        topology: np.ndarray | Sequence[Sequence[int]] | None = None,
    ) -> None:
        if num_islands < 1:
            raise ValueError(f"num_islands must be >= 1, got {num_islands}")
        if island_sizes is None:
            if workers < num_islands:
                raise ValueError(f"{workers} workers cannot form {num_islands} islands")
            base, extra = divmod(workers, num_islands)
            island_sizes = [base + (i < extra) for i in range(num_islands)]
        island_sizes = [int(s) for s in island_sizes]
        if (
            len(island_sizes) != num_islands
            or sum(island_sizes) != workers
            or min(island_sizes) < 1
        ):
            raise ValueError(
                f"island_sizes {island_sizes} must give {num_islands} islands of >= 1 worker "
                f"summing to {workers} workers"
            )
        if topology is None:
            topology = np.ones((num_islands, num_islands), dtype=int)
        topo = np.asarray(topology, dtype=int)
        if topo.shape != (num_islands, num_islands) or (topo < 0).any():
            raise ValueError(
                f"migration_topology must be a non-negative {num_islands}x"
                f"{num_islands} matrix, got shape {topo.shape}"
            )
        topo = topo.copy()
        np.fill_diagonal(topo, 0)
        self.workers = workers
        self.num_islands = num_islands
        self.sizes = island_sizes
        self.topology = topo
        self.island_of: list[int] = [i for i, s in enumerate(island_sizes) for _ in range(s)]
        self.members: list[list[int]] = [[] for _ in range(num_islands)]
        for w, i in enumerate(self.island_of):
            self.members[i].append(w)

    def peers(self, worker: int) -> list[int]:
        """The other workers of ``worker``'s island."""
        return [w for w in self.members[self.island_of[worker]] if w != worker]
