"""Parameter and task spaces: typed dimensions, unit-cube encoding, constraints, sampling.

A space is an ordered mapping from names to dimensions:

* :class:`Float` -- a continuous interval, optionally log-scaled;
* :class:`Integer` -- an inclusive integer range, optionally log-scaled;
* :class:`Categorical` -- a finite set of string choices.

Propulate 1.2 style ``limits`` (``(float, float)``, ``(int, int)``, ``(str, ...)``) convert with
:meth:`SearchSpace.from_limits`. Every conversion between native values and the unit cube
``[0, 1]^d`` lives in this module: the evolutionary propagators mutate log-scaled genes through
it, and the Gaussian-process models see only encoded inputs.

Encoding rules (``u`` in ``[0, 1]``):

* float: ``u = (v - low) / (high - low)``, or the same on ``log(v)``;
* integer: the range ``[low - 0.5, high + 0.5]`` is mapped to ``[0, 1]`` so each integer owns an
  equal share of the cube (log scale: ``[log(low - 0.5), log(high + 0.5)]``); decoding rounds;
* categorical: choice ``i`` of ``k`` encodes to the centre of its cell, ``(i + 0.5) / k``.
"""

from __future__ import annotations

import importlib
import inspect
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from propulate.record import META_COLUMNS

Value = float | int | str
Params = dict[str, Value]
Constraint = Callable[..., bool]

#: Names used by the evaluation log for its own columns; parameters may not take them.
RESERVED_NAMES = frozenset(META_COLUMNS) | {"worker", "origin", "kind"}


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

    def _ends(self) -> tuple[float, float]:
        if self.log:
            return math.log(self.low), math.log(self.high)
        return float(self.low), float(self.high)

    def encode(self, value: Value) -> float:
        """Map a value to ``[0, 1]``."""
        a, b = self._ends()
        v = math.log(float(value)) if self.log else float(value)
        return (v - a) / (b - a)

    def decode(self, u: float) -> float:
        """Map ``u`` in ``[0, 1]`` (clipped) to a value in ``[low, high]``."""
        a, b = self._ends()
        v = a + min(max(u, 0.0), 1.0) * (b - a)
        v = math.exp(v) if self.log else v
        return min(max(v, self.low), self.high)

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


def load_callable(ref: str) -> Callable[..., Any]:
    """Import ``"package.module:function"`` (or a dotted ``"package.module.function"``).

    Raises
    ------
    ImportError
        With a message naming the reference when the module or attribute is missing.
    """
    if ":" in ref:
        module_name, _, attr = ref.partition(":")
    else:
        module_name, _, attr = ref.rpartition(".")
    if not module_name or not attr:
        raise ImportError(f"{ref!r} is not of the form 'module:function'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise ImportError(f"cannot import module {module_name!r} of {ref!r}: {err}") from err
    obj: Any = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ImportError(f"module {module_name!r} has no attribute {attr!r}") from None
    if not callable(obj):
        raise ImportError(f"{ref!r} is not callable")
    return obj


def _arity(fn: Callable[..., Any]) -> int:
    """Number of positional parameters ``fn`` accepts (2 when it takes ``*args``)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return 1
    n = 0
    for p in sig.parameters.values():
        if p.kind is inspect.Parameter.VAR_POSITIONAL:
            return 2
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
            n += 1
    return n


class SearchSpace:
    """An ordered set of named dimensions with an optional constraint.

    Parameters
    ----------
    dimensions : mapping of str to dimension specification
        Names to :class:`Float`, :class:`Integer`, :class:`Categorical` or anything
        :func:`make_dimension` accepts. Order is kept: it is the order of encoded vectors.
    constraint : callable, optional
        ``constraint(params) -> bool`` or ``constraint(params, task) -> bool``; a configuration
        is feasible when it returns true. A ``"module:function"`` string is imported.
    """

    def __init__(
        self,
        dimensions: Mapping[str, Any],
        constraint: Constraint | str | None = None,
    ) -> None:
        if not dimensions:
            raise SpaceError("the space is empty: define at least one parameter")
        self.dimensions: dict[str, Dimension] = {}
        for name, spec in dimensions.items():
            if not isinstance(name, str) or not name:
                raise SpaceError(f"parameter names must be non-empty strings, got {name!r}")
            if name in RESERVED_NAMES:
                raise SpaceError(f"parameter name {name!r} is reserved for the evaluation log")
            self.dimensions[name] = make_dimension(spec, name)
        self.names: tuple[str, ...] = tuple(self.dimensions)
        self.constraint_ref = constraint if isinstance(constraint, str) else None
        self.constraint: Constraint | None = (
            load_callable(constraint) if isinstance(constraint, str) else constraint
        )
        self._constraint_takes_task = self.constraint is not None and _arity(self.constraint) >= 2

    # ----------------------------------------------------------------- construction
    @classmethod
    def from_limits(cls, limits: Mapping[str, Any] | SearchSpace) -> SearchSpace:
        """Accept a Propulate-1.2 ``limits`` dict (or return a space unchanged)."""
        if isinstance(limits, SearchSpace):
            return limits
        return cls(limits)

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any]) -> SearchSpace:
        """Build from ``{"parameters": {...}, "constraint": "module:function"}``.

        A mapping without a ``parameters`` key is read as the parameters themselves.
        """
        if "parameters" in spec:
            params = spec["parameters"]
            if not isinstance(params, Mapping):
                raise SpaceError("'parameters' must be a mapping of name to specification")
            return cls(params, spec.get("constraint"))
        return cls(spec)

    @classmethod
    def from_yaml(cls, path: str | Path) -> SearchSpace:
        """Read a space from a YAML (or JSON) file; see :meth:`from_dict`."""
        import yaml

        with open(path) as fh:
            try:
                spec = yaml.safe_load(fh)
            except yaml.YAMLError as err:
                raise SpaceError(f"{path}: not valid YAML: {err}") from None
        if not isinstance(spec, Mapping):
            raise SpaceError(f"{path}: expected a mapping of parameters")
        return cls.from_dict(spec)

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly description (round-trips through :meth:`from_dict`)."""
        out: dict[str, Any] = {"parameters": {n: d.to_dict() for n, d in self.dimensions.items()}}
        if self.constraint_ref:
            out["constraint"] = self.constraint_ref
        return out

    @property
    def limits(self) -> dict[str, tuple[Any, ...]]:
        """Propulate-1.2 style limits (log scale is not expressible there and is dropped)."""
        out: dict[str, tuple[Any, ...]] = {}
        for n, d in self.dimensions.items():
            if isinstance(d, Categorical):
                out[n] = d.choices
            elif isinstance(d, Integer):
                out[n] = (int(d.low), int(d.high))
            else:
                out[n] = (float(d.low), float(d.high))
        return out

    def __len__(self) -> int:
        return len(self.names)

    def __iter__(self):  # noqa: ANN204 - iterator of names, like a mapping
        return iter(self.names)

    def __getitem__(self, name: str) -> Dimension:
        return self.dimensions[name]

    def __repr__(self) -> str:
        return f"SearchSpace({self.dimensions!r})"

    @property
    def dim(self) -> int:
        """Number of dimensions."""
        return len(self.names)

    # ----------------------------------------------------------------- encoding
    def encode(self, params: Mapping[str, Value]) -> np.ndarray:
        """Map one configuration to a vector in ``[0, 1]^d`` (order of :attr:`names`)."""
        return np.array([d.encode(params[n]) for n, d in self.dimensions.items()], dtype=float)

    def decode(self, u: Sequence[float] | np.ndarray) -> Params:
        """Map a vector in ``[0, 1]^d`` (clipped) to a valid configuration."""
        return {n: d.decode(float(x)) for (n, d), x in zip(self.dimensions.items(), u, strict=True)}

    def encode_many(self, rows: Iterable[Mapping[str, Value]]) -> np.ndarray:
        """Encode several configurations into an ``(n, d)`` array."""
        arr = [self.encode(r) for r in rows]
        return np.array(arr, dtype=float).reshape(len(arr), self.dim)

    def decode_many(self, u: np.ndarray) -> list[Params]:
        """Decode the rows of an ``(n, d)`` array."""
        return [self.decode(row) for row in np.atleast_2d(u)]

    def canonical(self, params: Mapping[str, Value]) -> Params:
        """The configuration with each value cast to its dimension's type (ints, strings)."""
        out: Params = {}
        for n, d in self.dimensions.items():
            v = params[n]
            out[n] = int(round(float(v))) if isinstance(d, Integer) else (
                str(v) if isinstance(d, Categorical) else float(v)
            )
        return out

    def key(self, params: Mapping[str, Value]) -> tuple[Value, ...]:
        """A hashable identity of a configuration, for duplicate detection."""
        return tuple(self.canonical(params).values())

    # ----------------------------------------------------------------- validity
    def in_bounds(self, params: Mapping[str, Value]) -> bool:
        """Whether every parameter is present and within its dimension."""
        return all(n in params and d.contains(params[n]) for n, d in self.dimensions.items())

    def satisfies(self, params: Mapping[str, Value], task: Mapping[str, Value] | None = None) -> bool:
        """Whether the constraint (if any) holds for ``params`` on ``task``."""
        if self.constraint is None:
            return True
        if self._constraint_takes_task:
            return bool(self.constraint(params, task))
        return bool(self.constraint(params))

    def is_valid(self, params: Mapping[str, Value], task: Mapping[str, Value] | None = None) -> bool:
        """In bounds and feasible."""
        return self.in_bounds(params) and self.satisfies(params, task)

    # ----------------------------------------------------------------- sampling
    def sample(self, rng: np.random.Generator, task: Mapping[str, Value] | None = None,
               max_tries: int = 10_000) -> Params:
        """One configuration drawn uniformly (in encoded space) among the feasible ones."""
        for _ in range(max_tries):
            params = self.decode(rng.random(self.dim))
            if self.satisfies(params, task):
                return params
        raise SpaceError(f"no feasible configuration found in {max_tries} random draws")

    def latin_hypercube(
        self,
        n: int,
        seed: int | np.random.Generator | None = None,
        task: Mapping[str, Value] | None = None,
        max_rounds: int = 100,
    ) -> list[Params]:
        """``n`` configurations from a Latin hypercube, infeasible points redrawn.

        The first round is one Latin hypercube of ``n`` points; points that violate the
        constraint are replaced by points of fresh hypercubes of the missing size, so the design
        stays space-filling when few points are rejected.

        Parameters
        ----------
        n : int
            Number of configurations.
        seed : int or numpy Generator, optional
            Seed of the designs (reproducible for a given seed).
        task : mapping, optional
            The task handed to a task-dependent constraint.
        max_rounds : int
            Give up (``SpaceError``) when this many redraw rounds leave points missing.
        """
        if n <= 0:
            return []
        from scipy.stats import qmc  # here, not at the top: scipy.stats is slow to import

        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        out: list[Params] = []
        seen: set[tuple[Value, ...]] = set()
        drawn = feasible = 0
        for _ in range(max_rounds):
            missing = n - len(out)
            # Oversample redraws by the observed constraint rejection rate (capped), so a tight
            # constraint does not exhaust max_rounds drawing one point at a time.
            size = missing if feasible == drawn else max(missing, min(
                math.ceil(missing * drawn / max(feasible, 1)), max(1000, 4 * missing)
            ))
            sampler = qmc.LatinHypercube(d=self.dim, seed=rng)
            for row in sampler.random(size):
                params = self.decode(row)
                k = self.key(params)
                drawn += 1
                if not self.satisfies(params, task):
                    continue
                feasible += 1
                if k not in seen:
                    seen.add(k)
                    out.append(params)
                    if len(out) == n:
                        return out
        if out:
            # Small discrete spaces may hold fewer than n distinct feasible points.
            return out
        raise SpaceError(f"no feasible configuration found in {max_rounds} Latin hypercubes")


def as_space(limits: Mapping[str, Any] | SearchSpace) -> SearchSpace:
    """Shorthand for :meth:`SearchSpace.from_limits`."""
    return SearchSpace.from_limits(limits)
