"""Identity and validity in :mod:`propulate.space`: canonical values and keys, bounds,
constraints with and without the task, constraint references and ``load_callable``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from propulate.space import SearchSpace, load_callable
from tests.space_utils import _nb_fits


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


@pytest.mark.parametrize(
    "limits",
    [
        {"x": (0.0, 1.0), "y": (-2.0, 2.0)},  # floats alone: the key is an item getter
        {"x": (0.0, 1.0)},
        {"x": (0.0, 1.0), "n": (1, 8), "c": ("a", "b")},
    ],
)
def test_the_key_function_gives_the_key(limits: dict[str, Any]) -> None:
    space = SearchSpace(limits)
    key = space.key_function()
    rng = np.random.default_rng(0)
    for _ in range(20):
        params = space.sample(rng)
        assert key(params) == space.key(params) and type(key(params)) is tuple
    with pytest.raises(KeyError):
        key({})


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
