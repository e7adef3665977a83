"""Taking a run directory's lease for an MPI job (:mod:`propulate.runs.lease`).

Rank 0 holds the lease and renews it from a background thread; the other ranks wait for it to
be taken without spinning (a non-blocking receive tested with backoff), so a job queued behind
another costs no CPU while it waits.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Any

from propulate.cli import UsageError
from propulate.runs.lease import Lease, LeaseHeld, LeaseInfo

#: Message tag of rank 0's word that the lease is taken (or why not).
TAG = 7301


def take(
    out: Path, comm: Any, *, wait: bool = True, heartbeat: float, expiry: float
) -> Lease | None:
    """Take the lease on ``out`` for the job on ``comm`` (collective).

    Rank 0 waits for a live owner (saying once on stderr whom it waits for) or, with
    ``wait=False``, refuses; the lease it returns is renewed until released. The other ranks
    return ``None`` once rank 0 holds it.

    Raises
    ------
    UsageError
        On every rank, when the directory has a live owner and ``wait`` is False.
    """
    from propulate.polling import Backoff
    from propulate.polling import wait as wait_request

    rank, size = comm.Get_rank(), comm.Get_size()
    if rank != 0:
        problem = wait_request(comm.irecv(source=0, tag=TAG), Backoff(limit=0.2))
        if problem:
            raise UsageError(problem)
        return None
    lease = Lease(out, heartbeat=heartbeat, expiry=expiry, on_lost=_stop_run)
    problem = None
    try:
        lease.acquire(wait=wait, on_wait=lambda owner: _say_waiting(out, owner))
    except LeaseHeld as err:
        problem = f"{err}; it is still running (without --no-wait this job would wait for it)"
    for other in range(1, size):
        comm.send(problem, dest=other, tag=TAG)
    if problem:
        raise UsageError(problem)
    return lease


def _say_waiting(out: Path, owner: LeaseInfo) -> None:
    print(
        f"propulate evolve: waiting for run directory {out}: owned by {owner.describe()}; "
        f"taken over if its heartbeat stops for {owner.expiry:g} s",
        file=sys.stderr,
        flush=True,
    )


def _stop_run() -> None:
    """The lease was taken over after this job stalled: stop as on SIGTERM (no summary)."""
    print(
        "propulate evolve: another job took this run directory over (this job's lease "
        "expired); stopping",
        file=sys.stderr,
        flush=True,
    )
    os.kill(os.getpid(), signal.SIGTERM)
