"""A global evaluation budget shared by all workers, without a barrier.

The count of evaluations started lives in an MPI window on worker 0 (the host); a worker
claims one slot with an atomic fetch-and-add (``Rget_accumulate`` with ``MPI.SUM``) before each
evaluation, so the total never exceeds the budget, whatever the speed of each worker.

Claims never make a worker wait for another worker's evaluation and never spin:

* while the host is busy outside MPI (inside :meth:`EvaluationBudget.serving`), a
  :class:`~propulate.engine.progress_thread.ProgressThread` drives its MPI progress, so the others'
  claims complete (needs ``MPI_THREAD_MULTIPLE``; without it claims wait for the host's next MPI
  call, with a warning);
* a claim is a request completed by testing with backoff sleeps, not a blocking call (MPICH
  busy-polls inside blocking one-sided calls, which starves oversubscribed ranks);
* :meth:`EvaluationBudget.prefetch` starts the next claim when an evaluation starts, so it
  completes during the evaluation and the next generation finds it done. Near the end of the
  budget (fewer than two slots per worker left at the last claim) it claims nothing: a slot
  taken ahead by a busy worker would wait for that worker's evaluation while idle workers stop,
  and the run would end up to a whole evaluation later (64 ranks: 6.5 % of the span).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext

import numpy as np
from mpi4py import MPI

from propulate.engine.progress_thread import ProgressThread, progress_thread_possible
from propulate.polling import Backoff


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

    def __init__(
        self, comm: MPI.Comm, total: int | None, already: int = 0, progress_interval: float = 5e-4
    ) -> None:
        self.total = total
        self.comm = comm
        self._exhausted = False
        self._win: MPI.Win | None = None
        self._progress: ProgressThread | None = None
        self._probe_comm: MPI.Comm | None = None
        self._pending: tuple[MPI.Request, np.ndarray] | None = None
        self._last = already  # the counter's value at this worker's last claim
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
        _wait(comm.Ibarrier())  # set-up only: the counter is initialised before anyone claims
        self._win.Lock_all(MPI.MODE_NOCHECK)  # one passive epoch for the whole run
        self._one = np.ones(1, dtype=np.int64)

    @property
    def limited(self) -> bool:
        """Whether there is a budget (and its window is still open)."""
        return self._win is not None

    @property
    def claim_in_flight(self) -> bool:
        """Whether a prefetched claim is under way."""
        return self._pending is not None

    @property
    def last_claimed(self) -> int:
        """The counter's value at this worker's last claim (its slot, if it got one)."""
        return self._last

    def serving(self) -> AbstractContextManager[None]:
        """Context for the host's time outside MPI (evaluations, idle sleeps): claims of the
        other workers complete meanwhile. A no-op on the other ranks and without a budget."""
        return self._progress.busy() if self._progress is not None else nullcontext()

    def _fetch_add(self, value: np.ndarray) -> tuple[MPI.Request, np.ndarray]:
        assert self._win is not None
        old = np.zeros(1, dtype=np.int64)
        op = MPI.SUM if value[0] else MPI.NO_OP
        req = self._win.Rget_accumulate(value, old, 0, target=(0, 1, MPI.INT64_T), op=op)
        return req, old

    def prefetch(self) -> None:
        """Start claiming the next slot now (it completes in the background); the next
        :meth:`claim` uses it. Call it only when a next claim will follow."""
        if self._win is None or self._exhausted or self._pending is not None:
            return
        if self.total - self._last > 2 * self.comm.Get_size():  # type: ignore[operator]
            self._pending = self._fetch_add(self._one)

    def claim(self, idle: Callable[[], int] | None = None) -> bool:
        """Take one evaluation from the budget; False once it is spent.

        ``idle`` is called while the claim is in flight (e.g. to receive the other workers'
        messages, so a worker waiting on the counter still learns what they evaluate); it
        returns how much it did, and the polling stays fast while it does something.
        """
        if self._win is None:
            return True
        if self._exhausted:
            return False
        req, old = self._pending or self._fetch_add(self._one)
        self._pending = None
        _wait(req, idle)
        self._last = int(old[0])
        if self._last >= self.total:  # type: ignore[operator]
            self._exhausted = True
            return False
        return True

    def give_back(self) -> None:
        """Return a prefetched slot this worker will not evaluate (it stops): the counter then
        counts evaluations that were run, as the records do. Call before the stop's messages,
        so that the others have seen it once they have this worker's ``STOP``."""
        if self._pending is None:
            return
        req, old = self._pending
        self._pending = None
        _wait(req)
        if int(old[0]) < self.total:  # type: ignore[operator]
            _wait(self._fetch_add(-self._one)[0])

    def used(self) -> int | None:
        """Evaluations claimed so far over all workers (None without a budget)."""
        if self._win is None:
            return None
        req, out = self._fetch_add(np.zeros(1, dtype=np.int64))
        _wait(req)
        return min(int(out[0]), int(self.total))  # type: ignore[arg-type]

    def free(self) -> None:
        """Stop the progress thread and release the window (collective)."""
        if self._pending is not None:
            _wait(self._pending[0])
            self._pending = None
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
        if self._probe_comm is not None:
            self._probe_comm.Free()
            self._probe_comm = None
        if self._win is not None:
            # Win.Free synchronises, and MPICH busy-polls inside it: meet first without spinning.
            _wait(self.comm.Ibarrier())
            self._win.Unlock_all()
            self._win.Free()
            self._win = None


def _wait(req: MPI.Request, idle: Callable[[], int] | None = None) -> None:
    """Complete a request by testing with short backoff sleeps (never a spinning wait); ``idle``
    runs between tests, and while it finds work the sleeps stay short. A claim on a worker's own
    window (one rank) completes at the second test in MPICH: that one comes without a sleep."""
    if req.Test() or req.Test():
        return
    backoff = Backoff(start=2e-5, limit=2e-3)
    while not req.Test():
        if idle is not None and idle():
            backoff.reset()
            continue
        backoff.sleep()
