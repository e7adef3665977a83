"""A search space: named dimensions in order, an optional constraint, encoding and sampling.

Every conversion between native values and the unit cube ``[0, 1]^d`` goes through it: the
evolutionary propagators mutate log-scaled genes through it, and the Gaussian-process models see
only encoded inputs. Parameter names are the user's: any non-empty string.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from propulate.space.dimensions import (
    Categorical,
    Dimension,
    Integer,
    SpaceError,
    Value,
    make_dimension,
    unknown_key,
)
from propulate.space.loading import _arity, load_callable

#: A configuration: parameter name to value.
Params = dict[str, Value]
#: ``constraint(params) -> bool`` or ``constraint(params, task) -> bool``.
Constraint = Callable[..., bool]


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
        import difflib

        for key in spec:  # a misspelt 'parameters' would be read as a parameter of that name
            if difflib.get_close_matches(str(key), ["parameters"], n=1, cutoff=0.75):
                raise SpaceError(unknown_key(str(key), ("parameters", "constraint")))
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
            out[n] = (
                int(round(float(v)))
                if isinstance(d, Integer)
                else (str(v) if isinstance(d, Categorical) else float(v))
            )
        return out

    def key(self, params: Mapping[str, Value]) -> tuple[Value, ...]:
        """A hashable identity of a configuration, for duplicate detection (the values of
        :meth:`canonical`, computed without building the dict: it runs for every individual).

        Float values are taken as they are (an ``int`` or numpy float equals and hashes like
        the same ``float``); integer and categorical values are cast as :meth:`canonical` does.
        """
        plan = self.__dict__.get("_key_plan")
        if plan is None:
            names = self.names
            getter = operator.itemgetter(*names) if len(names) > 1 else None
            casts = [
                (i, _to_int if isinstance(d, Integer) else str)
                for i, d in enumerate(self.dimensions.values())
                if isinstance(d, Integer | Categorical)
            ]
            plan = self.__dict__["_key_plan"] = (getter, casts, names[0] if names else None)
        getter, casts, first = plan
        values = getter(params) if getter is not None else (params[first],)
        if not casts:
            return values
        out = list(values)
        for i, cast in casts:
            out[i] = cast(out[i])
        return tuple(out)

    # ----------------------------------------------------------------- validity
    def in_bounds(self, params: Mapping[str, Value]) -> bool:
        """Whether every parameter is present and within its dimension."""
        return all(n in params and d.contains(params[n]) for n, d in self.dimensions.items())

    def satisfies(
        self, params: Mapping[str, Value], task: Mapping[str, Value] | None = None
    ) -> bool:
        """Whether the constraint (if any) holds for ``params`` on ``task``."""
        if self.constraint is None:
            return True
        if self._constraint_takes_task:
            return bool(self.constraint(params, task))
        return bool(self.constraint(params))

    def is_valid(
        self, params: Mapping[str, Value], task: Mapping[str, Value] | None = None
    ) -> bool:
        """In bounds and feasible."""
        return self.in_bounds(params) and self.satisfies(params, task)

    # ----------------------------------------------------------------- sampling
    def sample(
        self,
        rng: np.random.Generator,
        task: Mapping[str, Value] | None = None,
        max_tries: int = 10_000,
    ) -> Params:
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
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        out: list[Params] = []
        seen: set[tuple[Value, ...]] = set()
        drawn = feasible = 0
        for _ in range(max_rounds):
            missing = n - len(out)
            # Oversample redraws by the observed constraint rejection rate (capped), so a tight
            # constraint does not exhaust max_rounds drawing one point at a time.
            size = (
                missing
                if feasible == drawn
                else max(
                    missing,
                    min(math.ceil(missing * drawn / max(feasible, 1)), max(1000, 4 * missing)),
                )
            )
            from scipy.stats import qmc  # here: workers that never draw a design skip scipy.stats

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


def _to_int(value: Value) -> int:
    """An integer dimension's value as ``int`` (as :meth:`SearchSpace.canonical` casts it)."""
    return int(round(float(value)))  # type: ignore[arg-type]
