"""Stop requests: SIGTERM, SIGINT and SIGUSR1 (Slurm's warning before its time limit).

Outside an evaluation the handler only sets a flag; the worker loop checks it between
evaluations and stops cleanly, with every log flushed and the other workers told. While an
evaluation runs (inside :meth:`StopFlag.interrupting`), the handler also raises
:class:`EvaluationInterrupted` in the main thread, so a sleeping, looping or waiting objective
(a ``time.sleep``, a Python loop, a ``subprocess.run``) is stopped at once. Code that does not
return to the Python interpreter (a long call into a C extension that ignores signals) is
interrupted only when that call returns.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGUSR1)


class EvaluationInterrupted(BaseException):
    """A running evaluation was stopped by a stop signal or by the run's time limit.

    A ``BaseException``, so an objective's ``except Exception`` does not swallow it.

    Parameters
    ----------
    reason : str
        ``"signal"`` or ``"time limit"``.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(f"evaluation interrupted ({reason})")
        self.reason = reason


class _Interrupting:
    """The context of :meth:`StopFlag.interrupting` (a class, not a generator: it is entered
    once per evaluation)."""

    __slots__ = ("flag",)

    def __init__(self, flag: StopFlag) -> None:
        self.flag = flag

    def __enter__(self) -> None:
        if self.flag.signum is not None:
            raise EvaluationInterrupted("signal")
        self.flag._interruptible = True

    def __exit__(self, *exc: object) -> None:
        self.flag._interruptible = False


class StopFlag:
    """Installs handlers for :data:`STOP_SIGNALS` while in use as a context manager.

    Handlers can only be installed from the main thread; elsewhere the flag never rises.
    """

    def __init__(self) -> None:
        self.signum: int | None = None
        self._previous: dict[int, object] = {}
        self._interruptible = False
        self._inside = _Interrupting(self)

    @property
    def raised(self) -> bool:
        """Whether a stop signal arrived."""
        return self.signum is not None

    @property
    def installed(self) -> bool:
        """Whether the handlers are in place (the context was entered in the main thread)."""
        return bool(self._previous)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.signum = signum
        if self._interruptible:
            self._interruptible = False  # raise once; a second signal only sets the flag
            raise EvaluationInterrupted("signal")

    def interrupting(self) -> _Interrupting:
        """While inside, a stop signal raises :class:`EvaluationInterrupted` here."""
        return self._inside

    def __enter__(self) -> StopFlag:
        if threading.current_thread() is threading.main_thread():
            for sig in STOP_SIGNALS:
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)  # type: ignore[arg-type]
        self._previous.clear()
