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
of a run, the single-objective propagators) ranks by the first objective (emigrants are
chosen by Pareto rank and crowding, :mod:`propulate.engine.migration`).

Weights (``--weights runtime=1,energy=0.01``, a campaign's ``evolve.weights``) make the loss the
weighted sum of the objectives instead, each in natural units and signed for minimisation:
``sum(w_i * s_i * v_i)`` with ``s_i = -1`` for a maximised one. That one number is what the
stages that model a single loss (MLA, TLA, the baselines' measurements) and the
single-objective propagators minimise; the records keep every objective's value. The canonical
form with weights is ``"runtime:min:1,energy:min:0.01"``.
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
    weights: tuple[float, ...] | None = None

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
        if self.weights is not None:
            if len(self.weights) != len(self.names):
                raise ValueError("objectives: one weight per objective, or none")
            for name, weight in zip(self.names, self.weights, strict=True):
                if not math.isfinite(weight) or weight < 0:
                    raise ValueError(
                        f"objective {name}: weight must be a finite number >= 0, got {weight!r} "
                        "(the direction, min or max, gives the sign)"
                    )
            if not any(self.weights):
                raise ValueError("objectives: at least one weight must be > 0")

    @classmethod
    def parse(
        cls,
        spec: str | Mapping[str, Any] | Objectives,
        weights: str | Mapping[str, Any] | None = None,
    ) -> Objectives:
        """From ``"a:min,b:max"`` (a name alone is minimised; ``"a:min:1,b:max:0.5"`` with
        weights) or a mapping ``{a: min, b: max}``, with optional ``weights``
        (``"a=1,b=0.5"`` or ``{a: 1, b: 0.5}``, one per objective)."""
        if isinstance(spec, Objectives):
            declared = spec
        elif isinstance(spec, Mapping):
            items = [(str(k), "" if v is None else str(v).strip().lower()) for k, v in spec.items()]
            declared = cls(tuple(n for n, _ in items), tuple(d or MIN for _, d in items))
        elif isinstance(spec, str):
            declared = cls._from_text(spec)
        else:
            raise ValueError(f"objectives must be 'name:min,name:max' or a mapping, got {spec!r}")
        return declared if weights is None else declared.weighted(weights)

    @classmethod
    def _from_text(cls, spec: str) -> Objectives:
        """From ``"a:min,b:max"`` or ``"a:min:1,b:max:0.5"``."""
        names, directions, weights = [], [], []
        for part in spec.split(","):
            name, direction, weight, *extra = [*part.strip().split(":"), "", ""]
            if any(extra):
                raise ValueError(
                    f"objective {part.strip()!r}: write NAME, NAME:DIR or NAME:DIR:WEIGHT"
                )
            names.append(name.strip())
            directions.append(direction.strip().lower() or MIN)
            weights.append(weight.strip())
        if not any(weights):
            return cls(tuple(names), tuple(directions))
        if not all(weights):
            raise ValueError(
                "objectives: give a weight to every objective (NAME:DIR:WEIGHT) or none"
            )
        return cls(
            tuple(names),
            tuple(directions),
            tuple(_number(w, n) for w, n in zip(weights, names, strict=True)),
        )

    def weighted(self, weights: str | Mapping[str, Any]) -> Objectives:
        """These objectives with ``weights``, ``"a=1,b=0.5"`` or ``{a: 1, b: 0.5}``.

        Raises
        ------
        ValueError
            For an unknown objective's weight, a missing one, or a weight that is not a
            number >= 0.
        """
        if isinstance(weights, str):
            pairs = [part.partition("=") for part in weights.split(",") if part.strip()]
            if any(not sep for _, sep, _ in pairs):
                raise ValueError(
                    f"weights {weights!r}: write NAME=WEIGHT,... (e.g. runtime=1,energy=0.01)"
                )
            given = {k.strip(): v.strip() for k, _, v in pairs}
        elif isinstance(weights, Mapping):
            given = {str(k): v for k, v in weights.items()}
        else:
            raise ValueError(f"weights must be 'name=w,...' or a mapping, got {weights!r}")
        unknown = sorted(set(given) - set(self.names))
        if unknown:
            raise ValueError(
                f"weights: unknown objective(s) {', '.join(unknown)}; declared: {', '.join(self.names)}"
            )
        missing = [n for n in self.names if n not in given]
        if missing:
            raise ValueError(
                f"weights: give one for every objective (missing: {', '.join(missing)})"
            )
        values = tuple(_number(given[n], n) for n in self.names)
        return Objectives(self.names, self.directions, values)

    @classmethod
    def maybe(cls, spec: str | Mapping[str, Any] | Objectives | None) -> Objectives | None:
        """:meth:`parse`, or ``None`` for ``None`` (no declaration)."""
        return None if spec is None else cls.parse(spec)

    def text(self) -> str:
        """The canonical command-line form, ``"a:min,b:max"`` (``"a:min:1,b:max:0.5"`` with
        weights)."""
        if self.weights is None:
            return ",".join(f"{n}:{d}" for n, d in zip(self.names, self.directions, strict=True))
        return ",".join(
            f"{n}:{d}:{_weight_text(w)}"
            for n, d, w in zip(self.names, self.directions, self.weights, strict=True)
        )

    def weights_text(self) -> str | None:
        """The weights as ``"a=1,b=0.5"`` (``None`` without weights)."""
        if self.weights is None:
            return None
        return ",".join(
            f"{n}={_weight_text(w)}" for n, w in zip(self.names, self.weights, strict=True)
        )

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

    @property
    def scalar(self) -> bool:
        """Whether one loss to minimise stands for these objectives in the stages that model
        one (MLA, TLA, the baselines): a single objective (maximised ones negated), or weights."""
        return self.weights is not None or not self.several

    def loss_of(self, values: Mapping[str, float]) -> float:
        """The record's loss: the first objective signed for minimisation, or with weights
        their weighted sum (each signed for minimisation)."""
        if self.weights is not None:
            return math.fsum(
                w * s * values[n]
                for n, s, w in zip(self.names, self.signs, self.weights, strict=True)
            )
        first = self.names[0]
        return values[first] if self.directions[0] == MIN else -values[first]

    def oriented(self, values: Mapping[str, float]) -> tuple[float, ...]:
        """The values in declared order, each signed for minimisation."""
        return tuple(s * values[n] for n, s in zip(self.names, self.signs, strict=True))


def _number(value: Any, name: str) -> float:
    """A weight as a float, or ``ValueError`` naming its objective."""
    try:
        if isinstance(value, bool):
            raise ValueError
        return float(value)
    except (TypeError, ValueError):
        raise ValueError(f"objective {name}: weight is not a number: {value!r}") from None


def _weight_text(weight: float) -> str:
    """A weight written short (``1``, ``0.5``) but exactly: the canonical form carries it to
    every stage, so it must read back as the same number."""
    text = f"{weight:g}"
    return text if float(text) == weight else repr(weight)


#: What the error of :func:`several_values_hint` says: a mistake in the run's declaration, not
#: a failed evaluation, so the run stops at the first such result
#: (:class:`propulate.engine.failures.FailureRule`).
UNDECLARED = "but the run declares no objectives"


def several_values_hint(value: Any) -> str | None:
    """The error of an undeclared run whose objective returned several values, else ``None``."""
    if isinstance(value, Mapping) or (isinstance(value, list | tuple) and len(value) > 1):
        what = ", ".join(map(str, value)) if isinstance(value, Mapping) else f"{len(value)} values"
        return (
            f"the objective returned several values ({what}) {UNDECLARED}: give "
            "--objectives name:min,name:max (campaign: evolve.objectives)"
        )
    return None
