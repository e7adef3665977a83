"""Encoding of :mod:`propulate.space`: each dimension and whole spaces to and from the unit
cube (round trips, integer and categorical cells, log scales, clipping of any input).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from propulate.space import Categorical, Float, Integer, SearchSpace
from tests.space_utils import (
    SETTINGS,
    any_dims,
    any_u,
    cat_dims,
    float_dims,
    int_dims,
    spaces,
    unit,
)


def _cell(dim: Integer | Categorical, value: Any) -> tuple[float, float]:
    """The interval of the unit cube that decodes to ``value``."""
    if isinstance(dim, Categorical):
        k = len(dim.choices)
        i = dim.choices.index(value)
        return i / k, (i + 1) / k
    a, b = dim._ends()
    if dim.log:
        lo, hi = math.log(value - 0.5), math.log(value + 0.5)
    else:
        lo, hi = value - 0.5, value + 0.5
    return (lo - a) / (b - a), (hi - a) / (b - a)


def _value_strategy(dim: Float | Integer | Categorical) -> st.SearchStrategy[Any]:
    if isinstance(dim, Categorical):
        return st.sampled_from(dim.choices)
    if isinstance(dim, Integer):
        return st.integers(dim.low, dim.high)
    return st.floats(dim.low, dim.high)


# --------------------------------------------------------------------------- round trips
@SETTINGS
@given(dim=float_dims(), data=st.data())
def test_float_decode_encode_round_trip(dim: Float, data: st.DataObject) -> None:
    v = data.draw(_value_strategy(dim))
    u = dim.encode(v)
    assert -1e-12 <= u <= 1 + 1e-12
    back = dim.decode(u)
    assert isinstance(back, float)
    assert dim.low <= back <= dim.high
    if dim.log:
        assert math.log(back) == pytest.approx(math.log(v), abs=1e-9 * math.log(dim.high / dim.low))
    else:
        assert back == pytest.approx(v, rel=1e-9, abs=1e-9 * (dim.high - dim.low))


@SETTINGS
@given(dim=st.one_of(int_dims(), cat_dims), data=st.data())
def test_discrete_decode_encode_is_exact(dim: Integer | Categorical, data: st.DataObject) -> None:
    v = data.draw(_value_strategy(dim))
    u = dim.encode(v)
    assert 0.0 < u < 1.0
    back = dim.decode(u)
    assert back == v
    assert type(back) is type(v)
    lo, hi = _cell(dim, v)
    assert lo <= u <= hi


@SETTINGS
@given(dim=st.one_of(int_dims(), cat_dims), u=unit)
def test_encode_of_decode_lands_in_the_same_cell(dim: Integer | Categorical, u: float) -> None:
    v = dim.decode(u)
    lo, hi = _cell(dim, v)
    eps = 1e-9
    assert lo - eps <= u <= hi + eps  # u decodes to the integer/choice owning its cell
    u2 = dim.encode(v)
    assert lo <= u2 <= hi
    assert dim.decode(u2) == v


def test_categorical_encodes_to_cell_centres() -> None:
    dim = Categorical(("a", "b", "c", "d"))
    assert [dim.encode(c) for c in "abcd"] == [0.125, 0.375, 0.625, 0.875]
    assert [dim.decode(u) for u in (0.0, 0.2499, 0.25, 0.5, 0.99, 1.0)] == list("aabcdd")


def test_integer_cells_are_equal_on_linear_scale() -> None:
    dim = Integer(0, 3)
    assert [dim.encode(i) for i in range(4)] == pytest.approx([0.125, 0.375, 0.625, 0.875])
    counts = np.bincount([dim.decode(u) for u in np.linspace(0, 1, 4001)[1:-1]], minlength=4)
    assert counts.min() >= 990 and counts.max() <= 1010


def test_log_integer_favours_small_values() -> None:
    dim = Integer(1, 1000, log=True)
    draws = [dim.decode(u) for u in np.linspace(0, 1, 1001)]
    # On a log scale each decade holds about a third of the cube.
    assert 250 <= sum(d < 10 for d in draws) <= 420
    assert 250 <= sum(10 <= d < 100 for d in draws) <= 420


def test_log_float_encoding_is_logarithmic() -> None:
    dim = Float(1e-4, 1.0, log=True)
    assert dim.encode(1e-2) == pytest.approx(0.5)
    assert dim.decode(0.25) == pytest.approx(1e-3)
    assert dim.decode(0.0) == pytest.approx(1e-4) and dim.decode(1.0) == pytest.approx(1.0)


@SETTINGS
@given(dim=any_dims, u=any_u)
def test_decode_of_any_u_is_in_bounds(dim: Float | Integer | Categorical, u: float) -> None:
    v = dim.decode(u)
    assert dim.contains(v)
    if isinstance(dim, Integer):
        assert type(v) is int
    if not 0.0 <= u <= 1.0:  # clipped to the nearest end
        assert v == dim.decode(0.0 if u < 0 else 1.0)


@pytest.mark.parametrize("u", [float("inf"), -float("inf"), 1e308, -1e308, 1.5, -0.5])
@pytest.mark.parametrize(
    "dim",
    [
        Float(-1.0, 2.0),
        Float(1e-3, 10.0, log=True),
        Integer(-3, 7),
        Integer(1, 900, log=True),
        Categorical(("a", "b", "c")),
        Categorical(("only",)),
    ],
)
def test_decode_clips_extreme_u(dim: Float | Integer | Categorical, u: float) -> None:
    assert dim.decode(u) == dim.decode(1.0 if u > 0 else 0.0)
    assert dim.contains(dim.decode(u))


@SETTINGS
@given(space=spaces(), data=st.data())
def test_space_encode_decode_round_trip(space: SearchSpace, data: st.DataObject) -> None:
    params = {n: data.draw(_value_strategy(d)) for n, d in space.dimensions.items()}
    u = space.encode(params)
    assert u.shape == (space.dim,)
    back = space.decode(u)
    assert list(back) == list(space.names)
    assert space.in_bounds(back)
    for n, d in space.dimensions.items():
        if isinstance(d, Float):
            assert back[n] == pytest.approx(params[n], rel=1e-8, abs=1e-8 * (d.high - d.low))
        else:
            assert back[n] == params[n]


@SETTINGS
@given(space=spaces(), data=st.data())
def test_space_decode_of_any_vector_is_valid(space: SearchSpace, data: st.DataObject) -> None:
    u = data.draw(st.lists(any_u, min_size=space.dim, max_size=space.dim))
    params = space.decode(u)
    assert space.in_bounds(params)
    assert space.is_valid(params)
    with pytest.raises(ValueError):
        space.decode(list(u) + [0.5])  # wrong length


def test_encode_many_and_decode_many_shapes() -> None:
    space = SearchSpace({"x": (0.0, 1.0), "n": (1, 4), "c": ("a", "b")})
    rows = [{"x": 0.5, "n": 2, "c": "b"}, {"x": 0.0, "n": 4, "c": "a"}]
    arr = space.encode_many(rows)
    assert arr.shape == (2, 3)
    assert space.decode_many(arr) == rows
    assert space.encode_many([]).shape == (0, 3)
    assert space.decode_many(np.array([0.5, 0.5, 0.5])) == [{"x": 0.5, "n": 2, "c": "b"}]
