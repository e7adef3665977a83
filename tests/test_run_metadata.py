"""``DIR/run.json``: what a run was started with, and what a resume may not change."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from propulate.runs.metadata import (
    RunMetadata,
    RunMismatch,
    check_resume,
    read_run_metadata,
    run_differences,
    write_run_metadata,
)
from propulate.space import Categorical, Float, Integer, SearchSpace

SPACE = SearchSpace(
    {"lr": Float(1e-4, 1e-1, log=True), "nb": Integer(1, 128), "act": Categorical(("relu", "tanh"))}
)
BASE = RunMetadata(
    objective="pkg.mod:loss",
    space=SPACE.to_dict(),
    method="propulate",
    run="seed1",
    seed=1,
    task={"id": "t1", "task": {"m": 100}},
    max_evaluations=50,
    started=1.0,
)


def space(**dims: object) -> dict[str, object]:
    return SearchSpace({**SPACE.dimensions, **dims}).to_dict()  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("change", "phrase"),
    [
        (
            {"space": space(nb=Integer(1, 256))},
            "parameter nb was in [1, 128] (integer), now in [1, 256] (integer)",
        ),
        (
            {"space": space(nb=Float(1.0, 128.0))},
            "parameter nb was in [1, 128] (integer), now in [1, 128]",
        ),
        (
            {"space": space(lr=Float(1e-4, 1e-1))},
            "parameter lr was in [0.0001, 0.1] (log), now in [0.0001, 0.1]",
        ),
        (
            {"space": space(act=Categorical(("relu", "gelu")))},
            "parameter act was in {relu, tanh}, now in {relu, gelu}",
        ),
        ({"space": space(extra=Integer(0, 3))}, "parameter extra in [0, 3] (integer) was added"),
        (
            {"space": SearchSpace({"lr": SPACE["lr"], "nb": SPACE["nb"]}).to_dict()},
            "parameter act in {relu, tanh} was removed",
        ),
        (
            {"space": {**SPACE.to_dict(), "constraint": "pkg.mod:ok"}},
            "constraint changed from None to pkg.mod:ok",
        ),
        ({"objective": "pkg.mod:other"}, "objective changed from pkg.mod:loss to pkg.mod:other"),
        ({"method": "optuna"}, "method changed from propulate to optuna"),
        ({"run": "seed2", "seed": 2}, "run changed from seed1 (seed 1) to seed2 (seed 2)"),
        (
            {"task": {"id": "t1", "task": {"m": 200}}},
            'task changed from t1 {"m": 100} to t1 {"m": 200}',
        ),
        ({"task": None}, 'task changed from t1 {"m": 100} to none'),
    ],
)
def test_each_change_is_named(change: dict[str, object], phrase: str) -> None:
    assert run_differences(BASE, replace(BASE, **change)) == [phrase]  # type: ignore[arg-type]


def test_stopping_criteria_and_parameter_order_may_change() -> None:
    reordered = SearchSpace({n: SPACE[n] for n in reversed(SPACE.names)}).to_dict()
    later = replace(
        BASE, max_evaluations=500, generations=3, time_limit=60.0, started=9.0, space=reordered
    )
    assert run_differences(BASE, later) == []


def test_write_read_and_check(tmp_path: Path) -> None:
    assert read_run_metadata(tmp_path) is None
    assert check_resume(tmp_path, BASE) is None  # a new directory: nothing to compare
    write_run_metadata(tmp_path, BASE)
    assert read_run_metadata(tmp_path) == BASE
    assert check_resume(tmp_path, replace(BASE, max_evaluations=80)) == BASE
    changed = replace(BASE, objective="pkg.mod:other", method="random")
    with pytest.raises(RunMismatch) as err:
        check_resume(tmp_path, changed)
    assert str(err.value) == (
        f"run directory {tmp_path}: objective changed from pkg.mod:loss to pkg.mod:other "
        "(and 1 more change(s)); resume it unchanged or use another --out for a new run"
    )
    (tmp_path / "run.json").write_text("{not json")
    with pytest.raises(RunMismatch, match="cannot read"):
        read_run_metadata(tmp_path)


def test_other_fields_of_the_task_spec_may_change() -> None:
    later = replace(BASE, task={"id": "t1", "task": {"m": 100}, "note": "regenerated"})
    assert run_differences(BASE, later) == []
