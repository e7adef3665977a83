"""The contracts of a propagator, one named check each.

Every check takes ``(propagator, space=None, *, steps=None, seed=0)``: the propagator (it is
deep-copied, the original is not used), its search space when it does not declare one,
how many children to breed (``None``: the check's own default, :data:`~propulate.contracts.
island.STEPS`, or :data:`LONG_STEPS` for :func:`check_stays_in_space`; a slow propagator may be
given fewer) and the seed of the check's own draws. It returns ``None`` or raises
``AssertionError`` whose message starts with its name, e.g. ``"check_integer_types: offspring
parameter n=3.0 is a float, Integer parameters must be int"``. The checks drive the propagator
as a worker of the engine does (:class:`~propulate.contracts.island.Island`).

The empty island. The engine breeds from an empty island at the start of every run (the first
call of :class:`~propulate.engine.seen.Breeder` gets the island's empty view, unless initial
configurations were given), and again whenever migration took every individual away; so a
propagator must cope with an empty island and return a valid child then (e.g. a random one).
:func:`check_empty_island` says so when breeding from an empty island raises or returns
nothing; the checks of the children (their parameters, bounds, types, state) breed from an
empty island first too, then from an island seeded with one individual of another rank, and
skip a crash on the empty island, so a propagator that breaks only this contract fails only
this check.

:func:`check_propagator` runs every check (:func:`propagator_checks`), skipping those given in
``expected_failures``.
"""

from __future__ import annotations

import copy
import json
import math
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from propulate.contracts.island import STEPS, Island, as_children, call, describe
from propulate.contracts.runner import contract, require, run_checks
from propulate.engine.wire import from_record, from_wire, to_wire
from propulate.population import Individual
from propulate.runs.log import EvaluationLog, iter_records
from propulate.runs.outcome import Outcome
from propulate.runs.status import OK
from propulate.space import Categorical, Float, Integer, SearchSpace

#: Children :func:`check_stays_in_space` breeds unless told otherwise: a propagator that
#: leaves the space only once its model or its step size has grown must be run that long.
LONG_STEPS = 150

__all__ = [
    "LONG_STEPS",
    "check_accepts_plain_list",
    "check_conditional_consistency",
    "check_declares_space",
    "check_deterministic",
    "check_does_not_modify_inputs",
    "check_empty_island",
    "check_integer_types",
    "check_observe_accepts_any_outcome",
    "check_observe_does_not_modify",
    "check_observes_flag",
    "check_offspring_fresh",
    "check_parameter_names",
    "check_propagator",
    "check_resume",
    "check_returns_individuals",
    "check_state_json_ready",
    "check_state_on_wire_and_records",
    "check_stays_in_space",
    "propagator_checks",
]


# ---------------------------------------------------------------------- helpers
def _space(propagator: Any, space: SearchSpace | None) -> SearchSpace:
    resolved = (
        space if space is not None else call("reading .space", getattr, propagator, "space", None)
    )
    require(
        isinstance(resolved, SearchSpace),
        "the propagator must declare its search space (attribute .space), or pass space=",
    )
    return resolved  # type: ignore[return-value]


def _island(propagator: Any, space: SearchSpace, seed: int, **options: Any) -> Island:
    return Island(
        space, call("copy.deepcopy of the propagator", copy.deepcopy, propagator), seed, **options
    )


def _children(island: Island) -> list[Individual]:
    """Every child the island's propagator returned, as the engine took them."""
    return [child for _, out in island.outputs for child in as_children(out)]


def _names(space: SearchSpace, child: Mapping[str, Any]) -> None:
    if space.conditions:
        unknown = sorted(set(child) - set(space.names))
        require(not unknown, f"offspring sets parameters the space does not have: {unknown}")
    else:
        require(
            set(child) == set(space.names),
            f"offspring must set exactly the space's parameters {sorted(space.names)}, "
            f"got {sorted(child)}",
        )


def _inside(space: SearchSpace, child: Mapping[str, Any]) -> None:
    for name, value in child.items():
        dim = space.dimensions.get(name)
        if dim is None:
            continue  # check_parameter_names says so
        require(
            dim.contains(value)
            and (not isinstance(value, float | np.floating) or math.isfinite(value)),
            f"offspring parameter {name}={value!r} is outside its dimension {dim!r}",
        )


def _types(space: SearchSpace, child: Mapping[str, Any]) -> None:
    for name, value in child.items():
        dim = space.dimensions.get(name)
        kind = type(value).__name__
        if isinstance(dim, Integer):
            require(
                type(value) is int,
                f"offspring parameter {name}={value!r} is a {kind}, Integer parameters must be int",
            )
        elif isinstance(dim, Float):
            require(
                type(value) is float,
                f"offspring parameter {name}={value!r} is a {kind}, Float parameters must be float",
            )
        elif isinstance(dim, Categorical):
            require(
                type(value) is str and value in dim.choices,
                f"offspring parameter {name}={value!r} is a {kind}, Categorical parameters "
                f"must be one of their choices {list(dim.choices)}",
            )


def _consistent(space: SearchSpace, child: Mapping[str, Any]) -> None:
    """Fail naming what a child of a conditional space misses or holds against its conditions
    (the engine would complete it at random)."""
    if not space.conditions or space.in_bounds(child):
        return
    whole = space.complete(child, lambda _, d: d.decode(0.0))
    missing, extra = sorted(set(whole) - set(child)), sorted(set(child) - set(whole))
    raise AssertionError(
        "offspring must be condition-consistent (every active parameter set, no inactive one): "
        f"missing {missing}, inactive {extra} (SearchSpace.complete repairs a child)"
    )


def _valid(space: SearchSpace, child: Mapping[str, Any]) -> None:
    """Everything the engine needs of a child: its parameters, inside the space, typed,
    condition-consistent."""
    _names(space, child)
    _inside(space, child)
    _types(space, child)
    _consistent(space, child)


def _state_ready(child: Individual) -> None:
    state = child.state
    if state is None:
        return
    require(isinstance(state, dict), f"Individual.state must be a dict (or None), got {state!r}")
    try:
        text = json.dumps(state, allow_nan=False)
    except (TypeError, ValueError) as err:
        raise AssertionError(f"Individual.state must be JSON-ready: {err}") from None
    require(
        json.loads(text) == state,
        f"Individual.state must survive a JSON round trip unchanged: {state!r} comes back as "
        f"{json.loads(text)!r}",
    )


def _inspecting(check: Callable[[Individual], None]) -> Callable[[list[Individual], Any], None]:
    def inspect(view: list[Individual], out: Any) -> None:
        for child in as_children(out):
            check(child)

    return inspect


def _drive(
    propagator: Any,
    space: SearchSpace | None,
    steps: int | None,
    seed: int,
    each: Callable[[Individual], None] | None = None,
    **options: Any,
) -> Island:
    """Run a copy of the propagator on an island; ``each`` sees every child as it is bred."""
    space = _space(propagator, space)
    island = _island(propagator, space, seed, **options)
    if each is not None:
        island.inspect = _inspecting(each)
    _from_empty(island)
    island.run(STEPS if steps is None else steps)
    return island


def _from_empty(island: Island) -> None:
    """Breed once from the empty island, as the engine does first, unless that raises (which
    :func:`check_empty_island` reports); the child is inspected, not evaluated (as a child the
    breeder discards)."""
    try:
        out = island.propagator(island.population.active(0))
    except Exception:  # noqa: BLE001 - check_empty_island reports it
        return
    island.outputs.append((0, out))
    if island.inspect is not None:
        island.inspect([], out)


# ---------------------------------------------------------------------- the checks
@contract
def check_declares_space(
    propagator: Any, space: SearchSpace | None = None, *, steps: int | None = None, seed: int = 0
) -> None:
    """The propagator declares its search space (``.space``), or one is given."""
    _space(propagator, space)


@contract
def check_empty_island(
    propagator: Any, space: SearchSpace | None = None, *, steps: int | None = None, seed: int = 0
) -> None:
    """Bred from an empty island (the island's empty view, and a plain empty list) before
    anything was evaluated and again after a short run, it returns a child instead of
    raising: the engine breeds from an empty island at the start of every run. (That the
    child is valid is what the other checks check; they breed from an empty island too.)"""
    space = _space(propagator, space)
    hint = (
        "; the engine breeds from an empty island at the start of every run (and when "
        "migration took every individual away): a propagator must return a valid child then "
        "(e.g. a random one)"
    )
    island = _island(propagator, space, seed)

    def breed(when: str, view: Sequence[Individual]) -> None:
        try:
            out = call("breeding from an island of 0 individuals", island.propagator, view)
        except AssertionError as err:
            raise AssertionError(f"{when}: {err}{hint}") from err
        require(
            out is not None and not (isinstance(out, list) and not out),
            f"{when}: breeding from an island of 0 individuals returned {out!r}{hint}",
        )

    breed("before anything was evaluated", island.population.active(0))
    breed("from a plain empty list", [])
    try:
        island.run(max((STEPS if steps is None else steps) // 4, 5))
    except AssertionError:
        pass  # what goes wrong on a growing island is for the other checks to say
    breed(f"after {island.count} evaluations", [])


@contract
def check_returns_individuals(
    propagator: Any, space: SearchSpace | None = None, *, steps: int | None = None, seed: int = 0
) -> None:
    """It returns an :class:`~propulate.population.Individual` or a non-empty list of them
    (not a dict, a tuple or ``None``)."""
    island = _drive(propagator, space, steps, seed)
    for size, out in island.outputs:
        items = out if isinstance(out, list) else [out]
        require(items, f"bred from {size} individuals it returned an empty list")
        for item in items:
            require(
                isinstance(item, Individual),
                f"a propagator must return Individual(s), got {type(item).__name__} "
                f"(bred from {size} individuals)",
            )


@contract
def check_offspring_fresh(
    propagator: Any, space: SearchSpace | None = None, *, steps: int | None = None, seed: int = 0
) -> None:
    """Each child is a fresh individual: no uid, no loss, not one of its parents or of the
    island's individuals, and its ``state`` is its own (not a parent's object)."""
    space = _space(propagator, space)
    island = _island(propagator, space, seed)

    def inspect(view: list[Individual], out: Any) -> None:
        members = {id(i) for i in island.population} | {id(i) for i in view}
        states = {id(i.state) for i in view if i.state is not None}
        for child in out if isinstance(out, list) else [out]:
            if not isinstance(child, Individual):
                continue  # check_returns_individuals says so
            require(
                id(child) not in members and child.uid is None,
                "offspring must be fresh individuals (uid None), not population members: "
                f"got {describe(child)}",
            )
            require(
                child.loss is None,
                f"offspring must be fresh individuals, not evaluated: loss {child.loss!r}",
            )
            require(
                child.state is None or id(child.state) not in states,
                "offspring must have their own state, not a parent's state object",
            )

    island.inspect = inspect
    _from_empty(island)
    island.run(STEPS if steps is None else steps)


@contract
def check_parameter_names(
    propagator: Any, space: SearchSpace | None = None, *, steps: int | None = None, seed: int = 0
) -> None:
    """Each child sets exactly the space's parameters (in a conditional space: none it does
    not have)."""
    space = _space(propagator, space)
    _drive(propagator, space, steps, seed, lambda c: _names(space, c))


@contract
def check_stays_in_space(
    propagator: Any, space: SearchSpace | None = None, *, steps: int | None = None, seed: int = 0
) -> None:
    """Every parameter of every child lies within its dimension (finite), over a long run
    (:data:`LONG_STEPS` children by default)."""
    space = _space(propagator, space)
    _drive(
        propagator, space, LONG_STEPS if steps is None else steps, seed, lambda c: _inside(space, c)
    )


@contract
def check_integer_types(
    propagator: Any, space: SearchSpace | None = None, *, steps: int | None = None, seed: int = 0
) -> None:
    """Integer parameters are Python ``int`` (not ``3.0``, not ``np.int64``, not ``bool``),
    Float parameters Python ``float``, categorical ones one of their choices."""
    space = _space(propagator, space)
    _drive(propagator, space, steps, seed, lambda c: _types(space, c))


@contract
def check_conditional_consistency(
    propagator: Any, space: SearchSpace | None = None, *, steps: int | None = None, seed: int = 0
) -> None:
    """In a conditional space each child is condition-consistent: every active parameter set
    and no inactive one (nothing to check in a space without conditions)."""
    space = _space(propagator, space)
    if space.conditions:
        _drive(propagator, space, steps, seed, lambda c: _consistent(space, c))


@contract
def check_does_not_modify_inputs(
    propagator: Any, space: SearchSpace | None = None, *, steps: int | None = None, seed: int = 0
) -> None:
    """Breeding changes no individual of the island, parents or not (parameters, loss, status,
    uid, state, active, curve, generation, rank, island, objectives, error, times, ...), and
    not the list it is given."""
    space = _space(propagator, space)
    island = _island(propagator, space, seed, watch="breed")
    island.run(STEPS if steps is None else steps)
    shuffled = list(island.population.active(0))
    island.rng.shuffle(shuffled)
    island.breed(shuffled)
    island.breed(shuffled + [i for i in island.population if i.failed])


@contract
def check_accepts_plain_list(
    propagator: Any, space: SearchSpace | None = None, *, steps: int | None = None, seed: int = 0
) -> None:
    """Given a plain list in random order (as a third-party caller passes it) instead of the
    island's ordered view, it returns valid children."""
    space = _space(propagator, space)
    island = _island(propagator, space, seed)
    island.run(STEPS if steps is None else steps)
    shuffled = list(island.population.active(0))
    for _ in range(3):
        island.rng.shuffle(shuffled)
        for child in island.breed(list(shuffled)):
            _valid(space, child)


@contract
def check_observe_accepts_any_outcome(
    propagator: Any, space: SearchSpace | None = None, *, steps: int | None = None, seed: int = 0
) -> None:
    """:meth:`observe` accepts evaluated, failed, timed-out and pruned individuals, its own
    and other ranks' (some carrying another method's state), without raising."""
    _drive(propagator, space, steps, seed, observe_errors=True)


@contract
def check_observe_does_not_modify(
    propagator: Any, space: SearchSpace | None = None, *, steps: int | None = None, seed: int = 0
) -> None:
    """:meth:`observe` changes no individual: neither the one observed nor any other."""
    _drive(propagator, space, steps, seed, watch="observe")


@contract
def check_observes_flag(
    propagator: Any, space: SearchSpace | None = None, *, steps: int | None = None, seed: int = 0
) -> None:
    """``observes`` is a bool, and when it is false :meth:`observe` changes nothing it breeds
    (the engine skips the call then, so such a propagator would never learn)."""
    flag = call("reading .observes", getattr, propagator, "observes", False)
    require(type(flag) is bool, f"observes must be a bool, got {flag!r}")
    if flag:
        return
    skipped = _drive(propagator, space, steps, seed)
    again = _drive(propagator, space, steps, seed)
    if [dict(c) for c in skipped.own] != [dict(c) for c in again.own]:
        return  # it breeds differently anyway: check_deterministic says so
    told = _drive(propagator, space, steps, seed, observe_always=True)
    for i, (a, b) in enumerate(zip(told.own, skipped.own, strict=True)):
        require(
            dict(a) == dict(b),
            f"observes is False, but observe() changes what it breeds (child {i}: "
            f"{dict(a)} with the calls, {dict(b)} without): the engine skips observe() when "
            "observes is False; make observes true",
        )


@contract
def check_state_json_ready(
    propagator: Any, space: SearchSpace | None = None, *, steps: int | None = None, seed: int = 0
) -> None:
    """``Individual.state`` of each child is ``None`` or a dict that JSON encodes (no NaN,
    no sets, no numpy values) and decodes to itself (string keys, lists not tuples)."""
    _drive(propagator, space, steps, seed, _state_ready)


def _records(island: Island, folder: str) -> list[Individual]:
    """Write the island's evaluations as the engine records them (one log per rank) and read
    them back as a resume does."""
    logs: dict[int, EvaluationLog] = {}
    try:
        for ind in island.evaluated:
            log = logs.get(ind.rank)
            if log is None:
                log = logs[ind.rank] = EvaluationLog(folder, ind.rank, session="check")
            out = Outcome(ind.loss if ind.status == OK else None, ind.status)
            out.curve = ind.curve or []
            log.record(ind, out, generation=ind.generation, state=ind.state)
    finally:
        for log in logs.values():
            log.close()
    return [from_record(rec, 1) for rec in iter_records(folder)]


@contract
def check_state_on_wire_and_records(
    propagator: Any, space: SearchSpace | None = None, *, steps: int | None = None, seed: int = 0
) -> None:
    """Each child crosses the wire (pickled, as between workers) with its parameters and
    state, and its state is restored from the evaluation records."""
    import pickle

    island = _drive(propagator, space, steps, seed)
    for ind in island.own:
        wired = from_wire(pickle.loads(pickle.dumps(to_wire(ind))))
        require(
            wired.state == ind.state and dict(wired) == dict(ind),
            "an individual must cross the wire unchanged (state included): "
            f"{dict(ind)} {ind.state!r} arrived as {dict(wired)} {wired.state!r}",
        )
    with tempfile.TemporaryDirectory() as folder:
        restored = {r.generation: r for r in _records(island, folder)}
    for ind in island.evaluated:
        back = restored.get(ind.generation)
        require(back is not None, f"{describe(ind)} is missing from the records")
        expected = json.loads(json.dumps(ind.state))
        require(
            back.state == expected,  # type: ignore[union-attr]
            f"Individual.state must be restored from the records: {expected!r} came back as "
            f"{back.state!r}",  # type: ignore[union-attr]
        )


@contract
def check_deterministic(
    propagator: Any, space: SearchSpace | None = None, *, steps: int | None = None, seed: int = 0
) -> None:
    """Two copies fed the same individuals breed the same children with the same state: all
    randomness comes from the rng it was built with (none global, none from the clock)."""
    first = _drive(propagator, space, steps, seed)
    second = _drive(propagator, space, steps, seed)
    for i, (a, b) in enumerate(zip(first.own, second.own, strict=True)):
        require(
            dict(a) == dict(b) and repr(a.state) == repr(b.state),
            "two copies of the propagator fed the same individuals bred different children "
            f"(child {i}: {dict(a)} and {dict(b)}): use only the rng given at construction",
        )


@contract
def check_resume(
    propagator: Any, space: SearchSpace | None = None, *, steps: int | None = None, seed: int = 0
) -> None:
    """A fresh copy that is told the run from its records (as a resumed worker: bound, then
    :meth:`observe` on every record in order) breeds valid children, with the state the
    records restored as its only memory of the run."""
    space = _space(propagator, space)
    island = _drive(propagator, space, steps, seed)
    with tempfile.TemporaryDirectory() as folder:
        restored = _records(island, folder)
    resumed = _island(propagator, space, seed + 1, observe_errors=True)
    resumed.count = len(restored)
    for ind in restored:
        resumed.population.add(ind)
        resumed.evaluated.append(ind)
        try:
            resumed.tell(ind)
        except AssertionError as err:
            raise AssertionError(f"while resuming from the records: {err}") from err
    resumed.inspect = _inspecting(lambda c: _valid(space, c))
    try:
        resumed.run(max((STEPS if steps is None else steps) // 4, 5), initial=0)
    except AssertionError as err:
        raise AssertionError(f"after resuming from the records: {err}") from err


# ---------------------------------------------------------------------- all of them
_CHECKS = (
    check_declares_space,
    check_empty_island,
    check_returns_individuals,
    check_offspring_fresh,
    check_parameter_names,
    check_stays_in_space,
    check_integer_types,
    check_conditional_consistency,
    check_state_json_ready,
    check_does_not_modify_inputs,
    check_accepts_plain_list,
    check_observe_accepts_any_outcome,
    check_observe_does_not_modify,
    check_deterministic,
    check_observes_flag,
    check_state_on_wire_and_records,
    check_resume,
)


def propagator_checks() -> Iterator[Callable[..., None]]:
    """Every propagator check, in the order :func:`check_propagator` runs them (to
    parametrize a test per check)."""
    yield from _CHECKS


def check_propagator(
    propagator: Any,
    space: SearchSpace | None = None,
    *,
    steps: int | None = None,
    seed: int = 0,
    expected_failures: Mapping[str, str] | None = None,
) -> None:
    """Check that ``propagator`` keeps every contract of the engine; ``AssertionError``
    naming the first broken one if not.

    The checks (:func:`propagator_checks`, one function each, documented in
    ``docs/contracts.md``): it declares a search space; copes with an empty island; returns
    fresh :class:`~propulate.population.Individual` s that set exactly the space's
    parameters, inside their dimensions over a long run, with ``int`` for integer and
    ``float`` for float parameters, condition-consistent in a conditional space; modifies no
    individual it is given, in breeding or in :meth:`observe`; accepts a plain list, and
    failed, pruned and other ranks' individuals in :meth:`observe`; two copies breed alike;
    ``observes`` is true when it learns; its ``Individual.state`` is JSON-ready and survives
    the wire and the records; a copy resumed from the records breeds valid children.

    Parameters
    ----------
    propagator : Propagator
        The propagator, freshly built (it is copied; the original is not used).
    space : SearchSpace, optional
        Its search space, when it does not declare one (:attr:`Propagator.space`).
    steps : int, optional
        Children bred per check (``None``: each check's default, 60, or 150 for
        :func:`check_stays_in_space`); fewer for a slow propagator.
    seed : int
        Seed of the checks' own draws.
    expected_failures : mapping of str to str, optional
        Check name to the reason it is known to fail; those checks are skipped.
    """
    run_checks(_CHECKS, propagator, expected_failures, space=space, steps=steps, seed=seed)
