"""Sobol indices stored with the model in the tuning database (``suggest --explain``) and the
report's sensitivity section."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from propulate.cli import main
from propulate.models.lcm import LCM
from propulate.models.sampling import TaskData, build_lcm
from propulate.report.collect import Campaign, collect
from propulate.report.section import ReportInputs
from propulate.report.sensitivity import Sensitivity
from propulate.runs.files import write_json
from propulate.runs.log import EvaluationLog
from propulate.sensitivity.model import model_sensitivity
from propulate.space import SearchSpace
from propulate.tuningdb.explain import META_KEY, TRAINED
from propulate.tuningdb.ingest import update
from propulate.tuningdb.store import TuningDB, TuningRow
from propulate.tuningdb.suggest import suggest

CAMPAIGN = {
    "name": "mixed",
    "objective": "m:f",
    "parameters": {
        "x": {"type": "float", "low": 0.0, "high": 1.0},
        "n": {"type": "int", "low": 1, "high": 4},
        "kind": {"type": "categorical", "choices": ["a", "b"]},
    },
    "task_space": {"t": {"type": "float", "low": 0.0, "high": 1.0}},
}
SPACE = SearchSpace(CAMPAIGN["parameters"])
TASK_SPACE = SearchSpace(CAMPAIGN["task_space"])
MACHINE = {"cpu_model": "A", "cores": 2, "blas": "b", "mpi": "m", "hostname": "h"}


def family(p: dict, t: float) -> float:
    return (1.0 - t) * 3.0 * p["x"] + t * 0.8 * p["n"] + (0.3 if p["kind"] == "b" else 0.0)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database holding a fitted three-task model (and so its indices), and one tuned row."""
    root = tmp_path_factory.mktemp("db")
    tasks = []
    for i, t in enumerate((0.0, 0.5, 1.0)):
        params = SPACE.latin_hypercube(25, seed=i)
        tasks.append(TaskData(f"t{i}", {"t": t}, params, [family(p, t) for p in params]))
    model = build_lcm(tasks, SPACE, TASK_SPACE, latent=2, max_points=None).fit(restarts=1, seed=0)
    model.save(root / "lcm.json")
    assert update(root, CAMPAIGN, [], model=root / "lcm.json", fingerprint=MACHINE)["model"]
    with TuningDB(root) as store:
        store.add(
            TuningRow(
                task_id="t2",
                task={"t": 1.0},
                params={"x": 0.1, "n": 1, "kind": "a"},
                loss=0.9,
                method="evolve",
                algorithm="propulate",
                evaluations=25,
                fingerprint=MACHINE,
            )
        )
    return root


def test_update_stores_the_indices_of_every_training_task(db: Path) -> None:
    with TuningDB(db, readonly=True) as store:
        stored = store.get_meta(META_KEY)
    assert [t["task_id"] for t in stored["tasks"]] == ["t0", "t1", "t2"]
    model = LCM.load(db / "lcm.json")
    direct = model_sensitivity(model)
    for data, result in zip(stored["tasks"], direct, strict=True):
        assert data["indices"]["ST"] == pytest.approx(result.indices.as_mapping("ST"), rel=1e-12)
    assert stored["tasks"][0]["ranking"][0] == "x" and stored["tasks"][2]["ranking"][0] == "n"


def test_suggest_explains_trained_measured_and_unseen_tasks(db: Path, capsys) -> None:
    measured = suggest(db, "t=1", explain=True)
    assert measured["source"] == "measured" and measured["explain"]["basis"] == TRAINED
    assert measured["explain"]["drivers"][0] == "n" and "n (total" in measured["explain"]["text"]
    trained = suggest(db, {"t": 0.0}, explain=True)  # a training task without a row
    assert trained["source"] == "tla1" and trained["explain"]["drivers"][0] == "x"
    assert "explain" not in suggest(db, {"t": 0.0})

    # an unseen task: the indices of the model's prediction, as the sensitivity command gives
    unseen = suggest(db, {"t": 0.3}, explain=True)["explain"]
    assert unseen["basis"].startswith("predicted")
    (direct,) = model_sensitivity(LCM.load(db / "lcm.json"), [{"t": 0.3}])
    assert unseen["ST"] == pytest.approx(direct.indices.as_mapping("ST"), abs=1e-9)
    assert unseen["S1"] == pytest.approx(direct.indices.as_mapping("S1"), abs=1e-9)

    assert main(["suggest", "--campaign", str(db), "--task", "t=0.3", "--explain"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["explain"]["drivers"] == unseen["drivers"]


def test_a_database_without_stored_indices_computes_a_training_tasks(
    db: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "tuning.sqlite"
    copy.write_bytes((db / "tuning.sqlite").read_bytes())
    with TuningDB(copy) as store:
        stored = store.get_meta(META_KEY)
        store.set_meta(META_KEY, None)  # as a database filled before the indices were stored
    got = suggest(copy, {"t": 0.5}, explain=True)["explain"]
    assert got["basis"] == TRAINED
    assert got["ST"] == pytest.approx(stored["tasks"][1]["indices"]["ST"], abs=1e-9)


def new_task_run(directory: Path, task_id: str, t: float) -> None:
    """A TLA1 run directory of a new task: one record, prediction.json, task.json."""
    params = {"x": 0.2, "n": 2, "kind": "a"}
    with EvaluationLog(
        directory, 0, meta={"task": task_id, "run": "tla1", "method": "tla1"}
    ) as log:
        log.append(params, family(params, t), island=0, generation=0, start=0.0, seconds=0.1)
    write_json(directory / "prediction.json", {"task": task_id, "params": params, "std": {}})
    write_json(directory / "task.json", {"id": task_id, "task": {"t": t}})


def test_report_section_shows_training_and_new_tasks(db: Path, tmp_path: Path) -> None:
    new_task_run(tmp_path / "tnew" / "tla1", "tnew", 0.3)
    inputs = ReportInputs("mixed", pd.DataFrame(), collect([tmp_path / "tnew" / "tla1"]))
    inputs.model = db / "lcm.json"
    content = Sensitivity().build(inputs)
    assert content is not None and "Which parameters matter" in content.html
    assert [f.name for f in content.figures] == ["sensitivity_tasks", "sensitivity_heatmap"]
    assert all(f.png.startswith(b"\x89PNG") for f in content.figures)
    assert [f.shown for f in content.figures] == [True, False]  # the heatmap is interactive
    (heat,) = json.loads(content.plots[0].figure)["data"]
    assert heat["y"][-1].startswith("tnew") and heat["y"][-1].endswith("(predicted)")
    assert heat["customdata"][0][0].count("±") == 2  # hover: S1 and ST with their intervals
    assert re.fullmatch(r"-?\d\.\d\d ± \d\.\d\d", heat["text"][0][0])  # cell: ST ± h
    text = content.texts["sensitivity.txt"]
    assert "tnew" in text and "predicted" in text and text.count("trained") == 3
    # no model, or a model file without spaces: no section
    empty = Campaign([], [], {}, {})
    assert Sensitivity().build(ReportInputs("x", pd.DataFrame(), empty)) is None
    bare = LCM(np.random.default_rng(0).random((5, 3)), [0] * 5, np.arange(5.0), 1)
    bare.save(tmp_path / "bare.json")
    assert (
        Sensitivity().build(ReportInputs("x", pd.DataFrame(), empty, tmp_path / "bare.json"))
        is None
    )
