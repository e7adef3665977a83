"""The ranks of a multi-rank worker besides its leader: they evaluate what the leader sends.

With ``ranks_per_worker > 1`` a worker is a group of ranks: the leader breeds, records and
talks to the other workers; the members only join each evaluation, ``loss_fn(params, comm)``
with ``comm`` the worker's ranks. They wait for work without spinning (polling with backoff).
When the run has a pruner, the leader decides after each reported value and the members stop
at the same step (:class:`~propulate.engine.steps.StepSync`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from propulate.engine.evaluation import call_objective
from propulate.engine.messaging import Messenger
from propulate.engine.signals import EvaluationInterrupted, StopFlag
from propulate.engine.steps import Pruned, StepSync, accepts_report
from propulate.polling import Backoff
from propulate.population import Individual


def serve_evaluations(worker_comm: Any, loss_fn: Callable[..., Any]) -> None:
    """Evaluate every ``("eval", params, pruning)`` the leader (rank 0 of ``worker_comm``)
    sends, until it sends ``("stop",)``; the leader records the outcomes. With ``pruning`` the
    leader's stop decisions are followed step by step."""
    inbox = Messenger(worker_comm)
    backoff = Backoff()
    report = accepts_report(loss_fn)
    sync = StepSync(worker_comm)
    with StopFlag() as flag:
        while True:
            msgs = inbox.poll()
            if not msgs:
                backoff.sleep()
                continue
            backoff.reset()
            for _, msg in msgs:
                if msg[0] == "stop":
                    inbox.flush()
                    inbox.free()
                    return
                pruning = len(msg) > 2 and bool(msg[2])
                try:
                    with flag.interrupting():
                        call_objective(
                            loss_fn,
                            Individual(msg[1]),
                            worker_comm,
                            report=report,
                            sync=sync if pruning else None,
                        )
                except (Exception, Pruned, EvaluationInterrupted):  # noqa: BLE001 - the leader records
                    pass
