"""Intermediate values of a running evaluation: how objectives report them, who decides to stop.

An objective reports one value per step (an epoch, an iteration) in one of three ways:

* **a generator** (Propulate 1.2's convention): ``def loss(params): ... yield value`` -- one
  value per step, steps numbered 0, 1, 2, ...; the last value is the result;
* **a reporter**: a function (or a :class:`~propulate.user_objective.Command`) whose signature has
  a parameter named ``report`` gets ``report=`` a callable; ``report(step, value)`` records the
  value and returns whether to stop. A function told to stop should return at once (what it
  returns is then ignored); the evaluation is recorded as pruned either way;
* **a command's progress lines**: a command objective with ``progress: REGEX`` reads its
  program's output line by line while it runs (:mod:`propulate.user_objective.command`).

Every value goes through one :class:`Steps` object per evaluation: it checks the value (a
value that is not a finite number fails the evaluation, naming the value), appends
``[step, value]`` to the curve and asks the run's pruner. A step that does not increase over
the previous one is ignored. Values arrive and are recorded whether or not a pruner is set, so
the records hold the curves of every method.

With several ranks per worker (``ranks_per_worker > 1``) every rank runs the objective and
reports the same steps; the leader's values are recorded and its pruner decides, and a
:class:`StepSync` hands each decision to the other ranks (a non-blocking broadcast on the
worker's communicator, waited for with backoff), so all of them stop at the same step. Every
rank's objective must therefore report the same number of values, as for any collective call.
"""

from __future__ import annotations

import inspect
import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

from propulate.runs.outcome import as_loss


class Pruned(Exception):
    """A pruner stopped the evaluation at the last value of ``curve``."""

    def __init__(self, curve: list[list[float]]) -> None:
        step = curve[-1][0] if curve else 0
        super().__init__(f"stopped by the pruner at step {step:g}")
        self.curve = curve


def accepts_report(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` has a parameter named ``report`` that can be passed by keyword."""
    try:
        param = inspect.signature(fn).parameters.get("report")
    except (TypeError, ValueError):
        return False
    return param is not None and param.kind in (
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        inspect.Parameter.KEYWORD_ONLY,
    )


class StepSync:
    """The per-step stop decision shared by the ranks of a multi-rank worker.

    Parameters
    ----------
    comm : MPI.Comm
        The worker's ranks; rank 0 (the leader) decides.
    """

    def __init__(self, comm: Any) -> None:
        self.comm = comm
        self.leader = comm.Get_rank() == 0
        self._buf = np.zeros(1, dtype=np.int8)

    def share(self, stop: bool) -> bool:
        """The leader's decision on every rank (collective: one call per reported value);
        ``stop`` is the leader's decision and ignored elsewhere."""
        from propulate.polling import Backoff

        if self.leader:
            self._buf[0] = 1 if stop else 0
        req = self.comm.Ibcast(self._buf, root=0)
        backoff = Backoff(start=1e-5, limit=2e-3)
        while not req.Test():
            backoff.sleep()
        return bool(self._buf[0])


class Steps:
    """The reporter of one evaluation: ``steps(step, value) -> stop``.

    Parameters
    ----------
    pruner : Pruner or None
        Asked after each new value (``None``: never stop).
    curve : list
        Receives ``[step, value]`` per value (the evaluation's record keeps it).
    sync : StepSync or None
        Shares the decision with the other ranks of a multi-rank worker. On a non-leader rank
        the values are not checked or kept: the leader's decision is returned.
    """

    def __init__(self, pruner: Any, curve: list[list[float]], sync: StepSync | None = None) -> None:
        self.pruner = pruner
        self.curve = curve
        self.sync = sync
        self.stopped = False

    def __call__(self, step: Any, value: Any) -> bool:
        """Record ``value`` at ``step``; whether the evaluation should stop now.

        Raises
        ------
        ValueError
            When ``value`` (or ``step``) is not a finite number, naming it.
        """
        if self.sync is not None and not self.sync.leader:
            decision = self.sync.share(False)  # every call joins the broadcast
            self.stopped = self.stopped or decision
            return self.stopped
        try:
            stop = self._decide(step, value)
        except BaseException:
            if self.sync is not None:
                self.sync.share(True)  # the other ranks wait for this step's decision
            raise
        if self.sync is not None:
            self.sync.share(stop)
        return stop

    def _decide(self, step: Any, value: Any) -> bool:
        if self.stopped:
            return True
        if isinstance(step, bool) or not isinstance(step, numbers.Real) or step - step != 0:
            raise ValueError(f"intermediate value's step is not a finite number: {step!r}")
        try:
            loss = as_loss(value)
        except ValueError as err:
            raise ValueError(f"intermediate value at step {step:g}: {err}") from None
        curve = self.curve
        if curve and step <= curve[-1][0]:
            return False  # a repeated or earlier step: ignored
        at = float(step)
        curve.append([int(at) if at.is_integer() else at, loss])
        if self.pruner is not None and self.pruner.should_stop(curve):
            self.stopped = True
        return self.stopped
