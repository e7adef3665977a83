"""``propulate measure``: named configurations, grids and random draws as run directories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from propulate.cli import main
from propulate.problems import pdgeqrf
from propulate.runs.summary import read_summary
from tests.pdgeqrf_utils import CALLS_ENV, CAMPAIGN, TASK, launched, model_runtime


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path]:
    (tmp_path / "campaign.yaml").write_text(CAMPAIGN)
    (tmp_path / "t.json").write_text(json.dumps({"id": "t", "task": TASK}))
    calls = tmp_path / "calls.jsonl"
    monkeypatch.setenv(CALLS_ENV, str(calls))
    return tmp_path / "campaign.yaml", tmp_path / "t.json", calls


def measure(space: Path, task: Path, out: Path, *mode: str) -> int:
    return main(["measure", "--space", str(space), "--task", str(task), "--out", str(out), *mode])


def test_default_params_are_one_run_with_method_default(setup, tmp_path, capsys) -> None:
    space, task, calls = setup
    default = pdgeqrf.default_params(2)
    assert measure(space, task, tmp_path / "d", "--params", json.dumps(default)) == 0
    summary = read_summary(tmp_path / "d")
    assert summary is not None and summary.method == "default" and summary.task == "t"
    assert summary.evaluations == 1 and summary.best_params == default
    assert launched(calls) == [default]
    assert summary.best_loss == pytest.approx(model_runtime(default, TASK))


def test_grid_skips_infeasible_cells_without_evaluating_them(setup, tmp_path, capsys) -> None:
    space, task, calls = setup
    fixed = json.dumps({"nproc": 2, "p": 1})
    assert (
        measure(space, task, tmp_path / "g", "--grid", "mb=8,64", "nb=16,200", "--fixed", fixed)
        == 0
    )
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    skipped = [o for o in out if "skipped" in o]
    # nb * q = 200 * 2 > n = 300: both nb=200 cells are rejected before any launch
    assert [s["skipped"]["nb"] for s in skipped] == [200, 200]
    assert skipped[0]["reason"] == "infeasible: nb * q = 200 * 2 exceeds n = 300"
    assert sorted((p["mb"], p["nb"]) for p in launched(calls)) == [(8, 16), (64, 16)]
    summary = read_summary(tmp_path / "g")
    assert summary is not None and summary.method == "grid" and summary.evaluations == 2
    # a re-run finds both cells done and launches nothing
    assert (
        measure(space, task, tmp_path / "g", "--grid", "mb=8,64", "nb=16,200", "--fixed", fixed)
        == 0
    )
    assert len(launched(calls)) == 2


def test_random_draws_distinct_feasible_configurations(setup, tmp_path) -> None:
    space, task, calls = setup
    assert measure(space, task, tmp_path / "r", "--random", "12", "--seed", "3") == 0
    params = launched(calls)
    assert len(params) == 12
    assert len({tuple(sorted(p.items())) for p in params}) == 12
    assert all(pdgeqrf.feasible(p, TASK) for p in params)
    summary = read_summary(tmp_path / "r")
    assert summary is not None and summary.method == "random" and summary.evaluations == 12


def test_a_configuration_missing_a_parameter_is_one_error_line(setup, tmp_path, capsys) -> None:
    space, task, calls = setup
    assert measure(space, task, tmp_path / "x", "--params", '{"mb": 32}') == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "propulate measure: error: configuration {'mb': 32} must set exactly mb, nb, nproc, p"
    ]
    assert launched(calls) == []
