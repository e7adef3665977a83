"""The contracts of a pruner, one named check each.

A pruner (:class:`~propulate.pruners.base.Pruner`) is built once per rank and serves one
evaluation at a time: :meth:`start`, then :meth:`should_stop` after each reported value, and
:meth:`observe` for every finished evaluation the worker learns about, its own and the other
ranks' (module :mod:`propulate.pruners.base`). The checks play a fixed script of such
evaluations (:func:`propulate.contracts.script.script`): this rank's own ones through ``start`` and ``should_stop`` (cut
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
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from propulate.contracts.island import call
from propulate.contracts.runner import contract, require, run_checks
from propulate.contracts.script import (
    RUNS,
    Evaluation,
    Player,
    finished,
    fresh,
    play,
    pruner_space,
    same_decisions,
    script,
    script_of,
)
from propulate.population import Individual
from propulate.runs.status import FAILED, OK
from propulate.space import SearchSpace

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


# ---------------------------------------------------------------------- the checks
@contract
def check_pruner_should_stop_returns_bool(
    pruner: Any, space: SearchSpace | None = None, *, runs: int | None = None, seed: int = 0
) -> None:
    """``should_stop`` returns a plain ``bool`` (not ``None``, ``0``, ``numpy.bool_``)."""
    player = play(pruner, script_of(pruner, space, runs, seed))
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
    play(pruner, script_of(pruner, space, runs, seed), watch_curve=True)


@contract
def check_pruner_observe_accepts_any_outcome(
    pruner: Any, space: SearchSpace | None = None, *, runs: int | None = None, seed: int = 0
) -> None:
    """``observe`` accepts finished, failed, timed-out, interrupted and pruned individuals of
    any rank, with a curve, an empty one or none, without raising."""
    evaluations = script_of(pruner, space, runs, seed)
    player = Player(fresh(pruner), observe_always=True, observe_errors=True).play(evaluations)
    odd = Evaluation(evaluations[0].params, 2, [], FAILED)
    player.tell(finished(odd, len(evaluations), [], FAILED))  # no curve at all


@contract
def check_pruner_observe_does_not_modify(
    pruner: Any, space: SearchSpace | None = None, *, runs: int | None = None, seed: int = 0
) -> None:
    """``observe`` changes nothing of the individual it is given (parameters, curve, loss,
    status, ...)."""
    play(pruner, script_of(pruner, space, runs, seed), watch_observe=True, observe_always=True)


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
    evaluations = script_of(pruner, space, runs, seed)
    skipped, again = play(pruner, evaluations), play(pruner, evaluations)
    if skipped.decisions != again.decisions:
        return  # it decides differently anyway: check_pruner_deterministic says so
    same_decisions(
        play(pruner, evaluations, observe_always=True),
        skipped,
        "observes is False, but observe() changes its decisions (the engine skips observe() "
        "when observes is False; make observes true)",
    )


@contract
def check_pruner_deterministic(
    pruner: Any, space: SearchSpace | None = None, *, runs: int | None = None, seed: int = 0
) -> None:
    """Two copies given the same evaluations decide alike (no global randomness, no clock)."""
    evaluations = script_of(pruner, space, runs, seed)
    same_decisions(
        play(pruner, evaluations),
        play(pruner, evaluations),
        "two copies given the same evaluations decided differently",
    )


@contract
def check_pruner_copies_independent(
    pruner: Any, space: SearchSpace | None = None, *, runs: int | None = None, seed: int = 0
) -> None:
    """A pruner is built per rank: what one copy learns does not change another's decisions
    (no state shared through the class or the module)."""
    evaluations = script_of(pruner, space, runs, seed)
    alone = play(pruner, evaluations)
    Player(fresh(pruner)).play(
        script(pruner_space(pruner, space), RUNS if runs is None else runs, seed + 1)
    )
    same_decisions(
        alone,
        play(pruner, evaluations),
        "a copy decided differently after another copy had learned other evaluations",
    )


@contract
def check_pruner_pickle(
    pruner: Any, space: SearchSpace | None = None, *, runs: int | None = None, seed: int = 0
) -> None:
    """A pruner survives ``copy.deepcopy`` and ``pickle``, fresh and halfway through a run:
    the copy decides as the original does from there on."""
    evaluations = script_of(pruner, space, runs, seed)
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
        same_decisions(
            original, twin, f"a {how} copy made halfway decided differently from there on"
        )
        new = Player(call(f"{how} of a new pruner", clone, fresh(pruner))).play(evaluations)
        same_decisions(play(pruner, evaluations), new, f"a {how} copy decided differently")


@contract
def check_pruner_start_resets(
    pruner: Any, space: SearchSpace | None = None, *, runs: int | None = None, seed: int = 0
) -> None:
    """``start`` begins a new evaluation: the decisions on it depend on its own values and the
    evaluations observed, not on the evaluation run before it."""
    evaluations = script_of(pruner, space, runs, seed)
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
        same_decisions(
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
    params = pruner_space(pruner, space).decode([0.5] * pruner_space(pruner, space).dim)
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
