"""A ConfigSpace JSON file given where a space file is expected (``evolve --space cs.json``) is
read as ConfigSpace, not refused for its unknown key ``hyperparameters``; where it is not read,
the error names the command that converts it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from propulate.compat.history import read_history
from propulate.space import SearchSpace, SpaceError
from propulate.space.configspace import read_space_file, write_configspace_json
from tests.evolve_utils import cli, evolve_args

SPACE = {
    "parameters": {
        "algo": {"type": "categorical", "choices": ["blocked", "naive"]},
        "tile": {"type": "int", "low": 1, "high": 64, "log": True, "when": {"algo": "blocked"}},
        "a": {"type": "float", "low": -1.0, "high": 1.0},
        "b": {"type": "float", "low": -1.0, "high": 1.0},
    },
    "forbidden": ["algo == 'naive' and tile == 2"],
}


@pytest.fixture
def configspace_file(tmp_path: Path) -> Path:
    pytest.importorskip("ConfigSpace")
    path = tmp_path / "cs.json"
    write_configspace_json(SearchSpace.from_dict(SPACE), path)
    assert "hyperparameters" in json.loads(path.read_text())
    return path


def test_a_configspace_file_reads_as_the_same_space(configspace_file: Path) -> None:
    read = read_space_file(configspace_file).to_dict()
    assert read["parameters"] == SearchSpace.from_dict(SPACE).to_dict()["parameters"]
    assert read["forbidden"] == SPACE["forbidden"]


def test_evolve_runs_on_a_configspace_file(configspace_file: Path, tmp_path: Path) -> None:
    proc = cli(*evolve_args(configspace_file, tmp_path / "run", "--max-evaluations", "12"))
    assert proc.returncode == 0, proc.stderr
    records = read_history(tmp_path / "run")
    assert len(records) == 12
    assert set(records["algo"]) <= {"blocked", "naive"}


def test_elsewhere_the_error_names_the_conversion(configspace_file: Path) -> None:
    with pytest.raises(SpaceError, match=r"is ConfigSpace JSON: convert it with `propulate space"):
        SearchSpace.from_yaml(configspace_file)
