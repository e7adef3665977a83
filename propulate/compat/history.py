"""The evaluation log and its readers, under the names scripts use (``propulate.compat.history``).

The record layer lives in :mod:`propulate.runs` (:mod:`~propulate.runs.log` writes and reads
the records, :mod:`~propulate.runs.table` turns them into pandas tables,
:mod:`~propulate.runs.summary` counts them); this module keeps the public names in one place:
``read_history`` (also ``propulate.read_history``), ``iter_records``, ``EvaluationLog``,
``best_so_far`` and ``tally``.
"""

from __future__ import annotations

from propulate.runs.columns import META_COLUMNS, parameter_column
from propulate.runs.log import EVAL_DIR, EvaluationLog, Record, iter_records, log_files
from propulate.runs.log import new_session_id as new_session_id
from propulate.runs.status import NOT_FAILED
from propulate.runs.summary import Tally, tally
from propulate.runs.table import best_so_far, read_history

__all__ = [
    "EVAL_DIR",
    "META_COLUMNS",
    "NOT_FAILED",
    "EvaluationLog",
    "Record",
    "Tally",
    "best_so_far",
    "iter_records",
    "log_files",
    "new_session_id",
    "parameter_column",
    "read_history",
    "tally",
]
