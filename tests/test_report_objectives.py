"""The report's section on several objectives: fronts, hypervolume curves, the text table."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from propulate.report.collect import collect
from propulate.report.pareto_section import ParetoFronts, hypervolume_curve, run_points
from propulate.report.section import ReportInputs
from propulate.report.sections import SECTIONS
from propulate.runs.declared_objectives import Objectives
from propulate.space import SearchSpace
from tests.pareto_utils import evolve_objectives

SPACE = SearchSpace({"a": (-2.0, 2.0), "b": (-2.0, 2.0)})


def evolve(out: Path, objectives: str | None, seed: int, n: int = 80) -> Path:
    declared = Objectives.maybe(objectives)

    def loss(p: dict[str, float]) -> object:
        f1, f2 = (p["a"] + 1) ** 2 + p["b"] ** 2, (p["a"] - 1) ** 2 + p["b"] ** 2
        return f1 if declared is None else {"f1": f1, "speed": -f2}

    meta = {"task": "t", "run": f"seed{seed}", "method": "propulate"}
    return evolve_objectives(loss, SPACE, objectives, out, n, seed, meta=meta)


def test_hypervolume_curve_grows_with_the_evaluations() -> None:
    pts = np.array([[1.0, 1.0], [0.5, 0.5], [0.0, 1.0], [1.0, 0.0]])
    curve = hypervolume_curve(pts, pts.min(axis=0), pts.max(axis=0))
    assert [k for k, _ in curve] == [1, 2, 3, 4]
    values = [v for _, v in curve]
    assert values == sorted(values) and values[0] == pytest.approx(0.1 * 0.1)
    # staircase (0, 1) (0.5, 0.5) (1, 0) under (1.1, 1.1), strips from the left:
    assert values[-1] == pytest.approx(1.1 * 0.1 + 0.6 * 0.5 + 0.1 * 0.5)


def test_the_section_draws_runs_with_several_objectives_only(tmp_path: Path) -> None:
    two = "f1:min,speed:max"
    runs = [evolve(tmp_path / f"r{s}", two, s) for s in (1, 2)]
    runs.append(evolve(tmp_path / "single", None, 3))
    campaign = collect(runs)
    assert len(campaign.searches) == 3
    pts = run_points(campaign.searches[0], Objectives.parse(two))
    assert pts.shape == (80, 2) and (pts[:, 1] >= 0).all()  # speed <= 0, signed to minimise
    section = ParetoFronts()
    assert any(isinstance(s, ParetoFronts) for s in SECTIONS)
    content = section.build(ReportInputs("c", pd.DataFrame(), campaign))
    assert content is not None
    assert [f.name for f in content.figures] == ["pareto_t"]
    assert content.figures[0].png.startswith(b"\x89PNG") and not content.figures[0].shown
    (plot,) = content.plots  # the page shows the interactive figure instead
    traces = json.loads(plot.figure)["data"]
    front = [t for t in traces if t.get("name") == "Pareto front"]
    assert len(front) == 1 and front[0]["customdata"]
    assert all("a = " in text and "b = " in text for text in front[0]["customdata"])
    scattered = [t for t in traces if t.get("mode") == "markers"]
    assert sorted(t["name"] for t in scattered) == sorted(r.label for r in campaign.searches[:2])
    curves = [t for t in traces if t.get("mode") == "lines" and t.get("xaxis") == "x2"]
    assert len(curves) == 2 and "speed = %{y" in front[0]["hovertemplate"]
    lines = content.texts["pareto.txt"].splitlines()
    assert len(lines) == 2 and all("f1:min,speed:max" in line for line in lines)
    assert all(0 < float(line.split()[-1]) <= 1.21 for line in lines)
    assert section.build(ReportInputs("c", pd.DataFrame(), collect(runs[2:]))) is None


def test_a_method_is_labelled_by_the_algorithm_its_run_used() -> None:
    """The Optuna baseline runs NSGA-II for several objectives, TPE for one (maximised or not)."""
    from propulate.methods import METHODS

    optuna = METHODS["optuna"]
    assert optuna.label_for(None) == optuna.label_for("x:max") == "Optuna TPE"
    assert optuna.label_for({"f1": "min", "speed": "max"}) == "Optuna NSGA-II"
    assert optuna.label_for(Objectives.parse("a,b,c")) == "Optuna NSGA-II"
    assert METHODS["propulate"].label_for("a,b") == METHODS["propulate"].label == "island model"
