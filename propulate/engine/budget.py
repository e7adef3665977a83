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
  and the run would end up to a whole evaluation later (64 ranks: 6.5 % of the span);
* a worker whose evaluations are fast takes a *lease* of several slots in one claim: as many
  as it uses in :data:`LEASE_SECONDS` at its pace (at most :data:`LEASE_MAX`, at most a
  ``2 x workers``-th of what is left), so a zero-cost objective does not pay one atomic
  operation per evaluation. Evaluations slower than that take one slot per claim, as before.
  The slots are counted when they are leased, so the total is never exceeded; slots a worker
  does not use (it stops) go back to the counter (:meth:`EvaluationBudget.give_back`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext

import numpy as np
from mpi4py import MPI

from propulate.engine.progress_thread import ProgressThread, progress_thread_possible
from propulate.polling import Backoff

_NOTHING = nullcontext()
#: Seconds of a worker's own evaluations one lease of slots covers at most: at the end of the
#: budget the other workers stop at most this much before the last lease is used up.
LEASE_SECONDS = 2e-3
#: Most slots one claim takes.
LEASE_MAX = 32


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
        self._pending: tuple[MPI.Request, np.ndarray, int] | None = None
        self._last = already  # this worker's last slot (the counter's value it was claimed at)
        self._next = 0  # the next slot of this worker's lease
        self._left = 0  # slots of the lease not yet used
        self._claimed_at: float | None = None
        self._period = 1.0  # seconds between this worker's claims (moving average)
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
        _wait(comm.Ibarrier())  # set-up only: the counter is initialised before anyone claims
        self._win.Lock_all(MPI.MODE_NOCHECK)  # one passive epoch for the whole run
        if host and self._probe_comm is not None:
            # after the barrier: the others do not wait for a thread to start (0.2-0.4 ms)
            self._progress = ProgressThread(self._probe_comm, progress_interval)

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
        """This worker's last slot (the counter's value at its last claim when it got none)."""
        return self._last

    def serving(self) -> AbstractContextManager[None]:
        """Context for the host's time outside MPI (evaluations, idle sleeps): claims of the
        other workers complete meanwhile. A no-op on the other ranks and without a budget."""
        return self._progress.busy() if self._progress is not None else _NOTHING

    def _fetch_add(self, value: int) -> tuple[MPI.Request, np.ndarray]:
        """Start adding ``value`` to the counter; the request and where its old value lands."""
        assert self._win is not None
        old = np.zeros(1, dtype=np.int64)
        op = MPI.SUM if value else MPI.NO_OP
        add = np.full(1, value, dtype=np.int64)
        req = self._win.Rget_accumulate(add, old, 0, target=(0, 1, MPI.INT64_T), op=op)
        return req, old

    def _lease(self) -> tuple[MPI.Request, np.ndarray, int]:
        """Start claiming as many slots as this worker uses in :data:`LEASE_SECONDS`."""
        size = int(LEASE_SECONDS / self._period) if self._period > 0 else LEASE_MAX
        left = (self.total - self._last) // (2 * self.comm.Get_size())  # type: ignore[operator]
        size = max(1, min(size, LEASE_MAX, left))
        return (*self._fetch_add(size), size)

    def prefetch(self) -> None:
        """Start claiming the next slot now (it completes in the background); the next
        :meth:`claim` uses it. Call it only when a next claim will follow."""
        if self._win is None or self._exhausted or self._pending is not None or self._left:
            return
        if self.total - self._last > 2 * self.comm.Get_size():  # type: ignore[operator]
            self._pending = self._lease()

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
        now = time.perf_counter()
        if self._claimed_at is not None:
            self._period += 0.25 * (now - self._claimed_at - self._period)
        self._claimed_at = now
        if self._left:
            self._left -= 1
            self._last = self._next
            self._next += 1
            return True
        req, old, size = self._pending or self._lease()
        self._pending = None
        _wait(req, idle)
        first = int(old[0])
        granted = max(0, min(size, self.total - first))  # type: ignore[operator]
        if granted < size:  # past the end: the slots beyond it were never there
            _wait(self._fetch_add(granted - size)[0])
        self._last = first
        if not granted:
            self._exhausted = True
            return False
        self._next, self._left = first + 1, granted - 1
        return True

    def give_back(self) -> None:
        """Return the slots this worker took and will not evaluate (it stops: a prefetched
        claim, the rest of a lease): the counter then counts evaluations that were run, as the
        records do. Call before the stop's messages, so that the others have seen it once
        they have this worker's ``STOP``."""
        unused = self._left
        self._left = 0
        if self._pending is not None:
            req, _, size = self._pending
            self._pending = None
            _wait(req)
            unused += size  # the slots past the total too: they were added to the counter
        if unused and self._win is not None:
            _wait(self._fetch_add(-unused)[0])

    def used(self) -> int | None:
        """Evaluations claimed so far over all workers (None without a budget)."""
        if self._win is None:
            return None
        req, out = self._fetch_add(0)
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
