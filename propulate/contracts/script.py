"""How the pruner checks drive a pruner: a fixed script of evaluations played on it as the
engine would, recording its decisions.

The script (:func:`script`) mixes this rank's own evaluations, run through ``start`` and
``should_stop`` (cut where the pruner says stop, and then observed as ``pruned``), and the other
ranks' ones, only observed: finished, failed, timed out, interrupted or pruned, with curves
whose steps start at 0 or 1 or leave gaps, some rising after their minimum.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from propulate.contracts.island import call, changed_field, frozen_copy, snapshot
from propulate.contracts.runner import require
from propulate.population import Individual
from propulate.runs.status import FAILED, INTERRUPTED, OK, PRUNED, TIMEOUT
from propulate.space import Categorical, Float, Integer, SearchSpace

#: Evaluations in the script unless a check is told otherwise.
RUNS = 24
#: The configurations' space when neither the check nor the pruner gives one.
DEFAULT_SPACE = SearchSpace(
    {"x": Float(-1.0, 1.0), "n": Integer(1, 8), "act": Categorical(("relu", "tanh"))}
)


@dataclass(frozen=True)
class Evaluation:
    """One evaluation of the script.

    Attributes
    ----------
    params : dict
        Its configuration.
    rank : int
        The rank that ran it (0: this one, through ``start`` and ``should_stop``).
    curve : list
        The values it reports if not stopped, ``[[step, value], ...]``.
    status : str
        How it ends if not stopped.
    """

    params: dict[str, Any]
    rank: int
    curve: list[list[float]]
    status: str


def script(space: SearchSpace, runs: int = RUNS, seed: int = 0) -> list[Evaluation]:
    """A fixed mix of evaluations: learning curves of several qualities, some that rise after
    their minimum (they stall), steps from 0, from 1 or with gaps; every other one this
    rank's, the rest from ranks 1-3; some fail, time out, are interrupted."""
    rng = random.Random(seed)
    out = []
    for i in range(runs):
        params = space.decode([rng.random() for _ in range(space.dim)])
        quality, rise = rng.uniform(0.0, 1.5), (0.15 if i % 4 in (1, 2) else 0.0)
        steps = (
            list(range(1, 10))
            if i % 6 == 2
            else list(range(0, 17, 2))
            if i % 6 == 4
            else list(range(9))
        )
        curve = [
            [s, round(0.1 + quality + 1.5 / (1.0 + s) + rise * s + rng.uniform(0, 0.02), 6)]
            for s in steps
        ]
        own = i % 2 == 0
        status = OK
        if i % 7 == 3:
            status, curve = FAILED, curve[: i % 4]
        elif not own and i % 11 == 5:
            status, curve = TIMEOUT, []
        elif not own and i % 13 == 9:
            status, curve = INTERRUPTED, curve[:4]
        elif not own and i % 9 == 7:
            status, curve = PRUNED, curve[:2]
        out.append(Evaluation(params, 0 if own else 1 + i % 3, curve, status))
    return out


def finished(e: Evaluation, index: int, curve: list[list[float]], status: str) -> Individual:
    """The individual the worker learns about when evaluation ``index`` ended."""
    ind = Individual(dict(e.params), generation=index, rank=e.rank)
    ind.uid = f"check:{e.rank}:{index}"
    ind.island, ind.status, ind.curve = 0, status, [list(p) for p in curve] or None
    ind.loss = float(curve[-1][1]) if status == OK and curve else float("inf")
    if status == OK and not curve:
        ind.status = FAILED
    ind.error = f"evaluation {status}" if status in (FAILED, TIMEOUT) else None
    ind.evaltime, ind.evalperiod = 1.7e9 + index, 1.0
    return ind


class Player:
    """Plays a script on a pruner as the engine would, recording its decisions.

    Parameters
    ----------
    pruner : Pruner
        The pruner (used as is: pass a copy).
    observe_always : bool
        Call :meth:`observe` even when ``observes`` is false (the engine does not).
    watch_curve, watch_observe : bool
        Fail when ``should_stop`` changes the curve it is given, or ``observe`` the
        individual.
    observe_errors : bool
        Fail when ``observe`` raises; otherwise go on as if it had not been called (for the
        checks whose contract is another).
    """

    def __init__(
        self,
        pruner: Any,
        *,
        observe_always: bool = False,
        watch_curve: bool = False,
        watch_observe: bool = False,
        observe_errors: bool = False,
    ) -> None:
        self.pruner = pruner
        self.observe_errors = observe_errors
        self.observe_always = observe_always
        self.watch_curve, self.watch_observe = watch_curve, watch_observe
        #: (evaluation index, step, decision) for every ``should_stop`` call.
        self.decisions: list[tuple[int, float, Any]] = []
        #: Every individual observed.
        self.observed: list[Individual] = []

    def tell(self, ind: Individual) -> None:
        """Hand a finished evaluation to :meth:`observe` (when the pruner observes)."""
        if not (
            self.observe_always
            or call("reading .observes", getattr, self.pruner, "observes", False)
        ):
            return
        before, reference = snapshot(ind), frozen_copy(ind)
        try:
            call(f"observe({ind.uid}, {ind.status}, rank {ind.rank})", self.pruner.observe, ind)
        except AssertionError:
            if self.observe_errors:
                raise
        if self.watch_observe and snapshot(ind) != before:
            raise AssertionError(
                f"observe must not modify the individual: it changed {ind.uid} ({ind.status}), "
                f"{changed_field(before, ind, reference)}"
            )
        self.observed.append(ind)

    def run_own(self, index: int, e: Evaluation) -> Individual:
        """Run this rank's evaluation: ``start``, ``should_stop`` after each value until it
        says stop; returns the finished individual (not yet observed)."""
        ind = Individual(dict(e.params), generation=index, rank=0)
        call(f"start({dict(ind)})", self.pruner.start, ind)
        curve: list[list[float]] = []
        for step, value in e.curve:
            curve.append([step, value])
            before = repr(curve)
            stop = call(
                f"should_stop on evaluation {index} at step {step}",
                self.pruner.should_stop,
                curve,
            )
            if self.watch_curve and repr(curve) != before:
                raise AssertionError(
                    f"should_stop must not modify the curve it is given: evaluation {index} at "
                    f"step {step}: {before} became {curve!r}"
                )
            self.decisions.append((index, step, stop))
            if stop:
                return finished(e, index, curve, PRUNED)
        return finished(e, index, curve, e.status)

    def play(self, evaluations: Sequence[Evaluation], offset: int = 0) -> Player:
        """Play ``evaluations`` in order (own ones run, the others only observed)."""
        for i, e in enumerate(evaluations, start=offset):
            ind = self.run_own(i, e) if e.rank == 0 else finished(e, i, e.curve, e.status)
            self.tell(ind)
        return self


def fresh(pruner: Any) -> Any:
    """A new pruner: built by ``pruner`` when it is a factory (a class or a function of no
    arguments), else a deep copy of it."""
    if isinstance(pruner, type) or not hasattr(pruner, "should_stop"):
        return call("building the pruner", pruner)
    return call(
        "copy.deepcopy of the pruner (pass its factory to check it uncopied)", copy.deepcopy, pruner
    )


def pruner_space(pruner: Any, space: SearchSpace | None) -> SearchSpace:
    """``space``, else the pruner's own ``.space``, else :data:`DEFAULT_SPACE`."""
    if space is not None:
        return space
    own = getattr(fresh(pruner), "space", None)
    return own if isinstance(own, SearchSpace) else DEFAULT_SPACE


def script_of(
    pruner: Any, space: SearchSpace | None, runs: int | None, seed: int
) -> list[Evaluation]:
    """The script a check plays (``runs`` evaluations, :data:`RUNS` by default)."""
    return script(pruner_space(pruner, space), RUNS if runs is None else runs, seed)


def play(pruner: Any, evaluations: Sequence[Evaluation], **options: Any) -> Player:
    """Play ``evaluations`` on a new pruner (``options``: of :class:`Player`)."""
    return Player(fresh(pruner), **options).play(evaluations)


def same_decisions(a: Player, b: Player, what: str) -> None:
    """Fail, saying ``what`` and where, unless both players took the same decisions."""
    for x, y in zip(a.decisions, b.decisions, strict=False):
        require(
            x == y,
            f"{what}: evaluation {x[0]} at step {x[1]}: should_stop said {x[2]!r} and {y[2]!r}",
        )
    require(
        len(a.decisions) == len(b.decisions),
        f"{what}: {len(a.decisions)} and {len(b.decisions)} decisions",
    )
