"""The pruner interface: stop an evaluation early from the values it reports on the way.

An objective reports intermediate values (e.g. the validation loss after each epoch): a Python
objective that is a generator yields one value per step, Propulate 1.2's convention. After each
value the engine asks the run's pruner :meth:`Pruner.should_stop`; when it says stop, the
evaluation ends there and is recorded with status ``"pruned"`` (no loss; its ``curve`` holds
the values, ``[[step, value], ...]``). A pruned evaluation is neither a failure (the failure
limit ignores it) nor a result (the island model does not breed from it as if its value were
final; under a pruner its GA fills a pool that holds fewer than ``pop_size`` finished
evaluations with the pruned ones that got furthest, :mod:`propulate.propagators.pruned_pool`).

Pruners are asynchronous and shared across ranks without messages of their own: every
evaluated individual carries its curve, and the engine hands each one a worker learns about
(its own, its island peers', immigrants, resumed records) to :meth:`Pruner.observe`, so every
rank's pruner sees the same curves, in its own order. A running evaluation's values become
known to the other ranks when it ends (with its record).

How objectives report values (generators, a ``report`` keyword, a command's progress lines)
is described in :mod:`propulate.engine.steps`; the pruners by name are in
:mod:`propulate.pruners.registry`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class Pruner:
    """Decides from an evaluation's intermediate values whether to stop it.

    Subclasses implement :meth:`should_stop` and usually :meth:`observe`. Steps are whatever
    the objective counts (epochs, iterations), increasing within one evaluation; a generator's
    values are steps 0, 1, 2, ... (as with Optuna's ``trial.report(value, step)`` for the
    epoch index). One pruner object serves one rank and sees one evaluation at a time:
    :meth:`start`, then :meth:`should_stop` after each value.
    """

    def start(self, params: Any) -> None:
        """A new evaluation of ``params`` (a mapping; the engine passes the
        :class:`~propulate.population.Individual`) begins: reset per-evaluation state."""

    def should_stop(self, curve: Sequence[Sequence[float]]) -> bool:
        """Whether to stop the running evaluation whose values so far are ``curve``.

        Parameters
        ----------
        curve : sequence of (step, value)
            The evaluation's intermediate values, oldest first; the last one is new.
        """
        return False

    def observe(self, individual: Any) -> None:
        """Learn from a finished evaluation (``individual.curve``, ``individual.status``,
        ``individual.loss``). The default learns nothing."""

    @property
    def observes(self) -> bool:
        """Whether :meth:`observe` does anything (the engine skips the call otherwise)."""
        return type(self).observe is not Pruner.observe
