"""Tests of :mod:`propulate.space`: dimensions, encoding, construction, validity and sampling."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from propulate.space import (
    Categorical,
    Float,
    Integer,
    SearchSpace,
    SpaceError,
    as_space,
    load_callable,
    make_dimension,
)

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


# --------------------------------------------------------------------------- construction
def test_from_limits_reads_propulate_tuples() -> None:
    limits = {"x": (-5.0, 5.0), "n": (1, 8), "act": ("relu", "tanh"), "mix": (0, 2.5)}
    space = SearchSpace.from_limits(limits)
    assert space.names == ("x", "n", "act", "mix")
    assert space["x"] == Float(-5.0, 5.0)
    assert space["n"] == Integer(1, 8)
    assert space["act"] == Categorical(("relu", "tanh"))
    assert space["mix"] == Float(0.0, 2.5)  # one float bound makes it continuous
    assert isinstance(space["n"], Integer) and not isinstance(space["x"], Integer)
    assert space.limits == {
        "x": (-5.0, 5.0),
        "n": (1, 8),
        "act": ("relu", "tanh"),
        "mix": (0.0, 2.5),
    }
    assert SearchSpace.from_limits(space) is space
    assert as_space(space) is space
    assert SearchSpace.from_limits(space.limits).to_dict() == space.to_dict()
    assert len(space) == space.dim == 4
    assert list(space) == ["x", "n", "act", "mix"]


def test_numpy_integer_limits_are_integers() -> None:
    assert make_dimension((np.int64(1), np.int64(3))) == Integer(1, 3)


@SETTINGS
@given(space=spaces())
def test_to_dict_round_trips_through_from_dict_json_and_yaml(space: SearchSpace) -> None:
    spec = space.to_dict()
    assert SearchSpace.from_dict(spec).dimensions == space.dimensions
    assert SearchSpace.from_dict(json.loads(json.dumps(spec))).dimensions == space.dimensions
    assert SearchSpace.from_dict(spec["parameters"]).dimensions == space.dimensions


def test_to_dict_round_trips_through_yaml() -> None:
    space = SearchSpace(
        {
            "lr": Float(1e-5, 0.1, log=True),
            "m": Float(-1.0, 1.0),
            "n": Integer(1, 9),
            "w": Integer(2, 4096, log=True),
            "c": Categorical(("relu", "1", "yes")),
        }
    )
    again = SearchSpace.from_dict(yaml.safe_load(yaml.safe_dump(space.to_dict(), sort_keys=False)))
    assert again.dimensions == space.dimensions
    assert list(again.dimensions) == list(space.dimensions)


YAML_SPACE = """
parameters:
  lr: {type: float, low: 1e-5, high: 1e-1, log: true}
  momentum: {type: float, low: 0, high: 0.99}
  layers: {type: int, low: 1, high: 8}
  width: {type: integer, low: 16, high: 1e3, log: true}
  act: {type: categorical, choices: [relu, tanh, 1]}
"""


def test_from_yaml_parses_exponent_strings_as_numbers(tmp_path: Path) -> None:
    assert yaml.safe_load("x: 1e-5")["x"] == "1e-5"  # the YAML 1.1 quirk being handled
    path = tmp_path / "space.yaml"
    path.write_text(YAML_SPACE)
    space = SearchSpace.from_yaml(path)
    assert space.names == ("lr", "momentum", "layers", "width", "act")
    assert space["lr"] == Float(1e-5, 0.1, log=True)
    assert space["momentum"] == Float(0.0, 0.99)
    assert space["layers"] == Integer(1, 8)
    assert space["width"] == Integer(16, 1000, log=True)
    assert space["act"] == Categorical(("relu", "tanh", "1"))
    assert type(space["width"].high) is int
    assert SearchSpace.from_yaml(str(path)).to_dict() == space.to_dict()


def test_from_yaml_without_parameters_key_and_json_file(tmp_path: Path) -> None:
    path = tmp_path / "flat.yaml"
    path.write_text("x: {low: -1, high: 1}\nc: {type: cat, choices: [a, b]}\n")
    space = SearchSpace.from_yaml(path)
    assert space["x"] == Float(-1.0, 1.0)
    assert space["c"] == Categorical(("a", "b"))
    jpath = tmp_path / "space.json"
    jpath.write_text(json.dumps(space.to_dict()))
    assert SearchSpace.from_yaml(jpath).dimensions == space.dimensions


@pytest.mark.parametrize(
    "text",
    [
        "parameters: {x: {low: 0, high: [1\n",  # syntax error
        "x: {low: 0\n  high: 1}\n: :\n",  # syntax error
        "- 1\n- 2\n",  # a list, not a mapping
        "just a string\n",
        "",  # empty file
        "parameters: [1, 2]\n",
    ],
)
def test_from_yaml_rejects_bad_files_with_space_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(SpaceError):
        SearchSpace.from_yaml(path)


def test_from_yaml_missing_file() -> None:
    with pytest.raises(FileNotFoundError):
        SearchSpace.from_yaml("/nonexistent/space.yaml")


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ({"lr": {"type": "float", "low": "abc", "high": 1}}, "lr.low"),
        ({"lr": {"type": "float", "low": 0, "high": None}}, "lr.high"),
        ({"lr": {"type": "float", "low": True, "high": 1}}, "lr.low"),
        ({"lr": {"type": "float", "low": 1}}, "'lr'"),
        ({"lr": {"type": "bogus", "low": 0, "high": 1}}, "unknown type"),
        ({"n": {"type": "int", "low": 1.5, "high": 3}}, "'n'"),
        ({"lr": {"type": "float", "low": 1, "high": 1}}, "'lr'"),
        ({"lr": {"type": "float", "low": 0, "high": 1, "log": True}}, "'lr'"),
        ({"c": {"type": "categorical", "choices": ["a", "a"]}}, "'c'"),
        ({"c": {"type": "categorical", "choices": []}}, "'c'"),
        ({"c": {"type": "categorical"}}, "'c'"),
        ({"z": (1, 2, 3)}, "'z'"),
        ({"z": ()}, "'z'"),
        ({"z": ("a", "a")}, "'z'"),
        ({"z": 5}, "'z'"),
        ({"z": "abc"}, "'z'"),
        ({"z": (2, 1)}, "'z'"),
        ({"z": (0.0, float("inf"))}, "'z'"),
    ],
)
def test_space_errors_name_the_parameter(spec: dict[str, Any], fragment: str) -> None:
    with pytest.raises(SpaceError) as info:
        SearchSpace.from_dict(spec)
    assert fragment in str(info.value)
    if fragment != "unknown type":
        assert repr(next(iter(spec))) in str(info.value)


def test_space_error_is_a_value_error() -> None:
    assert issubclass(SpaceError, ValueError)


def test_empty_space_is_rejected() -> None:
    with pytest.raises(SpaceError, match="empty"):
        SearchSpace({})
    with pytest.raises(SpaceError, match="empty"):
        SearchSpace.from_dict({"parameters": {}})


@pytest.mark.parametrize(
    "make",
    [
        lambda: Float(1.0, 1.0),
        lambda: Float(2.0, 1.0),
        lambda: Float(float("nan"), 1.0),
        lambda: Float(0.0, float("inf")),
        lambda: Float(0.0, 1.0, log=True),
        lambda: Float(-1.0, 1.0, log=True),
        lambda: Integer(3, 2),
        lambda: Integer(0, 5, log=True),
        lambda: Integer(-3, 5, log=True),
        lambda: Integer(1.5, 3),
        lambda: Categorical(()),
        lambda: Categorical(("a", "b", "a")),
    ],
)
def test_invalid_dimensions_raise(make: Any) -> None:
    with pytest.raises(SpaceError):
        make()


def test_single_value_integer_and_single_choice_are_allowed() -> None:
    assert Integer(4, 4).decode(0.7) == 4
    assert Categorical(("only",)).decode(0.3) == "only"
    assert Integer(1, 1, log=True).decode(0.0) == 1


def test_parameter_names_are_the_users_even_log_column_names() -> None:
    space = SearchSpace(
        {
            "status": ("ok", "bad"),
            "rank": (1, 8),
            "kind": (0.0, 1.0),
            "method": ("a", "b"),
            "loss": (0.0, 2.0),
        }
    )
    assert space.names == ("status", "rank", "kind", "method", "loss")
    params = {"status": "bad", "rank": 3, "kind": 0.25, "method": "a", "loss": 1.5}
    assert space.is_valid(params) and space.decode(space.encode(params)) == params
    assert SearchSpace.from_dict(json.loads(json.dumps(space.to_dict()))).names == space.names


@pytest.mark.parametrize("name", ["", 3, None])
def test_non_string_or_empty_names_are_rejected(name: Any) -> None:
    with pytest.raises(SpaceError):
        SearchSpace({name: (0.0, 1.0)})


# --------------------------------------------------------------------------- identity
def test_canonical_and_key() -> None:
    space = SearchSpace({"x": (0.0, 1.0), "n": (1, 8), "c": ("a", "b")})
    canon = space.canonical({"x": 1, "n": 3.0, "c": "a", "extra": 9})
    assert canon == {"x": 1.0, "n": 3, "c": "a"}
    assert [type(v) for v in canon.values()] == [float, int, str]
    assert space.key({"n": np.int64(3), "c": "a", "x": np.float64(1.0)}) == (1.0, 3, "a")
    assert space.key({"x": 0.5, "n": 2.0, "c": "b"}) == space.key({"x": 0.5, "n": 2, "c": "b"})
    assert space.key({"x": 0.5, "n": 2, "c": "b"}) != space.key({"x": 0.5, "n": 3, "c": "b"})
    hash(space.key({"x": 0.5, "n": 2, "c": "b"}))


# --------------------------------------------------------------------------- validity
def test_in_bounds() -> None:
    space = SearchSpace({"x": (0.0, 1.0), "n": (1, 8), "c": ("a", "b")})
    ok = {"x": 0.5, "n": 3, "c": "a"}
    assert space.in_bounds(ok)
    assert space.in_bounds({**ok, "n": 3.0})
    assert space.in_bounds({**ok, "n": np.int32(8), "x": np.float32(1.0)})
    assert space.in_bounds({**ok, "x": 0, "n": 1})  # bounds are inclusive
    assert not space.in_bounds({"x": 0.5, "n": 3})  # missing
    assert not space.in_bounds({**ok, "x": 1.5})
    assert not space.in_bounds({**ok, "x": float("nan")})
    assert not space.in_bounds({**ok, "x": "0.5"})
    assert not space.in_bounds({**ok, "n": 3.5})
    assert not space.in_bounds({**ok, "n": 9})
    assert not space.in_bounds({**ok, "n": True})
    assert not space.in_bounds({**ok, "n": "3"})
    assert not space.in_bounds({**ok, "c": "z"})


def test_constraint_with_params_only() -> None:
    space = SearchSpace({"x": (0.0, 1.0), "y": (0.0, 1.0)}, lambda p: p["x"] + p["y"] <= 1.0)
    assert space.satisfies({"x": 0.2, "y": 0.3})
    assert not space.satisfies({"x": 0.8, "y": 0.3})
    assert space.satisfies({"x": 0.2, "y": 0.3}, {"ignored": 1})
    assert space.is_valid({"x": 0.2, "y": 0.3})
    assert not space.is_valid({"x": 0.8, "y": 0.3})
    assert not space.is_valid({"x": -0.2, "y": 0.3})  # feasible but out of bounds


def _nb_fits(params: dict[str, Any], task: dict[str, Any]) -> bool:
    return params["nb"] <= min(task["m"], task["n"])


def test_constraint_with_task() -> None:
    space = SearchSpace({"nb": (1, 512), "x": (0.0, 1.0)}, _nb_fits)
    task = {"m": 100, "n": 40}
    assert space.satisfies({"nb": 40, "x": 0.1}, task)
    assert not space.satisfies({"nb": 41, "x": 0.1}, task)
    assert space.is_valid({"nb": 41, "x": 0.1}, {"m": 100, "n": 100})
    assert not space.is_valid({"nb": 41, "x": 0.1}, task)
    # A callable object and a function with a default task argument take the task too.

    class Fits:
        def __call__(self, params: dict[str, Any], task: dict[str, Any]) -> bool:
            return _nb_fits(params, task)

    assert not SearchSpace({"nb": (1, 512)}, Fits()).satisfies({"nb": 41}, task)
    assert SearchSpace({"nb": (1, 512)}, lambda *a: a[1]["m"] == 100).satisfies({"nb": 1}, task)


def test_no_constraint_is_always_satisfied() -> None:
    space = SearchSpace({"x": (0.0, 1.0)})
    assert space.constraint is None
    assert space.satisfies({"x": 100.0})
    assert "constraint" not in space.to_dict()


def test_constraint_reference_is_imported_and_round_trips(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "my_constraints.py").write_text(
        "def small(params, task):\n    return params['nb'] <= min(task['m'], task['n'])\n"
        "def positive(params):\n    return params['x'] > 0\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    space = SearchSpace.from_dict(
        {
            "parameters": {"nb": {"type": "int", "low": 1, "high": 64}},
            "constraint": "my_constraints:small",
        }
    )
    assert space.constraint_ref == "my_constraints:small"
    assert space.satisfies({"nb": 8}, {"m": 8, "n": 9})
    assert not space.satisfies({"nb": 9}, {"m": 8, "n": 9})
    again = SearchSpace.from_dict(space.to_dict())
    assert again.to_dict() == space.to_dict()
    assert not again.satisfies({"nb": 9}, {"m": 8, "n": 9})
    dotted = SearchSpace({"x": (-1.0, 1.0)}, "my_constraints.positive")
    assert dotted.satisfies({"x": 0.5}) and not dotted.satisfies({"x": -0.5})
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(space.to_dict()))
    assert not SearchSpace.from_yaml(path).satisfies({"nb": 9}, {"m": 8, "n": 9})


def test_load_callable() -> None:
    import os.path

    assert load_callable("os.path:join") is os.path.join
    assert load_callable("os.path.join") is os.path.join
    import collections

    assert load_callable("collections:OrderedDict.fromkeys") == collections.OrderedDict.fromkeys


@pytest.mark.parametrize(
    ("ref", "fragment"),
    [
        ("no_such_module_xyz:f", "no_such_module_xyz"),
        ("os.path:no_such_function", "no_such_function"),
        ("math:pi", "not callable"),
        ("nodots", "module:function"),
        (":f", "module:function"),
        ("os.path:", "module:function"),
    ],
)
def test_load_callable_errors(ref: str, fragment: str) -> None:
    with pytest.raises(ImportError) as info:
        load_callable(ref)
    assert fragment in str(info.value)


def test_bad_constraint_reference_fails_at_construction() -> None:
    with pytest.raises(ImportError, match="no_such_module_xyz"):
        SearchSpace({"x": (0.0, 1.0)}, "no_such_module_xyz:f")


# --------------------------------------------------------------------------- sampling
def test_sample_is_seeded_feasible_and_in_bounds() -> None:
    space = SearchSpace(
        {"nb": (1, 512), "x": Float(1e-3, 1.0, log=True), "c": ("a", "b")}, _nb_fits
    )
    task = {"m": 30, "n": 50}
    draws = [space.sample(np.random.default_rng(7), task) for _ in range(2)]
    assert draws[0] == draws[1]
    rng = np.random.default_rng(0)
    samples = [space.sample(rng, task) for _ in range(200)]
    assert all(space.is_valid(s, task) for s in samples)
    assert len({s["nb"] for s in samples}) > 15
    assert {s["c"] for s in samples} == {"a", "b"}


def test_sample_gives_up_on_infeasible_constraint() -> None:
    space = SearchSpace({"x": (0.0, 1.0)}, lambda p: False)
    with pytest.raises(SpaceError, match="no feasible"):
        space.sample(np.random.default_rng(0), max_tries=50)


@st.composite
def continuous_spaces(draw: st.DrawFn) -> SearchSpace:
    dims = draw(st.lists(float_dims(), min_size=1, max_size=4))
    return SearchSpace({f"f{i}": d for i, d in enumerate(dims)})


@SETTINGS
@given(space=continuous_spaces(), n=st.integers(1, 40), seed=st.integers(0, 2**32 - 1))
def test_latin_hypercube_is_stratified(space: SearchSpace, n: int, seed: int) -> None:
    points = space.latin_hypercube(n, seed=seed)
    assert len(points) == n
    assert all(space.in_bounds(p) for p in points)
    u = space.encode_many(points)
    bins = np.clip(np.floor(u * n).astype(int), 0, n - 1)
    for j in range(space.dim):
        assert sorted(bins[:, j]) == list(range(n)), f"dimension {space.names[j]} not stratified"


@SETTINGS
@given(space=spaces(), n=st.integers(1, 12), seed=st.integers(0, 2**32 - 1))
def test_latin_hypercube_is_reproducible_and_valid(space: SearchSpace, n: int, seed: int) -> None:
    a = space.latin_hypercube(n, seed=seed)
    assert a == space.latin_hypercube(n, seed=seed)
    assert a == space.latin_hypercube(n, seed=np.random.default_rng(seed))
    assert 1 <= len(a) <= n
    assert all(space.in_bounds(p) for p in a)
    keys = [space.key(p) for p in a]
    assert len(set(keys)) == len(keys)  # no duplicate configurations


@SETTINGS
@given(seeds=st.lists(st.integers(0, 2**32 - 1), min_size=2, max_size=2, unique=True))
def test_latin_hypercube_differs_across_seeds(seeds: list[int]) -> None:
    space = SearchSpace({"x": (0.0, 1.0), "y": Float(1e-3, 1.0, log=True)})
    a, b = (space.latin_hypercube(10, seed=s) for s in seeds)
    assert a != b
    assert all(p != q for p, q in zip(a, b, strict=True))


@SETTINGS
@given(
    m=st.integers(1, 600),
    n_=st.integers(1, 600),
    n=st.integers(1, 30),
    seed=st.integers(0, 2**32 - 1),
)
def test_latin_hypercube_respects_task_constraint(m: int, n_: int, n: int, seed: int) -> None:
    space = SearchSpace({"nb": (1, 512), "x": (0.0, 1.0)}, _nb_fits)
    task = {"m": m, "n": n_}
    assume(min(m, n_) >= 2)  # down to 2 of 512 values feasible
    points = space.latin_hypercube(n, seed=seed, task=task)
    assert len(points) == n
    assert all(p["nb"] <= min(m, n_) for p in points)
    assert all(space.is_valid(p, task) for p in points)
    assert points == space.latin_hypercube(n, seed=seed, task=task)


def test_latin_hypercube_with_a_tight_constraint_fills_the_design() -> None:
    space = SearchSpace({"nb": (1, 512), "x": (0.0, 1.0)}, _nb_fits)
    for n in (1, 2, 10):
        points = space.latin_hypercube(n, seed=0, task={"m": 1, "n": 700})
        assert len(points) == n
        assert all(p["nb"] == 1 for p in points)


def test_latin_hypercube_task_changes_the_design() -> None:
    space = SearchSpace({"nb": (1, 512), "x": (0.0, 1.0)}, _nb_fits)
    loose = space.latin_hypercube(20, seed=1, task={"m": 512, "n": 512})
    tight = space.latin_hypercube(20, seed=1, task={"m": 16, "n": 512})
    assert max(p["nb"] for p in loose) > 16
    assert max(p["nb"] for p in tight) <= 16


def test_latin_hypercube_edge_cases() -> None:
    space = SearchSpace({"c": ("a", "b"), "n": (1, 2)})
    assert space.latin_hypercube(0, seed=0) == []
    assert space.latin_hypercube(-3, seed=0) == []
    small = space.latin_hypercube(10, seed=0, max_rounds=20)
    # Only four distinct configurations exist.
    assert sorted(space.key(p) for p in small) == [("a", 1), ("a", 2), ("b", 1), ("b", 2)]
    with pytest.raises(SpaceError, match="no feasible"):
        SearchSpace({"x": (0.0, 1.0)}, lambda p: False).latin_hypercube(3, seed=0, max_rounds=5)


def test_unknown_keys_in_a_space_file_are_errors_with_a_suggestion(tmp_path: Path) -> None:
    bad = tmp_path / "s.yaml"
    bad.write_text("parameters:\n  x: {type: float, low: 1, high: 100, lgo: true}\n")
    with pytest.raises(
        SpaceError, match=r"^parameter 'x': unknown key 'lgo' \(did you mean 'log'\?\)$"
    ):
        SearchSpace.from_yaml(bad)
    bad.write_text("paramters:\n  x: {type: float, low: 1, high: 100}\n")
    with pytest.raises(
        SpaceError, match=r"unknown key 'paramters' \(did you mean 'parameters'\?\)"
    ):
        SearchSpace.from_yaml(bad)
    bad.write_text("parameters:\n  x: {type: float, low: 1, high: 100, scale: 3}\n")
    with pytest.raises(SpaceError, match="unknown key 'scale' \\(valid keys: type, low, high"):
        SearchSpace.from_yaml(bad)
