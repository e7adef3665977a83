"""What migration did to a worker's island, logged so that a resumed run restores it exactly.

The evaluation log (:mod:`propulate.compat.history`) holds every evaluated individual with the island
it was bred on. Migration changes an island afterwards: immigrants arrive (copies under
pollination, movers under real migration) and individuals are taken out of breeding (replaced
by immigrants, or gone to another island). Each worker appends these events, as it applies
them to its own view, to ``DIR/migrations/<session>-r<rank>.jsonl``::

    {"in": 1, "island": 1, "ind": [...]}       an immigrant joined island 1 (its wire fields,
                                               in the order of WireIndividual)
    {"off": 1, "island": 0, "uids": [...]}     individuals of island 0 left breeding

Every worker of an island sees every event of its island (immigrants go to all its workers, a
deactivation is announced to the island's other workers), so one worker per island, its
*recorder*, logs all of them; a worker that deactivates individuals itself (the decider under
pollination, the sender under real migration) logs that too, so the event survives a kill
before it reached the recorder. Replaying is independent of the order of the events (an
individual's uid is added once, a deactivation is remembered until its individual arrives), so
these duplicates are harmless. Events are written in batches, one write per batch of messages
the worker took in (a kill loses at most the events of the batch being applied).

A run with one island or no migration event writes no file. On resume every worker replays the
events of its island after loading the records (:func:`replay`), so a restored island holds the
same individuals, with the same active flags, as when the run stopped.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import BinaryIO

import orjson

from propulate.engine.wire import WireIndividual, from_wire, wire_fields
from propulate.population import Individual, Population

MIGRATION_DIR = "migrations"


class MigrationLog:
    """Writer of one worker's migration events for one session (opened at the first event).

    Parameters
    ----------
    directory : path
        The run directory.
    rank : int
        The writing MPI rank.
    session : str
        The session id (as in the evaluation log's file names).
    """

    def __init__(self, directory: str | Path, rank: int, session: str) -> None:
        self.path = Path(directory) / MIGRATION_DIR / f"{session}-r{rank:05d}.jsonl"
        self._fh: BinaryIO | None = None
        self._lines: list[bytes] = []

    def _write(self, event: dict[str, object]) -> None:
        # orjson, as the evaluation log (an island's recorder logs every immigrant of its island)
        self._lines.append(orjson.dumps(event))

    def flush(self) -> None:
        """Write the events logged since the last flush, in one write."""
        if not self._lines:
            return
        if self._fh is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = open(self.path, "ab")  # noqa: SIM115
        self._fh.write(b"\n".join(self._lines) + b"\n")
        self._fh.flush()
        self._lines.clear()

    def arrived(self, ind: Individual) -> None:
        """An immigrant joined ``ind.island`` in this worker's view."""
        # Only active, successfully evaluated individuals emigrate: the loss is finite.
        self._write({"in": 1, "island": ind.island, "ind": wire_fields(ind)})  # a JSON list

    def deactivated(self, island: int, uids: Iterable[str | None]) -> None:
        """Individuals of ``island`` left breeding in this worker's view."""
        self._write({"off": 1, "island": island, "uids": [u for u in uids if u is not None]})

    def close(self) -> None:
        """Write what is pending and close the file (if one was opened)."""
        self.flush()
        if self._fh is not None:
            self._fh.close()
            self._fh = None


def replay(
    directory: str | Path,
    island: int,
    population: Population,
    add: Callable[[Individual], None],
) -> int:
    """Apply the logged migration events of ``island`` to a resumed worker's population.

    Returns the number of events applied. A torn last line (a writer killed mid-line) is
    skipped.
    """
    folder = Path(directory) / MIGRATION_DIR
    if not folder.is_dir():
        return 0
    applied = 0
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if not isinstance(event, dict) or event.get("island") != island:
                continue
            if event.get("in"):
                fields = event["ind"]  # a list (a mapping in logs of earlier versions)
                wire = (
                    WireIndividual(**fields)
                    if isinstance(fields, dict)
                    else WireIndividual(*fields)
                )
                ind = from_wire(wire)
                ind.island = island
                add(ind)
            else:
                for uid in event.get("uids", ()):
                    population.deactivate(uid)
            applied += 1
    return applied
