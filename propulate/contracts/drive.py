"""How the propagator checks drive a propagator: its space, a copy on an island, a run whose
children a check inspects as they are bred, and the records of a run."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from propulate.contracts.island import STEPS, Island, as_children, call
from propulate.contracts.runner import require
from propulate.engine.wire import from_record
from propulate.population import Individual
from propulate.runs.log import EvaluationLog, iter_records
from propulate.runs.outcome import Outcome
from propulate.runs.status import OK
from propulate.space import SearchSpace


def resolve_space(propagator: Any, space: SearchSpace | None) -> SearchSpace:
    """``space``, or the one the propagator declares (``AssertionError`` when neither)."""
    resolved = (
        space if space is not None else call("reading .space", getattr, propagator, "space", None)
    )
    require(
        isinstance(resolved, SearchSpace),
        "the propagator must declare its search space (attribute .space), or pass space=",
    )
    return resolved  # type: ignore[return-value]


def new_island(propagator: Any, space: SearchSpace, seed: int, **options: Any) -> Island:
    """An island breeding with a deep copy of ``propagator`` (``options``: of :class:`Island`)."""
    return Island(
        space, call("copy.deepcopy of the propagator", copy.deepcopy, propagator), seed, **options
    )


def inspecting(check: Callable[[Individual], None]) -> Callable[[list[Individual], Any], None]:
    """An :attr:`Island.inspect` hook that hands ``check`` every child of each breeding."""

    def inspect(view: list[Individual], out: Any) -> None:
        for child in as_children(out):
            check(child)

    return inspect


def drive(
    propagator: Any,
    space: SearchSpace | None,
    steps: int | None,
    seed: int,
    each: Callable[[Individual], None] | None = None,
    **options: Any,
) -> Island:
    """Run a copy of the propagator on an island; ``each`` sees every child as it is bred."""
    space = resolve_space(propagator, space)
    island = new_island(propagator, space, seed, **options)
    if each is not None:
        island.inspect = inspecting(each)
    from_empty(island)
    island.run(STEPS if steps is None else steps)
    return island


def from_empty(island: Island) -> None:
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


def records_of(island: Island, folder: str) -> list[Individual]:
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
