"""Ending a run without a barrier: two-phase termination over FIFO channels.

A worker that stops breeding sends ``STOP`` to every other worker and keeps receiving; once it
has a ``STOP`` from everyone, no more individuals or emigrants can reach it, so after handling
what arrived it sends ``DONE`` and keeps receiving until it has a ``DONE`` from everyone. Then
it holds the full population. A ``STOP`` caused by a signal or by failures carries that reason,
which stops the receivers too (after their current evaluation). It relies on MPI keeping the
messages between two processes in order (:mod:`propulate.engine.messaging`).
"""

from __future__ import annotations

from collections.abc import Callable

from propulate.engine.messaging import DONE, STOP, Messenger
from propulate.polling import Backoff


def drain(
    messenger: Messenger,
    others: list[int],
    receive: Callable[[], int],
    stopped_from: set[int],
    done_from: set[int],
    abort: str | None,
) -> None:
    """Run both phases; polls with backoff, never spins.

    Parameters
    ----------
    messenger : Messenger
        The worker's channel (flushed and freed at the end).
    others : list of int
        Every other worker.
    receive : callable
        Takes in what has arrived (adding the senders of ``STOP`` and ``DONE`` to the two
        sets) and returns how many messages it handled.
    stopped_from, done_from : set of int
        The workers a ``STOP`` and a ``DONE`` came from so far.
    abort : str or None
        The reason that stops the others too (``None``: a normal stop).
    """
    n = len(others)
    messenger.send_many(others, (STOP, abort))
    backoff = Backoff()
    for phase, seen in ((STOP, stopped_from), (DONE, done_from)):
        while len(seen) < n:
            if receive():
                backoff.reset()
            else:
                backoff.sleep()
        if phase == STOP:
            messenger.send_many(others, (DONE,))
    messenger.flush()
    messenger.free()
