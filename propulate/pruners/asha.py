"""Asynchronous successive halving (ASHA): promote the best ``1/eta`` at each rung.

Rung ``k`` sits at step ``min_steps * eta**k``. An evaluation that reaches a rung goes on only
if its value there is among the best ``1/eta`` of the values every evaluation had at that rung
(its own included); otherwise it stops. There is no waiting for a rung to fill: while a rung
holds fewer than ``eta`` values, an evaluation goes on only with the best value there. This is
the stopping variant of ASHA (Li et al., "A System for Massively Parallel Hyperparameter
Tuning", MLSys 2020) that Optuna's ``SuccessiveHalvingPruner`` implements; with the same rungs
and the same curves, in the same order, both take the same decisions
(``tests/test_pruners_optuna.py``).

Steps are numbered as the objective reports them (a generator's first value is step 0, as the
epoch index in ``trial.report(value, epoch)``): ``min_steps=1`` checks the first rung at the
second value. The values at the rungs are learned from the finished evaluations of every rank
(:meth:`ASHAPruner.observe`), including pruned ones (their value at the rung where they
stopped).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sortedcontainers import SortedList

from propulate.pruners.base import Pruner


class ASHAPruner(Pruner):
    """Asynchronous successive halving.

    Parameters
    ----------
    min_steps : float
        The step of the first rung (Optuna's ``min_resource``), > 0.
    eta : int
        Reduction factor: rungs at ``min_steps * eta**k``, the best ``1/eta`` go on; >= 2.
    bootstrap : int
        An evaluation at a rung holding no more than this many values (its own included)
        stops (Optuna's ``bootstrap_count``); 0: off.
    """

    def __init__(self, min_steps: float = 1, eta: int = 3, bootstrap: int = 0) -> None:
        if isinstance(min_steps, bool) or not min_steps > 0:
            raise ValueError(f"asha min_steps must be > 0, got {min_steps!r}")
        if isinstance(eta, bool) or not isinstance(eta, int) or eta < 2:
            raise ValueError(f"asha eta must be a whole number >= 2, got {eta!r}")
        if isinstance(bootstrap, bool) or not isinstance(bootstrap, int) or bootstrap < 0:
            raise ValueError(f"asha bootstrap must be a whole number >= 0, got {bootstrap!r}")
        self.min_steps = min_steps
        self.eta = eta
        self.bootstrap = bootstrap
        self.rungs: list[SortedList] = []  # rung k -> the values recorded there, sorted
        self._next = 0  # the running evaluation's next rung

    def rung_step(self, k: int) -> float:
        """The step of rung ``k``."""
        return self.min_steps * self.eta**k

    def start(self, params: Any) -> None:
        self._next = 0

    def should_stop(self, curve: Sequence[Sequence[float]]) -> bool:
        if len(curve) == 1:
            self._next = 0
        step, value = curve[-1][0], curve[-1][1]
        while step >= self.rung_step(self._next):
            if not self.promotable(self._next, value):
                return True
            self._next += 1
        return False

    def promotable(self, k: int, value: float) -> bool:
        """Whether ``value`` at rung ``k`` is among the best ``1/eta`` of the rung's values
        and itself (the best one while there are fewer than ``eta``)."""
        rung = self.rungs[k] if k < len(self.rungs) else ()
        n = len(rung) + 1
        if n <= self.bootstrap:
            return False
        allowed = max(n // self.eta - 1, 0)  # index of the worst promoted value, sorted
        better = rung.bisect_left(value) if rung else 0  # values strictly below ``value``
        return better <= allowed

    def observe(self, individual: Any) -> None:
        """Record the values a finished evaluation had at each rung it reached: the value of
        its first step at or past the rung."""
        curve = getattr(individual, "curve", None)
        if not curve:
            return
        k = 0
        for step, value in curve:
            while step >= self.rung_step(k):
                while len(self.rungs) <= k:
                    self.rungs.append(SortedList())
                self.rungs[k].add(float(value))
                k += 1
