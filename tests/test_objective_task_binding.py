"""Which parameter of an objective takes the task: a reporter or a communicator never does, a
defaulted one may go without, and ``evolve`` runs the documented reporter without ``--task``."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from propulate.cli import main
from propulate.engine.evaluation import call_objective
from propulate.engine.steps import accepts_report
from propulate.runs.log import iter_records
from propulate.runs.summary import read_summary
from propulate.user_objective.loading import bind_task, needs_task, task_parameter


def reporter(params: dict[str, Any], report: Any = None) -> float:
    """The shape ``docs/pruning.md`` documents."""
    for step in range(3):
        if report is not None and report(step, params["a"] + 1.0 / (step + 1)):
            break
    return params["a"]


def with_comm(params: dict[str, Any], comm: Any) -> float:
    return params["a"]


def with_subgroup_comm(params: dict[str, Any], subgroup_comm: Any) -> float:
    return params["a"]


def defaulted(params: dict[str, Any], task: dict[str, Any] | None = None) -> float:
    return params["a"] * (1.0 if task is None else task["m"])


def positional(params: dict[str, Any], t: dict[str, Any]) -> float:
    return params["a"] * t["m"]


def task_then_reporter(params: dict[str, Any], t: dict[str, Any], report: Any = None) -> float:
    if report is not None:
        report(0, t["m"])
    return params["a"] * t["m"]


def comm_then_task(params: dict[str, Any], comm: Any, t: dict[str, Any]) -> tuple[Any, float]:
    return comm, params["a"] * t["m"]


def varargs(*args: Any) -> float:
    return args[0]["a"] * (args[1]["m"] if len(args) > 1 else 1.0)


@pytest.mark.parametrize("fn", [reporter, with_comm, with_subgroup_comm])
def test_a_reporter_or_a_communicator_is_never_the_task(fn: Callable[..., float]) -> None:
    assert task_parameter(fn) is None and not needs_task(fn)
    assert bind_task(fn, None) is fn
    assert bind_task(fn, {"m": 3}) is fn  # a task it cannot take is not forced on it


def test_a_defaulted_task_may_go_without_and_is_bound_when_given() -> None:
    assert not needs_task(defaulted) and not needs_task(varargs)
    assert bind_task(defaulted, None)({"a": 2.0}) == 2.0
    assert bind_task(defaulted, {"m": 3})({"a": 2.0}) == 6.0
    assert bind_task(varargs, None)({"a": 2.0}) == 2.0
    assert bind_task(varargs, {"m": 3})({"a": 2.0}) == 6.0


def test_a_required_task_is_named_in_the_error() -> None:
    assert needs_task(positional)
    with pytest.raises(ValueError) as err:
        bind_task(positional, None)
    message = str(err.value)
    assert message.startswith("objective 'positional' needs a task (--task)")
    assert "parameter 't'" in message and "'report'" in message and "default" in message
    assert bind_task(positional, {"m": 3})({"a": 2.0}) == 6.0


def test_a_bound_task_keeps_the_reporter_and_the_communicator_reachable() -> None:
    bound = bind_task(task_then_reporter, {"m": 3})
    assert accepts_report(bound)
    curve: list[list[float]] = []
    assert call_objective(bound, {"a": 2.0}, curve=curve, report=True) == 6.0
    assert curve == [[0, 3]]
    # the engine's multi-rank call, loss(params, comm), with the task after the communicator
    assert bind_task(comm_then_task, {"m": 3})({"a": 2.0}, "the comm") == ("the comm", 6.0)


MODULE = """\
def loss(params, report=None):
    value = 0.0
    for epoch in range(4):
        value = (params["a"] - 0.3) ** 2 + 1.0 / (epoch + 1)
        if report is not None and report(epoch, value):
            break
    return value
"""


@pytest.fixture
def reporter_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    (tmp_path / "documented.py").write_text(MODULE)
    (tmp_path / "s.yaml").write_text("parameters:\n  a: {type: float, low: -1, high: 1}\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    sys.modules.pop("documented", None)


def test_evolve_runs_the_documented_reporter_without_a_task(reporter_module: Path) -> None:
    args = ["--objective", "documented:loss", "--space", "s.yaml", "--max-evaluations", "12"]
    assert main(["evolve", *args, "--out", "run", "--method", "random"]) == 0
    summary = read_summary(reporter_module / "run")
    assert summary is not None and summary.evaluations == 12 and summary.failures == 0
    records = list(iter_records(reporter_module / "run"))
    assert all([s for s, _ in r["curve"]] == [0, 1, 2, 3] for r in records)
