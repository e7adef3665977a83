"""A run's objectives: their names and directions, and an objective's return value read as them.

A run declares its objectives as ``"runtime:min,accuracy:max"`` (``evolve --objectives``) or as
a mapping ``{runtime: min, accuracy: max}`` (a campaign's ``evolve.objectives``); a name without
a direction is minimised. Without a declaration a run has one anonymous objective, its loss,
minimised: records and summaries are then exactly what they always were.

With a declaration, the objective returns one value per objective -- a mapping ``{name:
value}``, a tuple or list in the declared order, or a plain number when one objective is
declared -- and :meth:`Objectives.values_of` reads it. A record keeps the values as returned,
in natural units and directions, under ``"objectives"``; its ``loss`` is the *first* objective
signed for minimisation (a maximised one negated), so everything that ranks by loss (the best
of a run, emigrants, the single-objective propagators) ranks by the first objective.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

MIN, MAX = "min", "max"
DIRECTIONS = (MIN, MAX)

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*$")


@dataclass(frozen=True)
class Objectives:
    """The declared objectives of a run, in order.

    Attributes
    ----------
    names : tuple of str
        The objectives' names (the record's keys and the table's columns).
    directions : tuple of str
        ``"min"`` or ``"max"`` per objective.
    """

    names: tuple[str, ...]
    directions: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.names:
            raise ValueError("objectives: declare at least one, e.g. runtime:min")
        if len(self.names) != len(self.directions):
            raise ValueError("objectives: one direction per objective")
        for name, direction in zip(self.names, self.directions, strict=True):
            if not isinstance(name, str) or not _NAME.match(name):
                raise ValueError(
                    f"objective name {name!r}: use letters, digits, '_', '.', '-' "
                    "(starting with a letter or '_')"
                )
            if direction not in DIRECTIONS:
                raise ValueError(
                    f"objective {name}: direction must be min or max, got {direction!r}"
                )
        if len(set(self.names)) != len(self.names):
            raise ValueError(f"objectives: a name is given twice in {', '.join(self.names)}")

    @classmethod
    def parse(cls, spec: str | Mapping[str, Any] | Objectives) -> Objectives:
        """From ``"a:min,b:max"`` (a name alone is minimised) or a mapping ``{a: min, b: max}``."""
        if isinstance(spec, Objectives):
            return spec
        if isinstance(spec, Mapping):
            items = [(str(k), "" if v is None else str(v).strip().lower()) for k, v in spec.items()]
        elif isinstance(spec, str):
            items = []
            for part in spec.split(","):
                name, _, direction = part.strip().partition(":")
                items.append((name.strip(), direction.strip().lower()))
        else:
            raise ValueError(f"objectives must be 'name:min,name:max' or a mapping, got {spec!r}")
        return cls(tuple(n for n, _ in items), tuple(d or MIN for _, d in items))

    @classmethod
    def maybe(cls, spec: str | Mapping[str, Any] | Objectives | None) -> Objectives | None:
        """:meth:`parse`, or ``None`` for ``None`` (no declaration)."""
        return None if spec is None else cls.parse(spec)

    def text(self) -> str:
        """The canonical command-line form, ``"a:min,b:max"``."""
        return ",".join(f"{n}:{d}" for n, d in zip(self.names, self.directions, strict=True))

    def as_dict(self) -> dict[str, str]:
        """Name to direction, in order."""
        return dict(zip(self.names, self.directions, strict=True))

    def __len__(self) -> int:
        return len(self.names)

    @property
    def several(self) -> bool:
        """Whether more than one objective is declared."""
        return len(self.names) > 1

    @property
    def signs(self) -> tuple[float, ...]:
        """``1.0`` per minimised objective, ``-1.0`` per maximised one."""
        return tuple(1.0 if d == MIN else -1.0 for d in self.directions)

    def values_of(self, value: Any) -> dict[str, float]:
        """The objective values in what an objective returned.

        Raises
        ------
        ValueError
            Naming the objective that is missing or not a finite number (or the length of a
            tuple that does not match).
        """
        names = self.names
        if isinstance(value, Mapping):
            missing = [n for n in names if n not in value]
            if missing:
                got = ", ".join(map(str, value)) or "nothing"
                raise ValueError(f"objective {missing[0]} is missing from the result (got {got})")
            raw = [value[n] for n in names]
        elif isinstance(value, Sequence) and not isinstance(value, str):
            if len(value) != len(names):
                raise ValueError(
                    f"the objective returned {len(value)} values for {len(names)} objectives "
                    f"({', '.join(names)})"
                )
            raw = list(value)
        elif len(names) == 1:
            raw = [value]
        else:
            raise ValueError(
                f"the objective returned {value!r}, not one value per objective "
                f"({', '.join(names)}): return a mapping {{name: value}}"
            )
        out: dict[str, float] = {}
        for name, item in zip(names, raw, strict=True):
            if isinstance(item, bool) or not isinstance(item, numbers.Real):
                raise ValueError(f"objective {name} is not a number: {item!r}")
            number = float(item)
            if not math.isfinite(number):
                raise ValueError(f"objective {name} is not a finite number: {number!r}")
            out[name] = number
        return out

    def loss_of(self, values: Mapping[str, float]) -> float:
        """The record's loss: the first objective signed for minimisation."""
        first = self.names[0]
        return values[first] if self.directions[0] == MIN else -values[first]

    def oriented(self, values: Mapping[str, float]) -> tuple[float, ...]:
        """The values in declared order, each signed for minimisation."""
        return tuple(s * values[n] for n, s in zip(self.names, self.signs, strict=True))


def several_values_hint(value: Any) -> str | None:
    """The error of an undeclared run whose objective returned several values, else ``None``."""
    if isinstance(value, Mapping) or (isinstance(value, list | tuple) and len(value) > 1):
        what = ", ".join(map(str, value)) if isinstance(value, Mapping) else f"{len(value)} values"
        return (
            f"the objective returned several values ({what}) but the run declares no "
            "objectives: give --objectives name:min,name:max (campaign: evolve.objectives)"
        )
    return None
