"""The tuning database: a campaign's best configurations, versioned, with their provenance.

* :mod:`~propulate.tuningdb.store`: the SQLite schema, versioned rows, transactional writes.
* the machine fingerprint and config hash live in :mod:`propulate.runs.fingerprint`.
* :mod:`~propulate.tuningdb.ingest`: fill it from a campaign's run directories.
* :mod:`~propulate.tuningdb.suggest`: the configuration for a task (measured or TLA1).
* :mod:`~propulate.tuningdb.revalidate`: re-measure on a changed machine, flag drift, re-tune.
"""

from __future__ import annotations

from propulate.tuningdb.store import DB_FILE, TuningDB, TuningRow
from propulate.tuningdb.suggest import suggest

__all__ = ["DB_FILE", "TuningDB", "TuningRow", "suggest"]
