"""The contracts of a pruner, one named check each.

A pruner (:class:`~propulate.pruners.base.Pruner`) is built once per rank and serves one
evaluation at a time: :meth:`start`, then :meth:`should_stop` after each reported value, and
:meth:`observe` for every finished evaluation the worker learns about, its own and the other
ranks' (module :mod:`propulate.pruners.base`). The checks play a fixed script of such
evaluations (:func:`script`): this rank's own ones through ``start`` and ``should_stop`` (cut
where the pruner says stop, and then observed as ``pruned``), the other ranks' ones only
observed, finished, failed, timed out, interrupted or pruned, with curves whose steps start at
0 or 1 or leave gaps.

Every check takes ``(pruner, space=None, *, runs=None, seed=0)``: the pruner (deep-copied,
the original is not used) or its factory (a class or a function of no arguments, called for
each pruner the check needs, as the engine builds one per rank), the search space the configurations are drawn from (default: the
pruner's ``.space`` or a small mixed space), the number of evaluations of the script
(``None``: :data:`RUNS`) and its seed. It returns ``None`` or raises ``AssertionError`` whose
message starts with its name. :func:`check_pruner` runs them all (:func:`pruner_checks`),
skipping those given in ``expected_failures``.
"""

from __future__ import annotations

import copy
import pickle
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from propulate.contracts.island import call, changed_field, frozen_copy, snapshot
from propulate.contracts.runner import contract, require, run_checks
from propulate.population import Individual
from propulate.runs.status import FAILED, INTERRUPTED, OK, PRUNED, TIMEOUT
from propulate.space import Categorical, Float, Integer, SearchSpace

#: Evaluations in the script unless a check is told otherwise.
RUNS = 24
#: The configurations' space when neither the check nor the pruner gives one.
DEFAULT_SPACE = SearchSpace(
    {"x": Float(-1.0, 1.0), "n": Integer(1, 8), "act": Categorical(("relu", "tanh"))}
)

__all__ = [
    "RUNS",
    "check_pruner",
    "check_pruner_copies_independent",
    "check_pruner_deterministic",
    "check_pruner_does_not_modify_curve",
    "check_pruner_no_early_stop",
    "check_pruner_observe_accepts_any_outcome",
    "check_pruner_observe_does_not_modify",
    "check_pruner_observes_flag",
    "check_pruner_pickle",
    "check_pruner_should_stop_returns_bool",
    "check_pruner_start_resets",
    "pruner_checks",
    "script",
]


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


def _space(pruner: Any, space: SearchSpace | None) -> SearchSpace:
    if space is not None:
        return space
    own = getattr(fresh(pruner), "space", None)
    return own if isinstance(own, SearchSpace) else DEFAULT_SPACE


def _script(
    pruner: Any, space: SearchSpace | None, runs: int | None, seed: int
) -> list[Evaluation]:
    return script(_space(pruner, space), RUNS if runs is None else runs, seed)


def _play(pruner: Any, evaluations: Sequence[Evaluation], **options: Any) -> Player:
    return Player(fresh(pruner), **options).play(evaluations)


def _same(a: Player, b: Player, what: str) -> None:
    for x, y in zip(a.decisions, b.decisions, strict=False):
        require(
            x == y,
            f"{what}: evaluation {x[0]} at step {x[1]}: should_stop said {x[2]!r} and {y[2]!r}",
        )
    require(
        len(a.decisions) == len(b.decisions),
        f"{what}: {len(a.decisions)} and {len(b.decisions)} decisions",
    )


# ---------------------------------------------------------------------- the checks
@contract
def check_pruner_should_stop_returns_bool(
    pruner: Any, space: SearchSpace | None = None, *, runs: int | None = None, seed: int = 0
) -> None:
    """``should_stop`` returns a plain ``bool`` (not ``None``, ``0``, ``numpy.bool_``)."""
    player = _play(pruner, _script(pruner, space, runs, seed))
    for index, step, stop in player.decisions:
        require(
            type(stop) is bool,
            f"should_stop must return a bool, got {stop!r} ({type(stop).__name__}) on "
            f"evaluation {index} at step {step}",
        )


@contract
def check_pruner_does_not_modify_curve(
    pruner: Any, space: SearchSpace | None = None, *, runs: int | None = None, seed: int = 0
) -> None:
    """``should_stop`` leaves the curve it is given as it was (no value added, removed,
    reordered or changed)."""
    _play(pruner, _script(pruner, space, runs, seed), watch_curve=True)


@contract
def check_pruner_observe_accepts_any_outcome(
    pruner: Any, space: SearchSpace | None = None, *, runs: int | None = None, seed: int = 0
) -> None:
    """``observe`` accepts finished, failed, timed-out, interrupted and pruned individuals of
    any rank, with a curve, an empty one or none, without raising."""
    evaluations = _script(pruner, space, runs, seed)
    player = Player(fresh(pruner), observe_always=True, observe_errors=True).play(evaluations)
    odd = Evaluation(evaluations[0].params, 2, [], FAILED)
    player.tell(finished(odd, len(evaluations), [], FAILED))  # no curve at all


@contract
def check_pruner_observe_does_not_modify(
    pruner: Any, space: SearchSpace | None = None, *, runs: int | None = None, seed: int = 0
) -> None:
    """``observe`` changes nothing of the individual it is given (parameters, curve, loss,
    status, ...)."""
    _play(pruner, _script(pruner, space, runs, seed), watch_observe=True, observe_always=True)


@contract
def check_pruner_observes_flag(
    pruner: Any, space: SearchSpace | None = None, *, runs: int | None = None, seed: int = 0
) -> None:
    """``observes`` is a bool, and when it is false ``observe`` changes no decision (the
    engine skips the call then, so such a pruner would never learn)."""
    flag = call("reading .observes", getattr, fresh(pruner), "observes", False)
    require(type(flag) is bool, f"observes must be a bool, got {flag!r}")
    if flag:
        return
    evaluations = _script(pruner, space, runs, seed)
    skipped, again = _play(pruner, evaluations), _play(pruner, evaluations)
    if skipped.decisions != again.decisions:
        return  # it decides differently anyway: check_pruner_deterministic says so
    _same(
        _play(pruner, evaluations, observe_always=True),
        skipped,
        "observes is False, but observe() changes its decisions (the engine skips observe() "
        "when observes is False; make observes true)",
    )


@contract
def check_pruner_deterministic(
    pruner: Any, space: SearchSpace | None = None, *, runs: int | None = None, seed: int = 0
) -> None:
    """Two copies given the same evaluations decide alike (no global randomness, no clock)."""
    evaluations = _script(pruner, space, runs, seed)
    _same(
        _play(pruner, evaluations),
        _play(pruner, evaluations),
        "two copies given the same evaluations decided differently",
    )


@contract
def check_pruner_copies_independent(
    pruner: Any, space: SearchSpace | None = None, *, runs: int | None = None, seed: int = 0
) -> None:
    """A pruner is built per rank: what one copy learns does not change another's decisions
    (no state shared through the class or the module)."""
    evaluations = _script(pruner, space, runs, seed)
    alone = _play(pruner, evaluations)
    Player(fresh(pruner)).play(
        script(_space(pruner, space), RUNS if runs is None else runs, seed + 1)
    )
    _same(
        alone,
        _play(pruner, evaluations),
        "a copy decided differently after another copy had learned other evaluations",
    )


@contract
def check_pruner_pickle(
    pruner: Any, space: SearchSpace | None = None, *, runs: int | None = None, seed: int = 0
) -> None:
    """A pruner survives ``copy.deepcopy`` and ``pickle``, fresh and halfway through a run:
    the copy decides as the original does from there on."""
    evaluations = _script(pruner, space, runs, seed)
    half = len(evaluations) // 2
    for how, clone in (
        ("pickle", lambda p: pickle.loads(pickle.dumps(p))),
        ("copy.deepcopy", copy.deepcopy),
    ):
        original = Player(fresh(pruner)).play(evaluations[:half])
        twin = Player(call(f"{how} of a pruner halfway", clone, original.pruner))
        original.play(evaluations[half:], offset=half)
        twin.play(evaluations[half:], offset=half)
        tail = [d for d in original.decisions if d[0] >= half]
        original.decisions = tail
        _same(original, twin, f"a {how} copy made halfway decided differently from there on")
        new = Player(call(f"{how} of a new pruner", clone, fresh(pruner))).play(evaluations)
        _same(_play(pruner, evaluations), new, f"a {how} copy decided differently")


@contract
def check_pruner_start_resets(
    pruner: Any, space: SearchSpace | None = None, *, runs: int | None = None, seed: int = 0
) -> None:
    """``start`` begins a new evaluation: the decisions on it depend on its own values and the
    evaluations observed, not on the evaluation run before it."""
    evaluations = _script(pruner, space, runs, seed)
    half = len(evaluations) // 2
    # what came before, learned from records only: no evaluation of its own ran before
    known = [Evaluation(e.params, e.rank or 1, e.curve, e.status) for e in evaluations[:half]]
    candidates = [e for e in evaluations[half:] if e.rank == 0 and len(e.curve) > 2]
    require(candidates, "the script has no evaluation of this rank to check (give more runs)")
    target = candidates[0]
    for e in candidates:  # one it stops, if any: a change of mind shows best there
        probe = Player(fresh(pruner)).play(known)
        probe.run_own(half, e)
        if any(stop for *_, stop in probe.decisions):
            target = e
            break
    worse = Evaluation(target.params, 0, [[s, v + 5.0] for s, v in target.curve], OK)
    better = Evaluation(target.params, 0, [[s, v - 5.0] for s, v in target.curve], OK)
    plain = Player(fresh(pruner)).play(known)
    plain.run_own(half, target)
    for before in (worse, better):
        after = Player(fresh(pruner)).play(known)
        after.run_own(half + 1, before)  # ran, its record lost (not observed)
        mark = len(after.decisions)
        after.run_own(half, target)
        after.decisions = after.decisions[mark:]
        _same(
            plain,
            after,
            "the decisions on an evaluation changed with the evaluation run before it "
            "(start() must reset what belongs to one evaluation)",
        )


@contract
def check_pruner_no_early_stop(
    pruner: Any, space: SearchSpace | None = None, *, runs: int | None = None, seed: int = 0
) -> None:
    """With no evaluation observed, it never stops an evaluation at its first value (step 0),
    whatever the value: there is nothing to compare with yet."""
    params = _space(pruner, space).decode([0.5] * _space(pruner, space).dim)
    for value in (1e9, 1.0, 0.0, -1e9):
        new = fresh(pruner)
        call("start()", new.start, Individual(dict(params)))
        stop = call("should_stop at step 0", new.should_stop, [[0, value]])
        require(
            not stop,
            f"it stopped an evaluation at step 0 (value {value}) before any evaluation was "
            "observed; list check_pruner_no_early_stop in expected_failures if that is the "
            "documented rule",
        )


# ---------------------------------------------------------------------- all of them
_CHECKS = (
    check_pruner_no_early_stop,
    check_pruner_should_stop_returns_bool,
    check_pruner_does_not_modify_curve,
    check_pruner_observe_accepts_any_outcome,
    check_pruner_observe_does_not_modify,
    check_pruner_deterministic,
    check_pruner_observes_flag,
    check_pruner_copies_independent,
    check_pruner_pickle,
    check_pruner_start_resets,
)


def pruner_checks() -> Iterator[Callable[..., None]]:
    """Every pruner check, in the order :func:`check_pruner` runs them."""
    yield from _CHECKS


def check_pruner(
    pruner: Any,
    space: SearchSpace | None = None,
    *,
    runs: int | None = None,
    seed: int = 0,
    expected_failures: Mapping[str, str] | None = None,
) -> None:
    """Check that ``pruner`` keeps the contracts of a pruner; ``AssertionError`` naming the
    first broken one if not.

    The checks (:func:`pruner_checks`, documented in ``docs/contracts.md``): no stop at the
    first value before anything was observed; ``should_stop`` returns a bool and leaves the
    curve alone; ``observe`` accepts every outcome of any rank and modifies nothing;
    ``observes`` is true when it learns; copies decide alike and independently; it survives
    ``pickle`` and ``copy.deepcopy``; ``start`` resets the per-evaluation state.

    Parameters
    ----------
    pruner : Pruner or callable
        The pruner, freshly built (it is deep-copied, the original is not used), or its
        factory (a class or a function of no arguments), which builds one per use: a pruner
        is built once per rank, and one that cannot be deep-copied is checked this way.
    space : SearchSpace, optional
        The space of the configurations (default: the pruner's ``.space``, or a small one).
    runs : int, optional
        Evaluations in the script (default :data:`RUNS`).
    seed : int
        Seed of the script.
    expected_failures : mapping of str to str, optional
        Check name to the reason it is known to fail; those checks are skipped.
    """
    run_checks(_CHECKS, pruner, expected_failures, space=space, runs=runs, seed=seed)
