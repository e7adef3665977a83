"""The propagator checks of what it learns and keeps: :meth:`observe` (any outcome, nothing
modified, ``observes`` true when it learns), the same children from the same inputs, its
``Individual.state`` on the wire and in the records, and a resume from the records. The
arguments are those of every propagator check (:mod:`propulate.contracts.propagator`)."""

from __future__ import annotations

import json
import pickle
import tempfile
from typing import Any

from propulate.contracts.drive import drive, inspecting, new_island, records_of, resolve_space
from propulate.contracts.island import STEPS, call, describe
from propulate.contracts.offspring import require_valid
from propulate.contracts.runner import contract, require
from propulate.engine.wire import from_wire, to_wire
from propulate.space import SearchSpace


@contract
def check_observe_accepts_any_outcome(
    propagator: Any, space: SearchSpace | None = None, *, steps: int | None = None, seed: int = 0
) -> None:
    """:meth:`observe` accepts evaluated, failed, timed-out and pruned individuals, its own
    and other ranks' (some carrying another method's state), without raising."""
    drive(propagator, space, steps, seed, observe_errors=True)


@contract
def check_observe_does_not_modify(
    propagator: Any, space: SearchSpace | None = None, *, steps: int | None = None, seed: int = 0
) -> None:
    """:meth:`observe` changes no individual: neither the one observed nor any other."""
    drive(propagator, space, steps, seed, watch="observe")


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
    skipped = drive(propagator, space, steps, seed)
    again = drive(propagator, space, steps, seed)
    if [dict(c) for c in skipped.own] != [dict(c) for c in again.own]:
        return  # it breeds differently anyway: check_deterministic says so
    told = drive(propagator, space, steps, seed, observe_always=True)
    for i, (a, b) in enumerate(zip(told.own, skipped.own, strict=True)):
        require(
            dict(a) == dict(b),
            f"observes is False, but observe() changes what it breeds (child {i}: "
            f"{dict(a)} with the calls, {dict(b)} without): the engine skips observe() when "
            "observes is False; make observes true",
        )


@contract
def check_state_on_wire_and_records(
    propagator: Any, space: SearchSpace | None = None, *, steps: int | None = None, seed: int = 0
) -> None:
    """Each child crosses the wire (pickled, as between workers) with its parameters and
    state, and its state is restored from the evaluation records."""
    island = drive(propagator, space, steps, seed)
    for ind in island.own:
        wired = from_wire(pickle.loads(pickle.dumps(to_wire(ind))))
        require(
            wired.state == ind.state and dict(wired) == dict(ind),
            "an individual must cross the wire unchanged (state included): "
            f"{dict(ind)} {ind.state!r} arrived as {dict(wired)} {wired.state!r}",
        )
    with tempfile.TemporaryDirectory() as folder:
        restored = {r.generation: r for r in records_of(island, folder)}
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
    first = drive(propagator, space, steps, seed)
    second = drive(propagator, space, steps, seed)
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
    space = resolve_space(propagator, space)
    island = drive(propagator, space, steps, seed)
    with tempfile.TemporaryDirectory() as folder:
        restored = records_of(island, folder)
    resumed = new_island(propagator, space, seed + 1, observe_errors=True)
    resumed.count = len(restored)
    for ind in restored:
        resumed.population.add(ind)
        resumed.evaluated.append(ind)
        try:
            resumed.tell(ind)
        except AssertionError as err:
            raise AssertionError(f"while resuming from the records: {err}") from err
    resumed.inspect = inspecting(lambda c: require_valid(space, c))
    try:
        resumed.run(max((STEPS if steps is None else steps) // 4, 5), initial=0)
    except AssertionError as err:
        raise AssertionError(f"after resuming from the records: {err}") from err
