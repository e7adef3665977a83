"""Polling that does not spin: an exponential sleep for idle loops, and waiting on an MPI
request with it.

MPICH spins at full speed inside blocking calls, so idle ranks on an oversubscribed machine
would take the CPU from the ranks that compute. :class:`Backoff` sleeps with a growing
interval while there is nothing to do; :func:`wait` completes a non-blocking request by
testing it between such sleeps. Used by the engine's messaging, budget and termination, the
model-guided loop (:mod:`propulate.models.loop`) and the campaign's ownership checks, so it
lies below all of them and imports nothing of the package.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mpi4py import MPI

__all__ = ["Backoff", "wait"]


class Backoff:
    """Exponential sleep for idle polling loops.

    Parameters
    ----------
    start : float
        First sleep, seconds.
    limit : float
        Longest sleep, seconds.
    """

    def __init__(self, start: float = 5e-5, limit: float = 0.02) -> None:
        self.start = start
        self.limit = limit
        self.delay = start

    def reset(self) -> None:
        """Activity seen: poll fast again."""
        self.delay = self.start

    def sleep(self) -> None:
        """Nothing to do: sleep, then lengthen the next sleep."""
        time.sleep(self.delay)
        self.delay = min(self.delay * 2.0, self.limit)


def wait(request: MPI.Request, backoff: Backoff | None = None) -> Any:
    """Complete ``request`` by testing with backoff instead of a spinning ``wait``."""
    backoff = backoff or Backoff()
    while True:
        done, obj = request.test()
        if done:
            return obj
        backoff.sleep()
