"""The dimensions of a space: continuous, integer and categorical, with unit-cube encoding.

* :class:`Float` -- a continuous interval, optionally log-scaled;
* :class:`Integer` -- an inclusive integer range, optionally log-scaled;
* :class:`Categorical` -- a finite set of string choices.

Encoding rules (``u`` in ``[0, 1]``):

* float: ``u = (v - low) / (high - low)``, or the same on ``log(v)``;
* integer: the range ``[low - 0.5, high + 0.5]`` is mapped to ``[0, 1]`` so each integer owns an
  equal share of the cube (log scale: ``[log(low - 0.5), log(high + 0.5)]``); decoding rounds;
* categorical: choice ``i`` of ``k`` encodes to the centre of its cell, ``(i + 0.5) / k``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

#: A parameter value.
Value = float | int | str


class SpaceError(ValueError):
    """A search-space definition that cannot be used (empty, inverted, badly typed)."""


@dataclass(frozen=True)
class Float:
    """A continuous dimension ``[low, high]``.

    Parameters
    ----------
    low, high : float
        Bounds, ``low < high``; both ``> 0`` when ``log`` is true.
    log : bool
        Sample and mutate ``log(v)`` uniformly instead of ``v``.
    """

    low: float
    high: float
    log: bool = False
    kind = "float"

    def __post_init__(self) -> None:
        if not (math.isfinite(self.low) and math.isfinite(self.high)):
            raise SpaceError(f"float bounds must be finite, got [{self.low}, {self.high}]")
        if not self.low < self.high:
            raise SpaceError(f"float range is empty or inverted: [{self.low}, {self.high}]")
        if self.log and self.low <= 0:
            raise SpaceError(f"log-scaled float needs low > 0, got {self.low}")
        object.__setattr__(self, "_span", self._ends())  # asked for every value bred

    def _ends(self) -> tuple[float, float]:
        if self.log:
            return math.log(self.low), math.log(self.high)
        return float(self.low), float(self.high)

    def encode(self, value: Value) -> float:
        """Map a value to ``[0, 1]``."""
        a, b = self._span  # type: ignore[attr-defined]
        v = math.log(float(value)) if self.log else float(value)
        return (v - a) / (b - a)

    def decode(self, u: float) -> float:
        """Map ``u`` in ``[0, 1]`` (clipped) to a value in ``[low, high]``."""
        a, b = self._span  # type: ignore[attr-defined]
        # min(max(...)) written out: the same values (NaN passes), without two calls each
        v = a + (0.0 if u < 0.0 else 1.0 if u > 1.0 else u) * (b - a)
        if self.log:
            v = math.exp(v)
        low, high = self.low, self.high
        v = low if low > v else v
        return high if high < v else v

    def contains(self, value: Any) -> bool:
        """Whether ``value`` is a number within the bounds."""
        return isinstance(value, int | float | np.number) and self.low <= value <= self.high

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly description."""
        return {"type": "float", "low": self.low, "high": self.high, "log": self.log}


@dataclass(frozen=True)
class Integer:
    """An inclusive integer dimension ``{low, ..., high}``.

    Parameters
    ----------
    low, high : int
        Inclusive bounds, ``low <= high``; ``low >= 1`` when ``log`` is true.
    log : bool
        Spread the integers on a log scale (small values as likely as large ones per decade).
    """

    low: int
    high: int
    log: bool = False
    kind = "int"

    def __post_init__(self) -> None:
        if int(self.low) != self.low or int(self.high) != self.high:
            raise SpaceError(f"integer bounds must be integers, got [{self.low}, {self.high}]")
        if not self.low <= self.high:
            raise SpaceError(f"integer range is empty or inverted: [{self.low}, {self.high}]")
        if self.log and self.low < 1:
            raise SpaceError(f"log-scaled integer needs low >= 1, got {self.low}")

    def _ends(self) -> tuple[float, float]:
        if self.log:
            return math.log(self.low - 0.5), math.log(self.high + 0.5)
        return self.low - 0.5, self.high + 0.5

    def encode(self, value: Value) -> float:
        """Map a value to ``[0, 1]`` (the centre of its cell on a linear scale)."""
        a, b = self._ends()
        v = math.log(float(value)) if self.log else float(value)
        return (v - a) / (b - a)

    def decode(self, u: float) -> int:
        """Map ``u`` in ``[0, 1]`` (clipped) to the integer whose cell contains it."""
        a, b = self._ends()
        v = a + min(max(u, 0.0), 1.0) * (b - a)
        v = math.exp(v) if self.log else v
        return int(min(max(round(v), self.low), self.high))

    def contains(self, value: Any) -> bool:
        """Whether ``value`` is an integer within the bounds."""
        if isinstance(value, bool) or not isinstance(value, int | np.integer | float):
            return False
        return float(value).is_integer() and self.low <= value <= self.high

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly description."""
        return {"type": "int", "low": int(self.low), "high": int(self.high), "log": self.log}


@dataclass(frozen=True)
class Categorical:
    """A categorical dimension over distinct string choices.

    Parameters
    ----------
    choices : tuple of str
        The values, at least one, all distinct.
    """

    choices: tuple[str, ...]
    kind = "categorical"

    def __post_init__(self) -> None:
        object.__setattr__(self, "choices", tuple(self.choices))
        if not self.choices:
            raise SpaceError("categorical dimension needs at least one choice")
        if len(set(self.choices)) != len(self.choices):
            raise SpaceError(f"categorical choices must be distinct, got {self.choices}")
        object.__setattr__(self, "_index", {c: i for i, c in enumerate(self.choices)})

    def encode(self, value: Value) -> float:
        """Map a choice to the centre of its cell, ``(i + 0.5) / k``."""
        try:
            i = self._index[value]  # type: ignore[attr-defined]
        except KeyError:
            raise SpaceError(f"{value!r} is not one of {self.choices}") from None
        return (i + 0.5) / len(self.choices)

    def decode(self, u: float) -> str:
        """Map ``u`` in ``[0, 1]`` (clipped) to the choice whose cell contains it."""
        k = len(self.choices)
        u = min(max(u, 0.0), 1.0)  # clip first: int(inf * k) would overflow
        return self.choices[min(max(int(u * k), 0), k - 1)]

    def contains(self, value: Any) -> bool:
        """Whether ``value`` is one of the choices."""
        return value in self._index  # type: ignore[attr-defined]

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly description."""
        return {"type": "categorical", "choices": list(self.choices)}


Dimension = Float | Integer | Categorical


def _number(value: Any, key: str) -> float:
    """Coerce a YAML scalar to a number (YAML 1.1 reads ``1e-5`` as a string)."""
    if isinstance(value, bool):
        raise SpaceError(f"{key}: expected a number, got {value!r}")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise SpaceError(f"{key}: expected a number, got {value!r}") from None


#: The keys of a parameter's mapping specification.
SPEC_KEYS = ("type", "low", "high", "log", "choices", "when")


def did_you_mean(key: str, known: Sequence[str]) -> str:
    """``did you mean 'log'?`` for a misspelt key, or the valid keys when none is close."""
    import difflib

    swapped = [k for k in known if sorted(k) == sorted(key)]  # letters swapped: 'lgo', 'log'
    close = swapped or difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
    return f"did you mean {close[0]!r}?" if close else f"valid keys: {', '.join(known)}"


def unknown_key(key: str, known: Sequence[str]) -> str:
    """``unknown key 'lgo' (did you mean 'log'?)``."""
    return f"unknown key {key!r} ({did_you_mean(key, known)})"


def make_dimension(spec: Any, name: str = "?") -> Dimension:
    """Build a dimension from any accepted specification.

    Parameters
    ----------
    spec : Dimension, tuple, list or mapping
        A dimension object; a Propulate-1.2 tuple (``(float, float)``, ``(int, int)``,
        ``(str, ...)``); or a mapping ``{"type": "float"|"int"|"categorical", "low", "high",
        "log", "choices"}`` as written in YAML files.
    name : str
        The parameter's name, for error messages.

    Returns
    -------
    Dimension
        The dimension.
    """
    if isinstance(spec, Float | Integer | Categorical):
        return spec
    try:
        if isinstance(spec, Mapping):
            unknown = [str(k) for k in spec if k not in SPEC_KEYS]
            if unknown:
                raise SpaceError(unknown_key(unknown[0], SPEC_KEYS))
            kind = str(spec.get("type", "")).lower()
            if kind in ("categorical", "cat", "choice", "str"):
                return Categorical(tuple(str(c) for c in spec["choices"]))
            low, high = spec["low"], spec["high"]
            log = bool(spec.get("log", False))
            if kind in ("int", "integer"):
                lo, hi = _number(low, f"{name}.low"), _number(high, f"{name}.high")
                if not (lo.is_integer() and hi.is_integer()):
                    raise SpaceError(f"integer bounds must be integers, got [{low}, {high}]")
                return Integer(int(lo), int(hi), log)
            if kind in ("float", "real", "continuous", ""):
                return Float(_number(low, f"{name}.low"), _number(high, f"{name}.high"), log)
            raise SpaceError(f"unknown type {spec.get('type')!r}")
        if isinstance(spec, Sequence) and not isinstance(spec, str):
            items = tuple(spec)
            if not items:
                raise SpaceError("empty limits")
            if all(isinstance(v, str) for v in items):
                return Categorical(items)
            if len(items) != 2:
                raise SpaceError(f"numeric limits need exactly (low, high), got {items}")
            if all(isinstance(v, int | np.integer) and not isinstance(v, bool) for v in items):
                return Integer(int(items[0]), int(items[1]))
            return Float(_number(items[0], f"{name}.low"), _number(items[1], f"{name}.high"))
    except SpaceError as err:
        raise SpaceError(f"parameter {name!r}: {err}") from None
    except (KeyError, TypeError) as err:
        raise SpaceError(f"parameter {name!r}: malformed specification {spec!r} ({err})") from None
    raise SpaceError(f"parameter {name!r}: cannot read specification {spec!r}")
