"""The log's own fields of an evaluation record, apart from the parameters.

A record (one line of an evaluation log, see :mod:`propulate.runs.log`) keeps the
configuration nested under ``"params"``, so a parameter may have any name, including one of
these. When :func:`propulate.runs.table.read_history` flattens records into a table, a parameter whose name is
one of :data:`META_COLUMNS` (or starts with ``"param."``) gets the column ``"param.<name>"``
(see :func:`parameter_column`); every other parameter's column is named as the parameter.
"""

from __future__ import annotations

#: The non-parameter fields of a record, in the column order of ``read_history``.
META_COLUMNS: tuple[str, ...] = (
    "task",
    "run",
    "method",
    "island",
    "rank",
    "generation",
    "loss",
    "status",
    "error",
    "start",
    "seconds",
    "session",
    "seq",
    "traceback",
    "details",
    "curve",
    "state",
)

#: Prefix of the table column of a parameter named like a log column.
PARAM_PREFIX = "param."


def parameter_column(name: str) -> str:
    """The table column of parameter ``name``.

    The name itself, or ``"param.<name>"`` when it is one of the log's own columns
    (:data:`META_COLUMNS`) or itself starts with ``"param."`` (so two parameters never share a
    column and no parameter takes a log column).
    """
    if name in META_COLUMNS or name.startswith(PARAM_PREFIX):
        return PARAM_PREFIX + name
    return name
