"""What the engine needs of one child: the space's parameters, inside their dimensions, of
their types, condition-consistent, and a JSON-ready state. Each function raises
``AssertionError`` saying what is wrong (the propagator checks name the contract)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from propulate.contracts.runner import require
from propulate.population import Individual
from propulate.space import Categorical, Float, Integer, SearchSpace


def require_names(space: SearchSpace, child: Mapping[str, Any]) -> None:
    """The child sets exactly the space's parameters (conditional space: none it lacks)."""
    if space.conditions:
        unknown = sorted(set(child) - set(space.names))
        require(not unknown, f"offspring sets parameters the space does not have: {unknown}")
    else:
        require(
            set(child) == set(space.names),
            f"offspring must set exactly the space's parameters {sorted(space.names)}, "
            f"got {sorted(child)}",
        )


def require_inside(space: SearchSpace, child: Mapping[str, Any]) -> None:
    """Each value lies within its dimension (and is finite)."""
    for name, value in child.items():
        dim = space.dimensions.get(name)
        if dim is None:
            continue  # check_parameter_names says so
        require(
            dim.contains(value)
            and (not isinstance(value, float | np.floating) or math.isfinite(value)),
            f"offspring parameter {name}={value!r} is outside its dimension {dim!r}",
        )


def require_types(space: SearchSpace, child: Mapping[str, Any]) -> None:
    """Integer values are ``int``, float ones ``float``, categorical ones a choice."""
    for name, value in child.items():
        dim = space.dimensions.get(name)
        kind = type(value).__name__
        if isinstance(dim, Integer):
            require(
                type(value) is int,
                f"offspring parameter {name}={value!r} is a {kind}, Integer parameters must be int",
            )
        elif isinstance(dim, Float):
            require(
                type(value) is float,
                f"offspring parameter {name}={value!r} is a {kind}, Float parameters must be float",
            )
        elif isinstance(dim, Categorical):
            require(
                type(value) is str and value in dim.choices,
                f"offspring parameter {name}={value!r} is a {kind}, Categorical parameters "
                f"must be one of their choices {list(dim.choices)}",
            )


def require_consistent(space: SearchSpace, child: Mapping[str, Any]) -> None:
    """Fail naming what a child of a conditional space misses or holds against its conditions
    (the engine would complete it at random)."""
    if not space.conditions or space.in_bounds(child):
        return
    whole = space.complete(child, lambda _, d: d.decode(0.0))
    missing, extra = sorted(set(whole) - set(child)), sorted(set(child) - set(whole))
    raise AssertionError(
        "offspring must be condition-consistent (every active parameter set, no inactive one): "
        f"missing {missing}, inactive {extra} (SearchSpace.complete repairs a child)"
    )


def require_valid(space: SearchSpace, child: Mapping[str, Any]) -> None:
    """Everything the engine needs of a child: its parameters, inside the space, typed,
    condition-consistent."""
    require_names(space, child)
    require_inside(space, child)
    require_types(space, child)
    require_consistent(space, child)


def require_state(child: Individual) -> None:
    """``child.state`` is ``None`` or a JSON-ready dict that survives a JSON round trip."""
    state = child.state
    if state is None:
        return
    require(isinstance(state, dict), f"Individual.state must be a dict (or None), got {state!r}")
    try:
        text = json.dumps(state, allow_nan=False)
    except (TypeError, ValueError) as err:
        raise AssertionError(f"Individual.state must be JSON-ready: {err}") from None
    require(
        json.loads(text) == state,
        f"Individual.state must survive a JSON round trip unchanged: {state!r} comes back as "
        f"{json.loads(text)!r}",
    )
