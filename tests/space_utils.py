"""Hypothesis strategies for dimensions and search spaces, and a task constraint, shared by the
tests of :mod:`propulate.space`.
"""

from __future__ import annotations

from typing import Any

from hypothesis import settings
from hypothesis import strategies as st

from propulate.space import Categorical, Float, Integer, SearchSpace

SETTINGS = settings(max_examples=100, deadline=None)


# --------------------------------------------------------------------------- strategies
@st.composite
def float_dims(draw: st.DrawFn, log: bool | None = None) -> Float:
    """A Float dimension of moderate magnitude (linear or log scale)."""
    is_log = draw(st.booleans()) if log is None else log
    if is_log:
        low = draw(st.floats(1e-6, 1e3))
        ratio = draw(st.floats(1.01, 1e6))
        return Float(low, low * ratio, log=True)
    low = draw(st.floats(-1e6, 1e6))
    width = draw(st.floats(1e-3, 1e6))
    return Float(low, low + width)


@st.composite
def int_dims(draw: st.DrawFn) -> Integer:
    """An Integer dimension (linear or log scale)."""
    if draw(st.booleans()):
        low = draw(st.integers(1, 1000))
        return Integer(low, low + draw(st.integers(0, 10_000)), log=True)
    low = draw(st.integers(-1000, 1000))
    return Integer(low, low + draw(st.integers(0, 10_000)))


cat_dims = st.lists(st.text(min_size=1, max_size=5), min_size=1, max_size=7, unique=True).map(
    lambda c: Categorical(tuple(c))
)
any_dims = st.one_of(float_dims(), int_dims(), cat_dims)
unit = st.floats(0.0, 1.0)
any_u = st.one_of(
    st.floats(allow_nan=False, allow_infinity=True),
    st.floats(-2.0, 3.0),
    st.sampled_from([0.0, 1.0, -0.0, 1e-300, 1 - 1e-16]),
)


@st.composite
def spaces(draw: st.DrawFn) -> SearchSpace:
    """A space of 1 to 5 mixed dimensions."""
    dims = draw(st.lists(any_dims, min_size=1, max_size=5))
    return SearchSpace({f"p{i}": d for i, d in enumerate(dims)})


def _nb_fits(params: dict[str, Any], task: dict[str, Any]) -> bool:
    """A task constraint: the block size ``nb`` fits in the smaller of the matrix sides m, n."""
    return params["nb"] <= min(task["m"], task["n"])
