"""A search space: named dimensions in order, an optional constraint, conditional parameters and
forbidden combinations (:mod:`propulate.space.conditions`), encoding and sampling.

Every conversion between native values and the unit cube ``[0, 1]^d`` goes through it: the
evolutionary propagators mutate log-scaled genes through it, and the Gaussian-process models see
only encoded inputs. Parameter names are the user's: any non-empty string.

A space without conditions takes the same code paths as before conditions existed (every test on
them is one attribute check). In a conditional space a configuration holds its active parameters
only; :meth:`SearchSpace.encode` writes :data:`INACTIVE` for an inactive one.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from propulate.space.conditions import (
    Condition,
    Forbidden,
    activate,
    complete,
    consistent,
    parse_conditions,
    topological_order,
)
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
#: The encoded value of an inactive parameter: outside ``[0, 1]``, so a model tells it apart
#: from every active value (decoding clips it to the low end, and the parameter is dropped).
INACTIVE = -0.5


class SearchSpace:
    """An ordered set of named dimensions with an optional constraint.

    Parameters
    ----------
    dimensions : mapping of str to dimension specification
        Names to :class:`Float`, :class:`Integer`, :class:`Categorical` or anything
        :func:`make_dimension` accepts. Order is kept: it is the order of encoded vectors.
    constraint : callable, optional
        ``constraint(params) -> bool`` or ``constraint(params, task) -> bool``; a configuration
        is feasible when it returns true. A ``"module:function"`` string is imported. In a
        conditional space it receives the active parameters only.
    conditions : mapping, optional
        Parameter name to its ``when`` mapping (``{"optimizer": ["sgd"]}``, ``{"layers": ">= 3"}``)
        or :class:`~propulate.space.conditions.Condition`; a ``when`` key inside a parameter's
        mapping specification does the same.
    forbidden : sequence of str, optional
        Forbidden clauses (``"tx * ty >= 1024"``): a configuration satisfying one is infeasible.
    """

    def __init__(
        self,
        dimensions: Mapping[str, Any],
        constraint: Constraint | str | None = None,
        conditions: Mapping[str, Any] | None = None,
        forbidden: Sequence[str] | None = None,
    ) -> None:
        if not dimensions:
            raise SpaceError("the space is empty: define at least one parameter")
        self.dimensions: dict[str, Dimension] = {}
        when: dict[str, Any] = dict(conditions or {})
        for name, spec in dimensions.items():
            if not isinstance(name, str) or not name:
                raise SpaceError(f"parameter names must be non-empty strings, got {name!r}")
            if isinstance(spec, Mapping) and "when" in spec:
                when[name] = spec["when"]
                spec = {k: v for k, v in spec.items() if k != "when"}
            self.dimensions[name] = make_dimension(spec, name)
        self.names: tuple[str, ...] = tuple(self.dimensions)
        unknown = [n for n in when if n not in self.dimensions]
        if unknown:
            raise SpaceError(f"condition on unknown parameter {unknown[0]!r}")
        #: Parameter name to the condition under which it is active (empty: unconditional).
        self.conditions: dict[str, Condition] = parse_conditions(when, self.dimensions)
        #: The names with every condition's parents before the parameter (:attr:`names` when
        #: the space is unconditional and declares parents first).
        self.order = tuple(topological_order(self.names, self.conditions))
        if isinstance(forbidden, str):
            forbidden = [forbidden]
        #: The forbidden clauses.
        self.forbidden: tuple[Forbidden, ...] = tuple(
            f if isinstance(f, Forbidden) else Forbidden(f, self.names) for f in forbidden or ()
        )
        self.constraint_ref = constraint if isinstance(constraint, str) else None
        self.constraint: Constraint | None = (
            load_callable(constraint) if isinstance(constraint, str) else constraint
        )
        self._constraint_takes_task = self.constraint is not None and _arity(self.constraint) >= 2
        #: Whether any configuration can be infeasible (a constraint or a forbidden clause).
        self.constrained = self.constraint is not None or bool(self.forbidden)

    # ----------------------------------------------------------------- construction
    @classmethod
    def from_limits(cls, limits: Mapping[str, Any] | SearchSpace) -> SearchSpace:
        """Accept a Propulate-1.2 ``limits`` dict (or return a space unchanged)."""
        if isinstance(limits, SearchSpace):
            return limits
        return cls(limits)

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any]) -> SearchSpace:
        """Build from ``{"parameters": {...}, "constraint": "module:function", "forbidden":
        [...]}`` (a parameter's mapping may carry ``when``).

        A mapping without a ``parameters`` key is read as the parameters themselves.
        """
        if "parameters" in spec:
            params = spec["parameters"]
            if not isinstance(params, Mapping):
                raise SpaceError("'parameters' must be a mapping of name to specification")
            forbidden = spec.get("forbidden")
            if forbidden is not None and not isinstance(forbidden, str | list | tuple):
                raise SpaceError("'forbidden' must be a list of expressions")
            return cls(params, spec.get("constraint"), forbidden=forbidden)
        import difflib

        for key in spec:  # a misspelt 'parameters' would be read as a parameter of that name
            if difflib.get_close_matches(str(key), ["parameters"], n=1, cutoff=0.75):
                raise SpaceError(unknown_key(str(key), ("parameters", "constraint", "forbidden")))
        return cls(spec)

    @classmethod
    def from_yaml(cls, path: str | Path) -> SearchSpace:
        """Read a space from a YAML (or JSON) file; see :meth:`from_dict`
        (:func:`propulate.space.configspace.read_space_file` also reads ConfigSpace JSON)."""
        import yaml

        with open(path) as fh:
            try:
                spec = yaml.safe_load(fh)
            except yaml.YAMLError as err:
                raise SpaceError(f"{path}: not valid YAML: {err}") from None
        if not isinstance(spec, Mapping):
            raise SpaceError(f"{path}: expected a mapping of parameters")
        if "hyperparameters" in spec and "parameters" not in spec:
            raise SpaceError(
                f"{path} is ConfigSpace JSON: convert it with `propulate space {path} "
                "--from-configspace --out space.yaml`"
            )
        return cls.from_dict(spec)

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly description (round-trips through :meth:`from_dict`)."""
        params = {n: d.to_dict() for n, d in self.dimensions.items()}
        for n, cond in self.conditions.items():
            params[n]["when"] = cond.to_spec()
        out: dict[str, Any] = {"parameters": params}
        if self.forbidden:
            out["forbidden"] = [f.expression for f in self.forbidden]
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
        """Map one configuration to a vector in ``[0, 1]^d`` (order of :attr:`names`); an
        inactive parameter of a conditional space (absent or not) encodes to :data:`INACTIVE`."""
        if self.conditions:
            act = self.active(params)
            return np.array(
                [d.encode(act[n]) if n in act else INACTIVE for n, d in self.dimensions.items()],
                dtype=float,
            )
        return np.array([d.encode(params[n]) for n, d in self.dimensions.items()], dtype=float)

    def decode(self, u: Sequence[float] | np.ndarray) -> Params:
        """Map a vector in ``[0, 1]^d`` (clipped) to a valid configuration (in a conditional
        space, its active parameters)."""
        out = {n: d.decode(float(x)) for (n, d), x in zip(self.dimensions.items(), u, strict=True)}
        return self.active(out) if self.conditions else out

    # ----------------------------------------------------------------- conditions
    def active(self, params: Mapping[str, Value]) -> Params:
        """The active parameters of ``params`` in the space's order (inactive and unknown
        names dropped); ``dict(params)`` in an unconditional space."""
        if not self.conditions:
            return {n: params[n] for n in self.names if n in params}
        act = activate(params, self.order, self.conditions)
        return {n: act[n] for n in self.names if n in act}

    def complete(
        self, params: Mapping[str, Value], fill: Callable[[str, Dimension], Value]
    ) -> Params:
        """The condition-consistent configuration nearest ``params``: active parameters keep
        their value where ``params`` holds a valid one, the others get ``fill(name, dim)``;
        inactive ones are dropped. In the space's order."""
        out = complete(params, self.order, self.dimensions, self.conditions, fill)
        return {n: out[n] for n in self.names if n in out}

    def is_active(self, name: str, params: Mapping[str, Value]) -> bool:
        """Whether parameter ``name`` is active in ``params``."""
        return name in self.active(params) if self.conditions else True

    def encode_many(self, rows: Iterable[Mapping[str, Value]]) -> np.ndarray:
        """Encode several configurations into an ``(n, d)`` array."""
        arr = [self.encode(r) for r in rows]
        return np.array(arr, dtype=float).reshape(len(arr), self.dim)

    def decode_many(self, u: np.ndarray) -> list[Params]:
        """Decode the rows of an ``(n, d)`` array."""
        return [self.decode(row) for row in np.atleast_2d(u)]

    def canonical(self, params: Mapping[str, Value]) -> Params:
        """The configuration with each value cast to its dimension's type (ints, strings); in a
        conditional space, its active parameters only."""
        out: Params = {}
        if self.conditions:
            params = self.active(params)
        for n, d in self.dimensions.items():
            if n not in params and self.conditions:
                continue
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
        if self.conditions:  # the active values, None for an inactive parameter
            act = self.active(params)
            return tuple(_cast(d, act[n]) if n in act else None for n, d in self.dimensions.items())
        getter, casts, first = self._key_plan
        values = getter(params) if getter is not None else (params[first],)
        if not casts:
            return values
        out = list(values)
        for i, cast in casts:
            out[i] = cast(out[i])
        return tuple(out)

    @functools.cached_property
    def _key_plan(
        self,
    ) -> tuple[Callable[[Mapping[str, Value]], Any] | None, list[Any], str | None]:
        """How :meth:`key` reads an unconditional space's configuration (made once): an item
        getter of the values in order (None for one parameter), the casts by position, the
        first name."""
        names = self.names
        getter = operator.itemgetter(*names) if len(names) > 1 else None
        casts = [
            (i, _to_int if isinstance(d, Integer) else str)
            for i, d in enumerate(self.dimensions.values())
            if isinstance(d, Integer | Categorical)
        ]
        return getter, casts, names[0] if names else None

    def key_function(self) -> Callable[[Mapping[str, Value]], tuple[Value, ...]]:
        """:meth:`key` as the cheapest callable giving it, for code that keys every
        configuration it meets (the engine keys two per evaluation): in a space of several
        parameters, none conditional and all of them floats, the item getter of their values."""
        if not self.conditions:
            getter, casts, _ = self._key_plan
            if getter is not None and not casts:
                return getter  # type: ignore[no-any-return]
        return self.key

    # ----------------------------------------------------------------- validity
    def in_bounds(self, params: Mapping[str, Value]) -> bool:
        """Whether every parameter is present and within its dimension (in a conditional space:
        every active parameter, and no inactive one is present)."""
        if self.conditions:
            return consistent(params, self.order, self.dimensions, self.conditions)
        return all(n in params and d.contains(params[n]) for n, d in self.dimensions.items())

    def satisfies(
        self, params: Mapping[str, Value], task: Mapping[str, Value] | None = None
    ) -> bool:
        """Whether no forbidden clause holds and the constraint (if any) does for ``params``
        on ``task``."""
        for clause in self.forbidden:
            if clause.forbids(params):
                return False
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
        raise SpaceError(
            f"no feasible configuration found in {max_tries} random draws: the constraint or "
            "forbidden clauses exclude (almost) the whole space"
        )

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
        from propulate.space.design import latin_hypercube

        return latin_hypercube(self, n, seed, task, max_rounds)


def as_space(limits: Mapping[str, Any] | SearchSpace) -> SearchSpace:
    """Shorthand for :meth:`SearchSpace.from_limits`."""
    return SearchSpace.from_limits(limits)


def _cast(dim: Dimension, value: Value) -> Value:
    """A value cast as :meth:`SearchSpace.key` casts it."""
    return (
        _to_int(value)
        if isinstance(dim, Integer)
        else str(value)
        if isinstance(dim, Categorical)
        else value
    )


def _to_int(value: Value) -> int:
    """An integer dimension's value as ``int`` (as :meth:`SearchSpace.canonical` casts it)."""
    return int(round(float(value)))  # type: ignore[arg-type]
