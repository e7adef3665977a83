"""Where a worker's time goes: the wall seconds of each part of its loop, added up per run.

The scaling benchmark (``benchmarks/scaling.py``) prints them per evaluation, so a slowdown of
the engine at scale shows its cause (waiting for the budget, taking in immigrants, ...).
"""

from __future__ import annotations

#: The parts of a worker's loop: waiting for a slot of the budget, taking in messages (peers'
#: individuals, immigrants), breeding, the objective itself, the evaluation's bookkeeping
#: (timers, signals, the record written), sending the child to the island's peers, emigration.
PHASES = ("claim", "receive", "breed", "objective", "bookkeeping", "share", "migrate")


class PhaseTimes:
    """Wall seconds per phase (:data:`PHASES`) of one worker's loop."""

    def __init__(self) -> None:
        self.seconds = dict.fromkeys(PHASES, 0.0)

    def step(
        self,
        start: float,
        received: float,
        bred: float,
        evaluated: float,
        shared: float,
        end: float,
        objective: float,
    ) -> None:
        """Add one generation, from the ``time.perf_counter`` values that end each phase and
        the ``objective``'s own seconds (part of the evaluation)."""
        s = self.seconds
        s["receive"] += received - start
        s["breed"] += bred - received
        s["objective"] += objective
        s["bookkeeping"] += evaluated - bred - objective
        s["share"] += shared - evaluated
        s["migrate"] += end - shared
