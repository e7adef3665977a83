"""A helper thread that lets other ranks' one-sided operations complete on a busy rank.

A passive-target ``Fetch_and_op`` on a window hosted by rank 0 (the global evaluation budget,
:mod:`propulate.engine.budget`) completes only when rank 0's MPI library makes progress, which
many MPI implementations do only while rank 0 is inside an MPI call. While rank 0 evaluates (or
sleeps between polls at the end of a run), every other worker's claim would wait for it. The
:class:`ProgressThread` calls ``Iprobe`` on a private communicator every ``interval`` seconds,
but only while its owner says it is busy; otherwise it sleeps on an event and costs nothing.

Calling MPI from two threads at once needs the ``MPI_THREAD_MULTIPLE`` thread level (mpi4py
asks for it by default). With a lower level :func:`progress_thread_possible` is false and the
budget falls back to claims that wait for the host (a warning says so once).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from mpi4py import MPI

log = logging.getLogger("propulate")
_warned = False


def progress_thread_possible() -> bool:
    """Whether MPI was initialised with ``MPI_THREAD_MULTIPLE`` (warns once if not)."""
    global _warned
    if MPI.Query_thread() >= MPI.THREAD_MULTIPLE:
        return True
    if not _warned:
        _warned = True
        log.warning(
            "MPI thread level is below MPI_THREAD_MULTIPLE: budget claims of other "
            "workers may wait while the budget's host rank evaluates"
        )
    return False


class ProgressThread:
    """Drives MPI progress on this rank while the caller is busy outside MPI.

    Parameters
    ----------
    comm : MPI.Comm
        A communicator private to this purpose: it is only probed, never received on (the
        caller creates and frees it, since duplicating a communicator is collective).
    interval : float
        Seconds between two probes while busy.
    linger : float
        Seconds the thread keeps polling the busy flag after a busy phase before it sleeps on
        its event again (saves waking it once per short evaluation).
    """

    def __init__(self, comm: MPI.Comm, interval: float = 5e-4, linger: float = 0.05) -> None:
        self.comm = comm
        self.interval = interval
        self._linger_ticks = max(1, int(linger / interval))
        self._busy = False
        self._stopped = False
        self._wake = threading.Event()
        self.probes = 0
        self._thread = threading.Thread(
            target=self._loop, name="propulate-mpi-progress", daemon=True
        )
        self._thread.start()

    def _loop(self) -> None:
        comm, interval = self.comm, self.interval
        while True:
            self._wake.wait()
            if self._stopped:
                return
            idle = 0
            while not self._stopped:
                if self._busy:
                    comm.Iprobe(MPI.ANY_SOURCE, MPI.ANY_TAG)
                    self.probes += 1
                    idle = 0
                else:
                    idle += 1
                    if idle > self._linger_ticks:
                        self._wake.clear()
                        if not self._busy:  # the owner sets busy before it looks at the event
                            break
                time.sleep(interval)

    @contextmanager
    def busy(self) -> Iterator[None]:
        """While inside, the thread probes every ``interval`` seconds."""
        self._busy = True
        if not self._wake.is_set():
            self._wake.set()
        try:
            yield
        finally:
            self._busy = False

    def stop(self) -> None:
        """End the thread (call from the owning thread)."""
        self._stopped = True
        self._wake.set()
        self._thread.join()
