"""Reading the loss from a program's stdout: a regular expression or a key of a JSON object;
for a run with several objectives (:mod:`propulate.runs.declared_objectives`) one of them per objective
(:class:`NamedResults`)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


class ResultError(ValueError):
    """The program's output holds no usable loss (one line saying why)."""


@dataclass(frozen=True)
class ResultSpec:
    """Where the loss is in stdout.

    Parameters
    ----------
    regex : str or None
        A regular expression (``re.MULTILINE``); group 1 of its *last* match is the loss, so
        a program printing progress lines and then a final ``time: ...`` gives the final one.
    json_key : str or None
        A key of a JSON object in stdout: the whole output, else the last line that is a JSON
        object holding the key. Dots go into nested objects (``timing.total``).
    """

    regex: str | None = None
    json_key: str | None = None

    def __post_init__(self) -> None:
        if (self.regex is None) == (self.json_key is None):
            raise ValueError("objective result: give exactly one of a regex or {json: KEY}")
        if self.regex is not None:
            try:
                pattern = re.compile(self.regex, re.MULTILINE)
            except re.error as err:
                raise ValueError(f"objective result regex {self.regex!r}: {err}") from None
            if pattern.groups < 1:
                raise ValueError(
                    f"objective result regex {self.regex!r} has no group: "
                    "put the number in parentheses, e.g. 'time: ([0-9.eE+-]+)'"
                )
        elif not self.json_key:
            raise ValueError("objective result: {json: KEY} needs a non-empty key")

    @classmethod
    def from_config(cls, value: Any) -> ResultSpec:
        """From the config: a regex string, ``{json: KEY}`` or ``{regex: PATTERN}``."""
        if isinstance(value, str):
            return cls(regex=value)
        if isinstance(value, Mapping) and len(value) == 1 and set(value) <= {"json", "regex"}:
            key, item = next(iter(value.items()))
            if not isinstance(item, str):
                raise ValueError(f"objective result {{{key}: ...}} must be a string, got {item!r}")
            return cls(regex=item) if key == "regex" else cls(json_key=item)
        raise ValueError(f"objective result must be a regex string or {{json: KEY}}, got {value!r}")

    def to_config(self) -> str | dict[str, str]:
        """The config form (inverse of :meth:`from_config`)."""
        return self.regex if self.regex is not None else {"json": str(self.json_key)}

    def parse(self, stdout: str) -> float:
        """The loss in ``stdout``.

        Raises
        ------
        ResultError
            No match / no such key, or the value is not a finite number.
        """
        if self.regex is not None:
            matches = list(re.finditer(self.regex, stdout, re.MULTILINE))
            if not matches:
                lines = stdout.splitlines()
                last = f"; last line: {lines[-1][-200:]!r}" if lines else ""
                raise ResultError(
                    f"no match for result regex {self.regex!r} in stdout ({len(lines)} lines{last})"
                )
            text = matches[-1].group(1)
            try:
                number = float(text)
            except (TypeError, ValueError):
                raise ResultError(f"result regex matched {text!r}, not a number") from None
            return _finite(number, text)
        value = _json_value(stdout, str(self.json_key))
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise ResultError(f"result key {self.json_key!r} is {value!r}, not a number")
        try:
            number = float(value)
        except ValueError:
            raise ResultError(f"result key {self.json_key!r} is {value!r}, not a number") from None
        return _finite(number, value)


@dataclass(frozen=True)
class NamedResults:
    """One result per objective: ``{name: regex or {json: KEY}}`` in the config.

    Parameters
    ----------
    specs : dict
        Objective name to :class:`ResultSpec`.
    """

    specs: dict[str, ResultSpec]

    def parse(self, stdout: str) -> dict[str, float]:
        """Every objective's value in ``stdout`` (``ResultError`` naming the one missing)."""
        out = {}
        for name, spec in self.specs.items():
            try:
                out[name] = spec.parse(stdout)
            except ResultError as err:
                raise ResultError(f"objective {name}: {err}") from None
        return out

    def to_config(self) -> dict[str, Any]:
        """The config form (inverse of :func:`result_spec`)."""
        return {name: spec.to_config() for name, spec in self.specs.items()}


def result_spec(value: Any) -> ResultSpec | NamedResults:
    """The ``result`` of a command objective's config: one result (a regex, ``{json: KEY}``,
    ``{regex: PATTERN}``) or one per objective, ``{name: <one result>, ...}``."""
    if isinstance(value, ResultSpec | NamedResults):
        return value
    if isinstance(value, Mapping) and not (len(value) == 1 and set(value) <= {"json", "regex"}):
        if not value:
            raise ValueError("objective result: the mapping of objective names is empty")
        specs = {}
        for name, item in value.items():
            try:
                specs[str(name)] = ResultSpec.from_config(item)
            except ValueError as err:
                raise ValueError(
                    "objective result must be a regex string or {json: KEY}, or one of them "
                    f"per objective {{name: ...}}; objective {name}: {err}"
                ) from None
        return NamedResults(specs)
    return ResultSpec.from_config(value)


def _finite(x: float, raw: Any) -> float:
    if not math.isfinite(x):
        raise ResultError(f"result {raw!r} is not a finite number")
    return x


_MISSING = object()


def _lookup(obj: Any, key: str) -> Any:
    if isinstance(obj, dict) and key in obj:
        return obj[key]
    for part in key.split("."):
        if not isinstance(obj, dict) or part not in obj:
            return _MISSING
        obj = obj[part]
    return obj


def _json_value(stdout: str, key: str) -> Any:
    candidates: list[Any] = []
    try:
        candidates.append(json.loads(stdout))
    except ValueError:
        pass
    for line in reversed(stdout.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                candidates.append(json.loads(line))
            except ValueError:
                continue
    for obj in candidates:
        value = _lookup(obj, key)
        if value is not _MISSING:
            return value
    raise ResultError(f"no JSON object with key {key!r} in stdout")
