"""Building a :class:`propulate.space.SearchSpace`: from Propulate limits, dicts, YAML and JSON
files, and the errors for bad files, specs, dimensions and names.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from hypothesis import given

from propulate.space import (
    Categorical,
    Float,
    Integer,
    SearchSpace,
    SpaceError,
    as_space,
    make_dimension,
)
from tests.space_utils import SETTINGS, spaces


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
