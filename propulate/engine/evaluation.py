"""One evaluation inside a run: the objective's outcome, deadlines, interruption, confirmation.

:class:`Evaluator` calls the objective through :func:`propulate.runs.outcome.outcome_of` (so a
loss means the same as everywhere else) and adds what a long run needs:

* a per-evaluation timeout (``eval_timeout`` seconds): ``SIGALRM`` raises
  :class:`EvaluationTimeout` in the objective, the evaluation is recorded with status
  ``"timeout"`` (a failure) and the run goes on;
* the run's time limit: an evaluation still running at the limit is stopped and recorded with
  status ``"interrupted"``;
* stop signals (see :mod:`propulate.engine.signals`): the running evaluation is stopped and
  recorded as ``"interrupted"``.

What can be stopped: anything that returns to the Python interpreter now and then -- sleeps,
Python loops, waiting for a subprocess (``subprocess.run`` kills its child when interrupted).
What cannot: a single long call into C code that does not check for signals; it is stopped
when it returns. Timeouts need the main thread (signal handlers live there) and a platform
with ``SIGALRM``; elsewhere evaluations run without a deadline.

Confirmation of noisy objectives: if the objective object has a method
``confirm(params, outcome) -> Outcome``, it is called when an ``ok`` outcome would become the
island's new best, or when its loss is an outlier against its nearest evaluated neighbours
(:func:`propulate.user_objective.noise.is_outlier`: more than 3 times above or below their median),
and the outcome it returns (e.g. the median of repeated measurements) is recorded instead. It
runs under the same deadline as the evaluation. :func:`neighbour_losses` gives the rule those
neighbours' losses.
"""

from __future__ import annotations

import signal
import threading
import time
import traceback
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from propulate.engine.signals import EvaluationInterrupted, StopFlag
from propulate.engine.steps import Pruned, Steps, StepSync, accepts_report
from propulate.runs.declared_objectives import Objectives
from propulate.runs.outcome import (
    INTERRUPTED,
    PRUNED,
    TIMEOUT,
    Outcome,
    failure,
    outcome_of,
)
from propulate.runs.status import FAILURE_STATUSES

if TYPE_CHECKING:
    from propulate.population import Individual, Population
    from propulate.space import SearchSpace

__all__ = [
    "FAILURE_STATUSES",
    "EvaluationTimeout",
    "Evaluator",
    "Pruned",
    "call_objective",
    "run_objective",
]


class EvaluationTimeout(BaseException):
    """An evaluation ran past its ``eval_timeout`` (a ``BaseException``: objectives' ``except
    Exception`` clauses do not swallow it)."""


def call_objective(
    fn: Callable[..., Any],
    params: Any,
    comm: Any = None,
    pruner: Any = None,
    curve: list[list[float]] | None = None,
    report: bool = False,
    sync: StepSync | None = None,
) -> Any:
    """Call ``fn(params)`` (or ``fn(params, comm)``), following its intermediate values.

    A generator objective (Propulate 1.2's early-stopping style) yields one intermediate value
    per step; its last value is its result. With ``report`` the objective gets a reporter as
    keyword ``report`` (:mod:`propulate.engine.steps`). Each value is appended to ``curve`` as
    ``[step, value]`` (a generator's steps count from 0) and shown to ``pruner``; when the
    pruner says stop, a generator is closed, and :class:`Pruned` is raised (also when a
    reporting function returns after being told to stop). A value that is not a finite number
    is an error naming it. ``sync`` shares each decision with a multi-rank worker's ranks.
    """
    if report:
        steps: Steps | None = Steps(pruner, curve if curve is not None else [], sync)
        out = fn(params, report=steps) if comm is None else fn(params, comm, report=steps)
    else:
        out = fn(params) if comm is None else fn(params, comm)
        if type(out) is not types.GeneratorType:  # the common case: a plain loss
            return out
        steps = None
    if isinstance(out, types.GeneratorType):
        if steps is None:
            steps = Steps(pruner, curve if curve is not None else [], sync)
        last = None
        try:
            for step, last in enumerate(out):
                if steps(step, last):
                    break
        finally:
            out.close()
        out = last
    if steps is not None and steps.stopped:
        raise Pruned(steps.curve)
    return out


def run_objective(
    fn: Callable[..., Any],
    params: Any,
    comm: Any = None,
    pruner: Any = None,
    curve: list[list[float]] | None = None,
    report: bool = False,
    sync: StepSync | None = None,
    objectives: Objectives | None = None,
) -> Outcome:
    r"""The outcome of :func:`call_objective` (same arguments): the objective's loss, its
    failure (an exception, a value that is no finite number) or ``pruned`` with the curve.
    With declared ``objectives`` the value holds one value per objective
    (:func:`~propulate.runs.outcome.outcome_of`).
    Never raises for the objective's failures; ``BaseException``\ s that are no ``Exception``
    (timeouts, interruptions) pass."""
    values: list[list[float]] = curve if curve is not None else []
    try:
        value = call_objective(fn, params, comm, pruner, values, report, sync)
    except Pruned as stop:
        return Outcome(None, PRUNED, str(stop), curve=stop.curve)
    except Exception as err:  # noqa: BLE001 - any failure of user code is an outcome
        out = failure(err)
    else:
        out = value if isinstance(value, Outcome) else outcome_of(value, objectives)
    if values and not out.curve:
        out.curve = values
    return out


def _outlier(loss: float, neighbours: Callable[[], list[float]] | None) -> bool:
    if neighbours is None:
        return False
    from propulate.user_objective.noise import is_outlier  # only objectives that confirm get here

    return is_outlier(loss, neighbours())


class Evaluator:
    """Runs evaluations with deadlines and interruption.

    Parameters
    ----------
    loss_fn : callable
        The objective, ``loss_fn(params)`` or ``loss_fn(params, comm)``; may return a number
        or an :class:`~propulate.runs.outcome.Outcome`.
    flag : StopFlag
        The run's stop-signal flag (entered by the caller).
    eval_timeout : float or None
        Seconds one evaluation may take (``None``: no limit).
    deadline : float or None
        ``time.monotonic()`` value of the run's time limit (``None``: none).
    pruner : Pruner or None
        Asked after each intermediate value whether to stop (:mod:`propulate.pruners`); its
        ``start`` is called before each evaluation.
    sync : StepSync or None
        The leader's side of a multi-rank worker's shared stop decisions.
    objectives : Objectives or None
        The run's declared objectives (``None``: the objective returns its loss).
    """

    def __init__(
        self,
        loss_fn: Callable[..., Any],
        flag: StopFlag,
        eval_timeout: float | None = None,
        deadline: float | None = None,
        pruner: Any = None,
        sync: StepSync | None = None,
        objectives: Objectives | None = None,
    ) -> None:
        self.loss_fn = loss_fn
        self.objectives = objectives
        self.pruner = pruner
        self.sync = sync
        self.report = accepts_report(loss_fn)  # asked once: the hot path does not inspect
        self.confirm: Callable[[dict[str, Any], Outcome], Outcome] | None = (
            getattr(loss_fn, "confirm", None) if objectives is None else None
        )
        self.flag = flag
        self.eval_timeout = eval_timeout
        self.deadline = deadline
        self._armed = False
        self._previous: Any = None
        main = threading.current_thread() is threading.main_thread()
        self.timers = (
            main
            and hasattr(signal, "setitimer")
            and (eval_timeout is not None or deadline is not None)
        )
        if self.timers:
            self._previous = signal.signal(signal.SIGALRM, self._alarm)

    def close(self) -> None:
        """Disarm and restore the previous ``SIGALRM`` handler."""
        if self.timers:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self._previous)
            self.timers = False

    def _alarm(self, signum: int, frame: Any) -> None:
        if not self._armed:
            return
        self._armed = False
        if self.deadline is not None and time.monotonic() >= self.deadline - 1e-3:
            raise EvaluationInterrupted("time limit")
        raise EvaluationTimeout()

    def _arm(self) -> None:
        if not self.timers:
            return
        now = time.monotonic()
        left = [
            t
            for t in (self.eval_timeout, None if self.deadline is None else self.deadline - now)
            if t is not None
        ]
        self._armed = True
        signal.setitimer(signal.ITIMER_REAL, max(min(left), 1e-4))

    def _disarm(self) -> None:
        if self.timers:
            self._armed = False
            signal.setitimer(signal.ITIMER_REAL, 0)

    def __call__(
        self,
        params: dict[str, Any],
        comm: Any = None,
        best: float | None = None,
        neighbours: Callable[[], list[float]] | None = None,
    ) -> Outcome:
        """Evaluate ``params``; ``best`` is the island's best loss so far and ``neighbours``
        gives the losses of the nearest evaluated configurations (both for confirmation).

        Returns
        -------
        Outcome
            Never raises for the objective's failures, timeouts or interruptions.
        """
        start, t = time.time(), time.perf_counter()
        curve: list[list[float]] = []
        try:
            with self.flag.interrupting():
                if self.timers:
                    self._arm()
                try:
                    out = self._outcome(params, comm, curve)
                    if (
                        self.confirm is not None
                        and out.ok
                        and out.loss is not None
                        and (best is None or out.loss < best or _outlier(out.loss, neighbours))
                    ):
                        confirmed = self.confirm(dict(params), out)
                        out = confirmed if isinstance(confirmed, Outcome) else outcome_of(confirmed)
                finally:
                    if self.timers:
                        self._disarm()
        except EvaluationTimeout:
            out = Outcome(
                None,
                TIMEOUT,
                f"evaluation exceeded eval_timeout of {self.eval_timeout} s",
                traceback.format_exc(),
            )
        except EvaluationInterrupted as err:
            out = Outcome(None, INTERRUPTED, f"evaluation interrupted ({err.reason})")
        out.start, out.seconds = start, time.perf_counter() - t
        if curve and not out.curve:
            out.curve = curve
        return out

    def _outcome(self, params: dict[str, Any], comm: Any, curve: list[list[float]]) -> Outcome:
        if self.pruner is not None:
            self.pruner.start(params)
        return run_objective(
            self.loss_fn,
            params,
            comm,
            self.pruner,
            curve,
            self.report,
            self.sync,
            self.objectives,
        )


def neighbour_losses(
    space: SearchSpace | None, population: Population, island: int, ind: Individual
) -> Callable[[], list[float]] | None:
    """A function giving the losses of ``island``'s evaluated configurations nearest to ``ind``
    (the outlier rule of objectives that confirm their measurements); ``None`` without a space."""
    if space is None:
        return None

    def losses() -> list[float]:
        from propulate.user_objective.noise import nearest_losses

        done: list[Individual] = [i for i in population.active(island) if i.loss is not None]
        if not done:
            return []
        return nearest_losses(space.encode(ind), space.encode_many(done), [i.loss for i in done])

    return losses
