"""Compact wire and log representations of individuals.

An individual travels between workers as a :class:`WireIndividual`, a named tuple: small to
pickle, and read by field name, never by position.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from propulate.population import Individual
from propulate.runs.status import FAILED, OK
from propulate.runs.summary import record_loss

Record = dict[str, Any]


class WireIndividual(NamedTuple):
    """Everything a peer needs to know about an evaluated individual."""

    uid: str | None
    params: dict[str, Any]
    loss: float | None
    status: str
    error: str | None
    island: int
    rank: int
    generation: int
    evaltime: float | None
    evalperiod: float | None
    current: int
    migration_steps: int
    state: dict[str, Any] | None
    curve: list[list[float]] | None
    objectives: dict[str, float] | None = None


def wire_fields(ind: Individual, migration_steps: int | None = None) -> tuple[Any, ...]:
    """The fields of :class:`WireIndividual` as a plain tuple, in its order: what workers
    send each other (a plain tuple pickles in half the time, and unpickles faster on every
    receiver); ``migration_steps`` replaces the individual's own (an emigrant's)."""
    return (
        ind.uid,
        dict(ind),
        ind.loss,
        ind.status,
        ind.error,
        ind.island,
        ind.rank,
        ind.generation,
        ind.evaltime,
        ind.evalperiod,
        ind.current,
        ind.migration_steps if migration_steps is None else migration_steps,
        ind.state,
        ind.curve,
        ind.objectives,
    )


def to_wire(ind: Individual) -> WireIndividual:
    """A small picklable tuple carrying everything a peer needs."""
    return WireIndividual(*wire_fields(ind))


def from_wire(w: WireIndividual | tuple[Any, ...]) -> Individual:
    """Rebuild an individual sent with :func:`to_wire` or :func:`wire_fields`."""
    (uid, params, loss, status, error, island, rank, generation, evaltime, evalperiod,
     current, steps, state, curve, objectives) = w  # fmt: skip
    ind = Individual.__new__(Individual)  # every field is set here: no defaults first
    dict.update(ind, params)
    ind.generation, ind.rank, ind.active = generation, rank, True
    ind.uid, ind.loss, ind.status, ind.error = uid, loss, status, error
    ind.island, ind.evaltime, ind.evalperiod = island, evaltime, evalperiod
    ind.current, ind.migration_steps = current, steps
    ind.state, ind.curve, ind.objectives = state, curve, objectives
    return ind


def from_record(rec: Record, num_islands: int) -> Individual:
    """An individual from an evaluation-log record (for resuming)."""
    ind = Individual(rec["params"], generation=rec.get("generation", -1), rank=rec.get("rank", -1))
    ind.uid = f"{rec.get('session', '?')}:{rec.get('rank', -1)}:{rec.get('seq', -1)}"
    loss = record_loss(rec)
    ind.loss = float("inf") if loss is None else loss
    ind.status = OK if loss is not None else str(rec.get("status") or FAILED)
    ind.error = rec.get("error")
    ind.island = int(rec.get("island", 0)) % num_islands
    ind.evaltime = rec.get("start")
    ind.evalperiod = rec.get("seconds")
    ind.state = rec.get("state")
    ind.curve = rec.get("curve")
    ind.objectives = rec.get("objectives") if loss is not None else None
    return ind
