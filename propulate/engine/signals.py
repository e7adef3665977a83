"""Stop requests from the scheduler: SIGTERM and SIGUSR1 (Slurm's warning before its limit).

The handler only sets a flag; the worker loop checks it between evaluations and stops cleanly,
with every log flushed and the other workers told.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType

STOP_SIGNALS = (signal.SIGTERM, signal.SIGUSR1)


class StopFlag:
    """Installs handlers for :data:`STOP_SIGNALS` while in use as a context manager."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self._previous: dict[int, object] = {}

    @property
    def raised(self) -> bool:
        """Whether a stop signal arrived."""
        return self.signum is not None

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.signum = signum

    def __enter__(self) -> StopFlag:
        if threading.current_thread() is threading.main_thread():
            for sig in STOP_SIGNALS:
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)  # type: ignore[arg-type]
        self._previous.clear()
