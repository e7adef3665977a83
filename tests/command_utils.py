"""Shared by the tests of command objectives (``propulate.objective.Command``)."""

from __future__ import annotations

#: The result regex of the test programs, which print ``time: <loss>``.
REGEX = "time: ([0-9.eE+-]+)"
