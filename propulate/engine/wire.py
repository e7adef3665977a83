"""Compact wire and log representations of individuals."""

from __future__ import annotations

from typing import Any

from propulate.history import Record
from propulate.population import Individual

Wire = tuple[Any, ...]


def to_wire(ind: Individual) -> Wire:
    """A small picklable tuple carrying everything a peer needs."""
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
        ind.migration_steps,
    )


def from_wire(w: Wire) -> Individual:
    """Rebuild an individual sent with :func:`to_wire`."""
    ind = Individual(w[1], generation=w[7], rank=w[6])
    (
        ind.uid,
        _,
        ind.loss,
        ind.status,
        ind.error,
        ind.island,
        _,
        _,
        ind.evaltime,
        ind.evalperiod,
        ind.current,
        ind.migration_steps,
    ) = w
    return ind


def from_record(rec: Record, num_islands: int) -> Individual:
    """An individual from an evaluation-log record (for resuming)."""
    ind = Individual(rec["params"], generation=rec.get("generation", -1), rank=rec.get("rank", -1))
    ind.uid = f"{rec.get('session', '?')}:{rec.get('rank', -1)}:{rec.get('seq', -1)}"
    ok = rec.get("status") == "ok" and rec.get("loss") is not None
    ind.loss = float(rec["loss"]) if ok else float("inf")
    ind.status = "ok" if ok else "failed"
    ind.error = rec.get("error")
    ind.island = int(rec.get("island", 0)) % num_islands
    ind.evaltime = rec.get("start")
    ind.evalperiod = rec.get("seconds")
    return ind
