"""Aggregation and the HTML report on synthetic run directories."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from propulate.history import EvaluationLog
from propulate.report import aggregate, build_report, correlation, expand_runs, task_covariance

REPO = Path(__file__).resolve().parents[1]


def make_run(directory: Path, task: str, method: str, run: str, losses: list[float | None]) -> Path:
    """A run directory with one evaluation per loss (None: a failure), no summary.json."""
    meta = {"task": task, "run": run, "method": method}
    with EvaluationLog(directory, rank=0, meta=meta) as log:
        for i, loss in enumerate(losses):
            log.append({"x": i / 10}, loss, island=0, generation=i, start=100.0 + i, seconds=0.5)
    return directory


def test_aggregate_best_over_seeds_and_sums(tmp_path: Path) -> None:
    make_run(tmp_path / "a" / "s1", "a", "propulate", "seed1", [3.0, 2.0, None])
    make_run(tmp_path / "a" / "s2", "a", "propulate", "seed2", [1.5, 4.0])
    make_run(tmp_path / "b" / "s1", "b", "random", "seed1", [5.0])
    table = aggregate([tmp_path / "a" / "s1", tmp_path / "a" / "s2", tmp_path / "b" / "s1"])
    assert list(table["task"]) == ["a", "b"]
    row = table.iloc[0]
    assert row["best_loss"] == 1.5
    assert json.loads(row["best_params"]) == {"x": 0.0}
    assert row["evaluations"] == 5 and row["failures"] == 1 and row["runs"] == 2
    assert row["wall_time"] == 2.5 + 1.5  # per run: last finish - first start


def test_summary_json_wins_and_folders_expand(tmp_path: Path) -> None:
    run = make_run(tmp_path / "mla" / "t0", "t0", "mla", "0", [2.0])
    (run / "summary.json").write_text(
        json.dumps(
            {
                "task": "t0",
                "run": "0",
                "method": "mla",
                "best_params": {"x": 0.3},
                "best_loss": 0.5,
                "evaluations": 9,
                "failures": 0,
                "wall_time": 12.0,
            }
        )
    )
    make_run(tmp_path / "mla" / "t1", "t1", "mla", "0", [1.0])
    assert [p.name for p in expand_runs([tmp_path / "mla"])] == ["t0", "t1"]
    table = aggregate([tmp_path / "mla"])
    assert table.set_index("task").loc["t0", "evaluations"] == 9
    assert table.set_index("task").loc["t0", "best_loss"] == 0.5


def test_task_covariance_of_lcm_file() -> None:
    w = [[[1.0], [1.0], [-1.0]], [[0.0], [1.0], [0.0]]]  # (Q=2, tasks=3, rank=1)
    kappa = [[0.0, 0.0, 0.0], [1.0, 0.0, 1.0]]
    model = {
        "format": "propulate-lcm/1",
        "n_tasks": 3,
        "W": w,
        "kappa": kappa,
        "info": {"tasks": [{"id": "p"}, {"id": "q"}, {"id": "r"}]},
    }
    cov, ids = task_covariance(model)  # type: ignore[misc]
    assert ids == ["p", "q", "r"]
    expected = np.array([[2.0, 1.0, -1.0], [1.0, 2.0, -1.0], [-1.0, -1.0, 2.0]])
    np.testing.assert_allclose(cov, expected)
    corr = correlation(cov)
    np.testing.assert_allclose(np.diag(corr), 1.0)
    assert task_covariance({"format": "other"}) is None


def test_report_is_self_contained(tmp_path: Path) -> None:
    runs = [
        make_run(tmp_path / "runs" / "a", "a", "propulate", "seed1", [3.0, 2.0, 1.0]),
        make_run(tmp_path / "runs" / "b", "b", "propulate", "seed1", [4.0, 1.0]),
    ]
    tla1 = make_run(tmp_path / "new" / "tla1", "n", "tla1", "0", [1.2])
    (tla1 / "prediction.json").write_text(json.dumps({"task": "n", "params": {"x": 0.0}}))
    runs += [tla1, make_run(tmp_path / "new" / "tla2", "n", "tla2", "0", [1.3, 0.9])]
    summary = tmp_path / "summary.csv"
    aggregate(runs).to_csv(summary, index=False)
    out = build_report(summary, runs, tmp_path / "r.html", figures=tmp_path / "fig", title="t<1>")
    page = out.read_text()
    assert page.count("data:image/png;base64,") == 3  # two convergence plots, one transfer
    assert "t&lt;1&gt;" in page and "<t<1>" not in page
    assert "Transfer to new tasks" in page
    assert sorted(p.name for p in (tmp_path / "fig").iterdir()) == [
        "convergence_a.png",
        "convergence_b.png",
        "transfer_n.png",
    ]


def test_cli_aggregate(tmp_path: Path) -> None:
    run = make_run(tmp_path / "r", "a", "random", "seed0", [2.0, 1.0])
    out = tmp_path / "s" / "summary.csv"
    proc = subprocess.run(
        [sys.executable, "-m", "propulate", "aggregate", "--runs", str(run), "--out", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert pd.read_csv(out)["best_loss"].tolist() == [1.0]
    proc = subprocess.run(
        [sys.executable, "-m", "propulate", "aggregate", "--runs", "nope", "--out", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2 and "nope" in proc.stderr
