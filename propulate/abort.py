"""End the whole MPI job when one rank dies of an uncaught exception.

Under ``mpiexec python script.py`` an exception that ends one rank's interpreter leaves the
others waiting on it for ever (a message that never comes, a collective it never joins).
:func:`abort_on_uncaught_error` chains a hook onto :data:`sys.excepthook` that, after the
traceback is printed, aborts ``MPI.COMM_WORLD`` with exit status 1, so the launcher ends every
rank and reports the failure. Exceptions a script catches are untouched, and a job of one rank
simply exits. The front ends (:class:`propulate.Islands`, :class:`propulate.Propulator`)
install it.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any

#: The signature of :data:`sys.excepthook`.
ExceptHook = Callable[[type[BaseException], BaseException, TracebackType | None], Any]

#: Exit status of an aborted job.
ABORT_STATUS = 1
#: Seconds between flushing the traceback and aborting. The abort makes the launcher (MPICH's
#: Hydra) end every process at once, and output still on its way from a rank to the launcher
#: is lost: under load 1 job in 40 lost part of its traceback, and a test saw none of it.
ABORT_GRACE = 0.5


def abort_world(code: int = ABORT_STATUS) -> None:
    """Abort ``MPI.COMM_WORLD`` with ``code`` when MPI runs with more than one rank.

    Does nothing when mpi4py was never imported, MPI is not initialised or already finalised,
    or the job has a single rank. Standard output and error are flushed first, and the launcher
    gets :data:`ABORT_GRACE` seconds to pass them on.
    """
    mpi = sys.modules.get("mpi4py.MPI")
    if mpi is None or not mpi.Is_initialized() or mpi.Is_finalized():
        return
    if mpi.COMM_WORLD.Get_size() > 1:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        time.sleep(ABORT_GRACE)
        mpi.COMM_WORLD.Abort(code)


def _chained(previous: ExceptHook) -> ExceptHook:
    """``previous``, then an abort of the job."""

    def hook(exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        previous(exc_type, exc, tb)
        abort_world(ABORT_STATUS)

    hook.propulate_abort = True  # type: ignore[attr-defined]
    return hook


def abort_on_uncaught_error() -> None:
    """Make an uncaught exception on any rank abort the whole MPI job (idempotent).

    The previous :data:`sys.excepthook` still runs first (it prints the traceback).
    """
    if getattr(sys.excepthook, "propulate_abort", False):
        return
    sys.excepthook = _chained(sys.excepthook)
