"""benchmarks/bbob.py's methods (the registry's propagators, optuna-default, ngopt), its
resumable results file of several budgets, and the tables of benchmarks/auto_dev.py."""

from __future__ import annotations

import importlib.util
import io
import json
import math
import sys
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = ROOT / "benchmarks"


def load(name: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A fresh import of ``benchmarks/<name>.py`` (benchmarks is not a package)."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    for cached in (name, "bbob", "suite_runs"):
        monkeypatch.delitem(sys.modules, cached, raising=False)
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)
    spec.loader.exec_module(module)
    return module


def run_main(module: Any, argv: list[str]) -> str:
    """``module.main(argv)``'s printed output."""
    out = io.StringIO()
    with redirect_stdout(out):
        assert module.main(argv) == 0
    return out.getvalue()


def test_engine_methods_are_the_registry_names_but_random(monkeypatch: pytest.MonkeyPatch) -> None:
    from propulate.propagators.registry import PROPAGATORS

    bbob = load("bbob", monkeypatch)
    assert "bo" in bbob.ENGINE_METHODS and "random" in PROPAGATORS
    assert list(bbob.ENGINE_METHODS) == [name for name in PROPAGATORS if name != "random"]
    assert {"optuna-default", "ngopt", "random"} <= set(bbob.REFERENCE_METHODS)
    assert len(bbob.METHODS) == len(set(bbob.METHODS))


@pytest.mark.parametrize(
    ("mult", "first", "challenger", "race"), [(20, "bo", None, 0), (1000, "cma", "ga", 2000)]
)
def test_engine_auto_chooses_from_the_budget_and_ranks(
    mult: int, first: str, challenger: str | None, race: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    import random

    from propulate.propagators.auto import Auto
    from propulate.propagators.bo import BO
    from propulate.settings import EvolveSettings
    from propulate.space import SearchSpace

    bbob = load("bbob", monkeypatch)
    space = SearchSpace({f"x{i}": (-5.0, 5.0) for i in range(10)})
    settings = EvolveSettings(islands=1, propagator="auto", max_evaluations=mult * 10)
    prop = bbob.engine_propagator(space, settings, random.Random(0), 2)
    if first == "bo":
        assert isinstance(prop, BO)  # 20 x D: Bayesian optimisation, no race
        return
    assert isinstance(prop, Auto)
    choice = prop.choice
    assert (choice.first, choice.challenger, choice.race) == (first, challenger, race)
    assert "10,000 evaluations, 2 workers" in choice.reason


def test_optuna_default_is_the_default_sampler_seeded(monkeypatch: pytest.MonkeyPatch) -> None:
    import optuna

    bbob = load("bbob", monkeypatch)
    sampler = bbob.optuna_sampler("optuna-default", 3)
    assert type(sampler) is type(optuna.create_study().sampler)
    first = bbob.run_reference("optuna-default", 1, 1, 2, 25, 3)
    assert len(first) == 25 and min(first) >= 0
    assert bbob.run_reference("optuna-default", 1, 1, 2, 25, 3) == first
    assert bbob.run_reference("optuna-default", 1, 1, 2, 25, 4) != first


def test_results_resume_per_budget_and_tables_take_one_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bbob = load("bbob", monkeypatch)
    results = tmp_path / "runs.jsonl"
    common = ["--functions", "1,2", "--instances", "1", "--dim", "2", "--results", str(results)]
    methods = ["--methods", "random", "optuna-default", "--optuna-budget-multiplier", "3"]
    run_main(bbob, [*common, *methods, "--budget-multiplier", "5"])
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    assert sorted((r["method"], r["budget"]) for r in rows) == [
        ("optuna-default", 6),
        ("optuna-default", 6),
        ("random", 10),
        ("random", 10),
    ]
    assert all(r["seed"] == 0 and r["dim"] == 2 and len(r["hits"]) == 51 for r in rows)
    run_main(bbob, [*common, *methods, "--budget-multiplier", "5"])  # all present: nothing new
    assert len(results.read_text().splitlines()) == 4
    run_main(bbob, [*common, *methods, "--budget-multiplier", "8"])  # random's budget is new
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    assert sorted(r["budget"] for r in rows if r["method"] == "random") == [10, 10, 16, 16]
    assert len(rows) == 6  # optuna-default is capped at 3 x D either way
    table = run_main(
        bbob,
        [
            "--from-results",
            str(results),
            *common[:6],
            "--methods",
            "random",
            "--budget-multiplier",
            "5",
        ],
    )
    line = next(x for x in table.splitlines() if x.startswith("random "))
    assert line.split()[1] == "2"  # the two lines of budget 10, not the 16s


def test_ngopt_without_its_interpreter_says_how_to_make_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bbob = load("bbob", monkeypatch)
    argv = ["--functions", "1", "--instances", "1", "--dim", "2", "--methods", "ngopt"]
    with pytest.raises(SystemExit, match="ngopt-python"):
        run_main(bbob, [*argv, "--ngopt-python", str(tmp_path / "none")])


@pytest.mark.slow
def test_ngopt_runs_seeded_in_its_venv(monkeypatch: pytest.MonkeyPatch) -> None:
    bbob = load("bbob", monkeypatch)
    if not bbob.NGOPT_PYTHON.exists():
        pytest.skip(f"no Nevergrad venv at {bbob.NGOPT_PYTHON}")
    runs: list[list[dict[str, Any]]] = []
    for seed in (0, 0):
        rows: list[dict[str, Any]] = []
        bbob.run_ngopt([(1, 1), (8, 2)], 2, 40, seed, bbob.NGOPT_PYTHON, rows.append)
        runs.append(rows)
    assert [(r["method"], r["function"], r["instance"], r["budget"]) for r in runs[0]] == [
        ("ngopt", 1, 1, 40),
        ("ngopt", 8, 2, 40),
    ]
    assert all(1 <= r["evaluations"] <= 40 and r["best"] >= 0 for r in runs[0])
    assert runs[0][0]["hits"][0] is not None  # f1 in 2-D: within 1e2 of the optimum at once
    strip = [[{k: v for k, v in r.items() if k != "seconds"} for r in rows] for rows in runs]
    assert strip[0] == strip[1]  # NGOpt picks Cobyla here, which draws nothing


def test_auto_dev_tables_count_common_problems_and_groups(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    auto_dev = load("auto_dev", monkeypatch)

    def line(method: str, function: int, instance: int, reached: int) -> dict[str, Any]:
        hits = [5] * reached + [None] * (51 - reached)
        return {
            "method": method,
            "function": function,
            "instance": instance,
            "dim": 2,
            "budget": 20,
            "hits": hits,
            "seconds": 1.0,
        }

    rows = [
        line("a", 1, 1, 51),  # separable, solved
        line("a", 20, 1, 0),  # weakly structured
        line("b", 1, 1, 0),
        line("b", 20, 1, 51),
        line("b", 20, 2, 51),  # only b ran it: not counted
    ]
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = run_main(auto_dev, [str(path)])
    assert "2 problems (functions 1-20, instances 1)" in out
    a = next(x for x in out.splitlines() if x.startswith("| a |")).split("|")
    assert [c.strip() for c in a[2:4]] == ["0.500", "1.000"]  # all, separable
    assert [c.strip() for c in a[4:9]] == [
        "-",
        "-",
        "-",
        "0.000",
        "50%",
    ]  # no f6-19; f20-24, solved
    assert "best on weakly structured f20-24: **b** 1.000" in out
    assert "best on moderate f6-9" not in out  # no problem of that group
    assert math.isclose(auto_dev.share_at([line("a", 1, 1, 10)], 4), 0.0)


def test_auto_dev_spread_per_instance_and_function(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    auto_dev = load("auto_dev", monkeypatch)

    def line(method: str, function: int, instance: int, reached: int) -> dict[str, Any]:
        hits = [5] * reached + [None] * (51 - reached)
        return {
            "method": method,
            "function": function,
            "instance": instance,
            "dim": 2,
            "budget": 20,
            "hits": hits,
            "seconds": 1.0,
        }

    rows = [
        line("a", 1, 71, 51),
        line("a", 2, 71, 0),  # a: 0.5 on instance 71
        line("a", 1, 72, 51),
        line("a", 2, 72, 51),  # a: 1.0 on instance 72
        line("b", 1, 71, 0),
        line("b", 2, 71, 0),
        line("b", 1, 72, 0),
        line("b", 2, 72, 51),
        line("b", 3, 71, 51),  # only b ran f3: in no table
    ]
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    lines = run_main(auto_dev, [str(path)]).splitlines()
    assert "| method | i71 | i72 | min-max |" in lines
    assert "| a | 0.500 | 1.000 | 0.500-1.000 |" in lines
    assert "| b | 0.000 | 0.500 | 0.000-0.500 |" in lines
    assert "| f | a | b |" in lines
    assert "| 1 | **1.000** | 0.000 |" in lines  # the best bold
    assert "| 2 | **0.500** | **0.500** |" in lines  # ties: both
    assert not any(x.startswith("| 3 |") for x in lines)


def test_auto_dev_anytime_shares_below_the_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    auto_dev = load("auto_dev", monkeypatch)
    hits = [5] * 10 + [50] * 10 + [None] * 31  # 10 targets at 5 evaluations, 10 more at 50
    row = {"method": "a", "function": 1, "instance": 1, "dim": 2, "budget": 100}
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps({**row, "hits": hits, "seconds": 1.0}) + "\n")
    out = run_main(auto_dev, [str(path)])
    assert "| method | 10 x D | 20 x D | 30 x D | 50 x D |" in out
    ten, twenty = f"{10 / 51:.3f}", f"{20 / 51:.3f}"
    assert f"| a | {ten} | {ten} | {twenty} | {twenty} |" in out  # 20, 40, 60, 100 evaluations
