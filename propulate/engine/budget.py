"""A global evaluation budget shared by all workers, without a barrier.

The count of evaluations started lives in an MPI window on worker 0; a worker claims one slot
with an atomic ``Fetch_and_op`` before each evaluation, so the total never exceeds the budget,
whatever the speed of each worker.
"""

from __future__ import annotations

import numpy as np
from mpi4py import MPI


class EvaluationBudget:
    """Atomic counter of evaluations against a total.

    Parameters
    ----------
    comm : MPI.Comm
        The workers' communicator (collective construction and :meth:`free`).
    total : int or None
        Maximum number of evaluations over all workers; ``None`` for no limit (no window).
    already : int
        Evaluations done before this start (a resumed run).
    """

    def __init__(self, comm: MPI.Comm, total: int | None, already: int = 0) -> None:
        self.total = total
        self._exhausted = False
        self._win: MPI.Win | None = None
        if total is None:
            return
        itemsize = np.dtype(np.int64).itemsize
        size = itemsize if comm.Get_rank() == 0 else 0
        self._win = MPI.Win.Allocate(size, itemsize, comm=comm)
        if comm.Get_rank() == 0:
            buf = np.frombuffer(self._win.tomemory(), dtype=np.int64)
            buf[0] = already
        comm.Barrier()  # set-up only: the counter is initialised before anyone claims
        self._one = np.ones(1, dtype=np.int64)
        self._old = np.zeros(1, dtype=np.int64)

    def claim(self) -> bool:
        """Take one evaluation from the budget; False once it is spent."""
        if self._win is None:
            return True
        if self._exhausted:
            return False
        win = self._win
        win.Lock(0, MPI.LOCK_SHARED)
        win.Fetch_and_op(self._one, self._old, 0, 0, MPI.SUM)
        win.Unlock(0)
        if int(self._old[0]) >= self.total:  # type: ignore[operator]
            self._exhausted = True
            return False
        return True

    def used(self) -> int | None:
        """Evaluations claimed so far over all workers (None without a budget)."""
        if self._win is None:
            return None
        zero = np.zeros(1, dtype=np.int64)
        out = np.zeros(1, dtype=np.int64)
        self._win.Lock(0, MPI.LOCK_SHARED)
        self._win.Fetch_and_op(zero, out, 0, 0, MPI.NO_OP)
        self._win.Unlock(0)
        return min(int(out[0]), int(self.total))  # type: ignore[arg-type]

    def free(self) -> None:
        """Release the window (collective)."""
        if self._win is not None:
            self._win.Free()
            self._win = None
