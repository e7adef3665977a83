"""A helper thread that lets other ranks' one-sided operations complete on a busy rank.

A passive-target ``Fetch_and_op`` on a window hosted by rank 0 (the global evaluation budget,
:mod:`propulate.engine.budget`) completes only when rank 0's MPI library makes progress, which
many MPI implementations do only while rank 0 is inside an MPI call. While rank 0 evaluates (or
sleeps between polls at the end of a run), every other worker's claim would wait for it. The
:class:`ProgressThread` calls ``Iprobe`` on a private communicator every ``interval`` seconds,
but only in a busy phase of its owner that outlasted one of its ticks; otherwise it sleeps on
an event and costs nothing. While the owner's busy phases are shorter than a tick (evaluations
of microseconds: the owner calls MPI between them anyway), the thread wakes ever less often, up
to every :data:`MAX_TICK` seconds, since each wake takes the GIL from the owner.

Calling MPI from two threads at once needs the ``MPI_THREAD_MULTIPLE`` thread level (mpi4py
asks for it by default). With a lower level :func:`progress_thread_possible` is false and the
budget falls back to claims that wait for the host (a warning says so once).
"""

from __future__ import annotations

import logging
import threading

from mpi4py import MPI

log = logging.getLogger("propulate")

#: Longest sleep of the thread while its owner's busy phases are shorter than a tick (fast
#: evaluations): the first probe of a long phase comes within two of these.
MAX_TICK = 0.008
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


class _Busy:
    """The context of :meth:`ProgressThread.busy` (a class, not a generator: it is entered
    once per evaluation)."""

    __slots__ = ("owner",)

    def __init__(self, owner: ProgressThread) -> None:
        self.owner = owner

    def __enter__(self) -> None:
        owner = self.owner
        owner._epoch += 1
        owner._busy = True
        if not owner._wake.is_set():
            owner._wake.set()

    def __exit__(self, *exc: object) -> None:
        self.owner._busy = False


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
        self._linger = linger
        self._busy = False
        self._epoch = 0  # counts busy phases: a probe only in one that outlasts a tick
        self._stopped = False
        self._wake = threading.Event()
        self._halt = threading.Event()  # set by stop(): ends a tick's sleep at once
        self.probes = 0
        self._inside = _Busy(self)
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
            idle = 0.0
            seen = -1
            tick = interval
            while not self._stopped:
                epoch = self._epoch
                if self._busy and epoch == seen:
                    # A busy phase that outlasted a tick: the owner is outside MPI for a
                    # while, so drive progress for it.
                    comm.Iprobe(MPI.ANY_SOURCE, MPI.ANY_TAG)
                    self.probes += 1
                    tick = interval
                    idle = 0.0
                elif epoch != seen:
                    # The owner went through MPI since the last tick (short busy phases need
                    # no help): wake less often, each wake takes the GIL from the owner.
                    tick = min(2 * tick, MAX_TICK)
                    idle = 0.0
                else:
                    idle += tick
                    if idle > self._linger:
                        self._wake.clear()
                        if not self._busy:  # the owner sets busy before it looks at the event
                            break
                seen = epoch
                # a sleep that stop() cuts short: a run's end does not wait out a tick
                self._halt.wait(tick)

    def busy(self) -> _Busy:
        """While inside (after its first tick), the thread probes every ``interval`` seconds."""
        return self._inside

    def stop(self) -> None:
        """End the thread (call from the owning thread)."""
        self._stopped = True
        self._halt.set()
        self._wake.set()
        self._thread.join()
