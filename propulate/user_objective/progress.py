"""A command objective's progress lines: intermediate values read while the program runs.

``progress`` is a regular expression matched against each line of the program's stdout as it
is written. With two groups, group 1 is the step and group 2 the value
(``"epoch (\\d+) val_loss ([0-9.eE+-]+)"``); with one group it is the value and the steps count
the matching lines from 0. Each value goes to the engine's reporter
(:mod:`propulate.engine.steps`), and when the run's pruner says stop the program's process
group is ended as for a timeout and the evaluation is recorded as ``pruned``. A pattern that
matches no line of a whole run stops nothing; that is logged once per process.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any

from propulate.runs.outcome import EvaluationError

log = logging.getLogger("propulate")

#: Patterns already reported as matching nothing (one warning per pattern and process).
_WARNED: set[str] = set()


def compile_progress(pattern: Any) -> re.Pattern[str]:
    """The compiled ``progress`` pattern (``ValueError`` unless a regex with 1 or 2 groups)."""
    if not isinstance(pattern, str) or not pattern:
        raise ValueError(f"objective progress must be a regex string, got {pattern!r}")
    try:
        compiled = re.compile(pattern)
    except re.error as err:
        raise ValueError(f"objective progress regex {pattern!r}: {err}") from None
    if compiled.groups not in (1, 2):
        raise ValueError(
            f"objective progress regex {pattern!r} needs 1 group (the value) or 2 (the step, "
            "then the value), e.g. 'epoch (\\d+) val_loss ([0-9.eE+-]+)'"
        )
    return compiled


def _number(text: str, what: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise EvaluationError(f"progress regex matched {what} {text!r}, not a number") from None


class ProgressReader:
    """Reads one run's progress lines and reports them.

    Parameters
    ----------
    pattern : re.Pattern
        From :func:`compile_progress`.
    report : callable or None
        ``report(step, value) -> stop`` (``None``: values are only collected).
    """

    def __init__(self, pattern: re.Pattern[str], report: Callable[[Any, Any], bool] | None):
        self.pattern = pattern
        self.report = report
        self.values: list[tuple[float, float]] = []
        self.stopped = False

    def __call__(self, line: str) -> bool:
        """Handle one line; whether to stop the program."""
        m = self.pattern.search(line)
        if m is None:
            return False
        if self.pattern.groups == 2:
            step, value = _number(m.group(1), "the step"), _number(m.group(2), "the value")
        else:
            step, value = float(len(self.values)), _number(m.group(1), "the value")
        self.values.append((step, value))
        if self.report is not None and self.report(int(step) if step.is_integer() else step, value):
            self.stopped = True
        return self.stopped

    def finish(self) -> None:
        """After the run: warn (once per pattern and process) when no line matched."""
        if not self.values and self.pattern.pattern not in _WARNED:
            _WARNED.add(self.pattern.pattern)
            log.warning(
                "objective progress regex '%s' matched no line of the program's output: no "
                "intermediate values, nothing is stopped early",
                self.pattern.pattern,
            )
