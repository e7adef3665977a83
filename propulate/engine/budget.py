"""A global evaluation budget shared by all workers, without a barrier.

The count of evaluations started lives in an MPI window on worker 0 (the host); a worker
claims one slot with an atomic ``Fetch_and_op`` before each evaluation, so the total never
exceeds the budget, whatever the speed of each worker.

A claim never waits for the host's evaluation: while the host is busy outside MPI (inside
:meth:`EvaluationBudget.serving`), a :class:`~propulate.engine.progress.ProgressThread` drives
its MPI progress. This needs ``MPI_THREAD_MULTIPLE``; without it claims fall back to waiting
for the host's next MPI call.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext

import numpy as np
from mpi4py import MPI

from propulate.engine.progress import ProgressThread, progress_thread_possible


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
    progress_interval : float
        Seconds between the host's progress probes while it is busy.
    """

    def __init__(self, comm: MPI.Comm, total: int | None, already: int = 0,
                 progress_interval: float = 5e-4) -> None:
        self.total = total
        self._exhausted = False
        self._win: MPI.Win | None = None
        self._progress: ProgressThread | None = None
        self._probe_comm: MPI.Comm | None = None
        if total is None:
            return
        itemsize = np.dtype(np.int64).itemsize
        host = comm.Get_rank() == 0
        self._win = MPI.Win.Allocate(itemsize if host else 0, itemsize, comm=comm)
        if host:
            buf = np.frombuffer(self._win.tomemory(), dtype=np.int64)
            buf[0] = already
        if comm.Get_size() > 1 and progress_thread_possible():
            self._probe_comm = comm.Dup()  # collective; only the host probes it
            if host:
                self._progress = ProgressThread(self._probe_comm, progress_interval)
        comm.Barrier()  # set-up only: the counter is initialised before anyone claims
        self._one = np.ones(1, dtype=np.int64)
        self._old = np.zeros(1, dtype=np.int64)

    @property
    def limited(self) -> bool:
        """Whether there is a budget (and its window is still open)."""
        return self._win is not None

    def serving(self) -> AbstractContextManager[None]:
        """Context for the host's time outside MPI (evaluations, idle sleeps): claims of the
        other workers complete meanwhile. A no-op on the other ranks and without a budget."""
        return self._progress.busy() if self._progress is not None else nullcontext()

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
        with self._unlocked_read():
            self._win.Fetch_and_op(zero, out, 0, 0, MPI.NO_OP)
        return min(int(out[0]), int(self.total))  # type: ignore[arg-type]

    @contextmanager
    def _unlocked_read(self) -> Iterator[None]:
        assert self._win is not None
        self._win.Lock(0, MPI.LOCK_SHARED)
        try:
            yield
        finally:
            self._win.Unlock(0)

    def free(self) -> None:
        """Stop the progress thread and release the window (collective)."""
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
        if self._probe_comm is not None:
            self._probe_comm.Free()
            self._probe_comm = None
        if self._win is not None:
            self._win.Free()
            self._win = None
