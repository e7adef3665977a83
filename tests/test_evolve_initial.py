"""``evolve --initial``: known configurations (e.g. a default) evaluated before any bred one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from propulate.cli import main
from propulate.compat.history import iter_records
from tests.evolve_utils import SPACE, SPHERE, evolve_args, one_error_line
from tests.mpi_utils import run_mpi

FIRST = {"a": 1.5, "b": -2.0}
SECOND = {"a": -0.25, "b": 0.75}


#: A sphere taking 0.1 s, so that both ranks start before the budget is spent.
SLOW = """
import time

def sphere(params):
    time.sleep(0.1)
    return params["a"] ** 2 + params["b"] ** 2
"""


def _run(space: Path, out: Path, budget: int) -> None:
    initial = ["--initial", json.dumps(FIRST), json.dumps(SECOND)]
    args = evolve_args(
        space,
        out,
        "--max-evaluations",
        str(budget),
        "--seed",
        "4",
        *initial,
        objective="slow:sphere",
    )
    run_mpi(2, ["-m", "propulate", *args], cwd=space.parent)


@pytest.mark.slow
@pytest.mark.mpi
def test_initial_configurations_come_first_once_even_after_a_resume(tmp_path: Path) -> None:
    space = tmp_path / "s.yaml"
    space.write_text(SPACE)
    (tmp_path / "slow.py").write_text(SLOW)
    out = tmp_path / "out"
    _run(space, out, 12)
    records = list(iter_records(out))
    assert len(records) == 12
    # one per worker, as each worker's first evaluation (generation 0)
    firsts = {r["rank"]: r["params"] for r in records if r["generation"] == 0}
    assert sorted(firsts.values(), key=str) == sorted([FIRST, SECOND], key=str)
    assert records[[r["params"] for r in records].index(FIRST)]["loss"] == pytest.approx(6.25)

    _run(space, out, 20)  # resumed: the records already hold both
    params = [r["params"] for r in iter_records(out)]
    assert len(params) == 20
    assert params.count(FIRST) == 1 and params.count(SECOND) == 1


@pytest.mark.parametrize(
    ("initial", "text"),
    [
        ('{"a": 1.0}', "set exactly a, b"),
        ('{"a": 1.0, "b": 9.0}', "outside the space"),
        ("{a: 1}", "not JSON"),
    ],
)
def test_a_bad_initial_configuration_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], initial: str, text: str
) -> None:
    space = tmp_path / "s.yaml"
    space.write_text(SPACE)
    args = evolve_args(space, tmp_path / "out", "--max-evaluations", "5", "--initial", initial)
    assert main(args) == 2
    assert text in one_error_line(capsys.readouterr().err)
    assert not (tmp_path / "out" / "evals").exists()


def test_optuna_refuses_initial_configurations(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    space = tmp_path / "s.yaml"
    space.write_text(SPACE)
    extra = ("--max-evaluations", "5", "--method", "optuna", "--initial", json.dumps(FIRST))
    assert main(evolve_args(space, tmp_path / "out", *extra, objective=SPHERE)) == 2
    assert "--initial is for --method propulate or random" in capsys.readouterr().err
