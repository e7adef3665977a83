"""Propulate 1.2's surrogate module: ``from propulate.compat.surrogate import StaticSurrogate``.

The built-in surrogates are pruners here (:mod:`propulate.pruners.surrogates`); pass one to
``Islands(surrogate_factory=lambda: StaticSurrogate())`` or ``Islands(pruner=...)``, or name
it in a run's settings (``--pruner static``, ``--pruner dynamic``). A surrogate of one's own
subclasses :class:`Surrogate` (Propulate 1.2's interface) and runs through
:class:`~propulate.pruners.surrogates.LegacySurrogate`.
"""

from __future__ import annotations

from typing import Any

from propulate.pruners.surrogates import DynamicSurrogate, LegacySurrogate, StaticSurrogate

__all__ = ["DynamicSurrogate", "LegacySurrogate", "StaticSurrogate", "Surrogate"]


class Surrogate:
    """Propulate 1.2's surrogate interface, for surrogates of one's own.

    The engine calls :meth:`start_run` before an evaluation, :meth:`cancel` after each value
    it reports (stop when it returns True) and :meth:`update` with the final (or last) value.
    The other ranks' evaluations are replayed through the same three calls, so :meth:`merge`
    and :meth:`data` are not needed.
    """

    def start_run(self, ind: Any) -> None:
        """A new evaluation of ``ind`` begins."""
        raise NotImplementedError

    def cancel(self, loss: float) -> bool:
        """Whether to stop the running evaluation after its latest value ``loss``."""
        raise NotImplementedError

    def update(self, loss: float) -> None:
        """The evaluation ended with ``loss`` (its final or last value)."""
        raise NotImplementedError

    def merge(self, data: Any) -> None:
        """Propulate 1.2's merge of another rank's :meth:`data` (unused here)."""

    def data(self) -> Any:
        """Propulate 1.2's state for :meth:`merge` (unused here)."""
        return None
