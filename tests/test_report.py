"""Aggregation and the HTML report on synthetic run directories."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from propulate.compat.history import EvaluationLog
from propulate.models.lcm import LCM
from propulate.report import (
    aggregate,
    build_report,
    expand_runs,
    load_runs,
    read_runs,
    suite_table,
    target_checks,
    task_correlation,
)
from propulate.runs.summary import RunSummary, write_summary
from tests.report_utils import make_run

REPO = Path(__file__).resolve().parents[1]


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
    summary = RunSummary(
        task="t0",
        run="0",
        method="mla",
        parameters=["x"],
        best_params={"x": 0.3},
        best_loss=0.5,
        evaluations=9,
        failures=0,
        wall_time=12.0,
    )
    write_summary(run, summary)
    make_run(tmp_path / "mla" / "t1", "t1", "mla", "0", [1.0])
    assert [p.name for p in expand_runs([tmp_path / "mla"])] == ["t0", "t1"]
    table = aggregate([tmp_path / "mla"]).set_index("task")
    assert table.loc["t0", "evaluations"] == 9
    assert table.loc["t0", "best_loss"] == 0.5
    assert table.loc["t0", "wall_time"] == 12.0
    assert table.loc["t1", "evaluations"] == 1


def test_task_and_method_come_from_the_run_not_its_path(tmp_path: Path) -> None:
    # Directory names that say something else than the run: the summary and records win.
    with_summary = make_run(tmp_path / "wrong" / "random-s9", "a", "optuna", "seed1", [2.0])
    write_summary(
        with_summary,
        RunSummary(
            task="a",
            run="seed1",
            method="optuna",
            parameters=["x"],
            best_params={"x": 0.0},
            best_loss=2.0,
            evaluations=1,
        ),
    )
    make_run(tmp_path / "other" / "x", "b", "propulate", "seed2", [1.0])  # no summary yet
    table = aggregate([tmp_path / "wrong" / "random-s9", tmp_path / "other" / "x"])
    assert set(zip(table["task"], table["method"], strict=True)) == {
        ("a", "optuna"),
        ("b", "propulate"),
    }


def test_run_without_task_is_labelled_by_its_folder(tmp_path: Path) -> None:
    # An objective without tasks (e.g. a benchmark-suite function): task None in the records
    # and the summary; the folder holding the run names it, the method still comes from the run.
    run = tmp_path / "sphere" / "random-s1"
    meta = {"task": None, "run": "seed1", "method": "optuna"}
    with EvaluationLog(run, rank=0, meta=meta) as log:
        log.append({"x": 0.5}, 1.0, island=0, generation=0, start=1.0, seconds=1.0)
    table = aggregate([run])
    assert (table.loc[0, "task"], table.loc[0, "method"]) == ("sphere", "optuna")
    write_summary(
        run,
        RunSummary(
            task=None,
            run="seed1",
            method="optuna",
            best_loss=1.0,
            best_params={"x": 0.5},
            evaluations=1,
        ),
    )
    assert aggregate([run]).loc[0, "method"] == "optuna"


def test_parameters_named_like_model_outputs_are_kept(tmp_path: Path) -> None:
    """A space with parameters ``std``, ``mean``, ``mu`` and ``predicted`` keeps all of them in
    the best-configuration table, with and without a summary, and in the transfer table."""
    names = ["std", "mean", "mu", "predicted", "x"]

    def write(directory: Path, task: str, method: str, losses: list[float]) -> Path:
        meta = {"task": task, "run": "seed1", "method": method}
        with EvaluationLog(directory, rank=0, meta=meta) as log:
            for i, loss in enumerate(losses):
                params = {n: float(i + k) for k, n in enumerate(names)}
                log.append(params, loss, island=0, generation=i, start=10.0 + i, seconds=0.5)
        return directory

    no_summary = write(tmp_path / "a", "a", "propulate", [3.0, 1.0])
    with_summary = write(tmp_path / "b", "b", "propulate", [2.0])
    best = {n: float(k) for k, n in enumerate(names)}
    write_summary(
        with_summary,
        RunSummary(
            task="b",
            run="seed1",
            method="propulate",
            parameters=names,
            best_params=best,
            best_loss=2.0,
            evaluations=1,
        ),
    )
    tla2 = write(tmp_path / "tla2", "n", "tla2", [4.0, 0.5])
    runs = [no_summary, with_summary, tla2]
    table = aggregate(runs).set_index("task")
    assert json.loads(table.loc["a", "best_params"]) == {n: 1.0 + k for k, n in enumerate(names)}
    assert json.loads(table.loc["b", "best_params"]) == best
    summary = tmp_path / "summary.csv"
    aggregate(runs).to_csv(summary, index=False)
    page = build_report(summary, runs, tmp_path / "r.html").read_text()
    best_table, transfer = page.split("Transfer to new tasks")
    for name in names:
        # the best configurations of a, b and TLA2's n, and TLA2's in the transfer table
        assert best_table.count(f'"{name}": ') == 3, name
        assert transfer.count(f'"{name}": ') == 1, name


def test_task_correlation_of_lcm_file(tmp_path: Path) -> None:
    tasks = [{"id": "p"}, {"id": "q"}, {"id": "r"}]
    lcm = LCM(
        np.zeros((3, 1)), [0, 1, 2], [1.0, 2.0, 3.0], n_tasks=3, latent=2, info={"tasks": tasks}
    )
    lcm.W = np.array([[[1.0], [1.0], [-1.0]], [[0.0], [1.0], [0.0]]])  # (Q=2, tasks=3, rank=1)
    lcm.kappa = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 1.0]])
    lcm.save(tmp_path / "lcm.json")
    corr, ids = task_correlation(tmp_path / "lcm.json")  # type: ignore[misc]
    assert ids == ["p", "q", "r"]
    cov = np.array([[2.0, 1.0, -1.0], [1.0, 2.0, -1.0], [-1.0, -1.0, 2.0]])
    np.testing.assert_allclose(corr, cov / 2.0)
    (tmp_path / "other.json").write_text(json.dumps({"format": "other"}))
    assert task_correlation(tmp_path / "other.json") is None
    assert task_correlation(tmp_path / "missing.json") is None


@pytest.mark.slow
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
    # interactive: convergence and parallel coordinates of a and b, transfer of n (one
    # parameter: no landscape); plotly.js once; the PNGs only in the figures folder
    assert page.count('class="plotly-plot"') == 5 and page.count("* plotly.js v") == 1
    markup = re.sub(r"<script\b[^>]*>.*?</script>", "", page, flags=re.S)
    assert "data:image/png;base64," not in markup
    assert "t&lt;1&gt;" in page and "<t<1>" not in page
    assert "Transfer to new tasks" in page
    assert sorted(p.name for p in (tmp_path / "fig").iterdir()) == [
        "convergence_a.png",
        "convergence_b.png",
        "transfer_n.png",
    ]


@pytest.mark.slow
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


@pytest.mark.slow
def test_cli_report_names_missing_inputs(tmp_path: Path) -> None:
    run = make_run(tmp_path / "r", "a", "random", "seed0", [2.0, 1.0])
    summary = tmp_path / "summary.csv"
    aggregate([run]).to_csv(summary, index=False)
    base = [sys.executable, "-m", "propulate", "report", "--summary", str(summary)]
    out = ["--out", str(tmp_path / "r.html")]
    for extra, message in (
        (["--runs", str(run), "nope"], "run directories not found: nope"),
        (["--runs", str(run), "--model", "no.json"], "model file not found: no.json"),
    ):
        proc = subprocess.run(
            base + extra + out, cwd=REPO, capture_output=True, text=True, timeout=60, check=False
        )
        assert proc.returncode == 2 and message in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr
    proc = subprocess.run(
        base + ["--runs", str(run)] + out,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "r.html").is_file()


def test_suite_targets_from_summaries(tmp_path: Path) -> None:
    """The suite comparison takes best loss and evaluations per second from each summary."""
    runs = []
    for function in ("sphere", "rastrigin"):
        for method, loss, speed in (("propulate", 1.0, 1000.0), ("optuna", 2.0, 10.0)):
            run = make_run(tmp_path / function / f"{method}-s1", function, method, "seed1", [loss])
            summary = RunSummary(
                task=function,
                run="seed1",
                method=method,
                parameters=["x"],
                best_params={"x": 0.0},
                best_loss=loss,
                evaluations=1,
                wall_time=0.5,
                evaluations_per_second=speed if function == "sphere" else speed / 50,
            )
            write_summary(run, summary)
            runs.append(run)
    table = suite_table(load_runs(read_runs(runs)), ["sphere", "rastrigin"])
    assert list(table["function"]) == ["sphere", "sphere", "rastrigin", "rastrigin"]
    assert list(table["method"]) == ["propulate", "optuna"] * 2
    checks = {
        statement.split(" on ")[0]: (detail, met) for statement, detail, met in target_checks(table)
    }
    quality = checks["propulate's median best loss <= Optuna TPE's"]
    assert quality == ("2/2 functions", True)
    assert checks["quality vs random search"] == ("no random runs", None)
    speed = checks["propulate's evaluations per second >= 50 x Optuna's"]
    assert speed[1] is True and "min 100.0x" in speed[0]


def test_best_configuration_shows_the_spread_of_its_repeats(tmp_path: Path) -> None:
    """A command objective's repeats of the best configuration reach the summary table."""
    meta = {"task": "a", "run": "seed0", "method": "propulate"}
    with EvaluationLog(tmp_path / "r", rank=0, meta=meta) as log:
        log.append(
            {"nb": 32},
            0.021,
            island=0,
            generation=0,
            start=1.0,
            seconds=0.1,
            details={"losses": [0.021, 0.020, 0.024]},
        )
        log.append(
            {"nb": 64},
            0.050,
            island=0,
            generation=1,
            start=2.0,
            seconds=0.1,
            details={"losses": [0.05, 0.05, 0.06]},
        )
    row = aggregate([tmp_path / "r"]).iloc[0]
    assert json.loads(row["best_params"]) == {"nb": 32}
    assert row["best_repeats"] == "n=3: 0.02-0.024"
    make_run(tmp_path / "once", "b", "propulate", "seed0", [1.0, 2.0])
    assert aggregate([tmp_path / "once"]).iloc[0]["best_repeats"] == ""


def test_tables_round_leave_out_empty_columns_and_show_missing_values_alike() -> None:
    import pandas as pd

    from propulate.report.tables import html_table, spread_notes, summary_html

    df = pd.DataFrame(
        {
            "task": ["a", "b"],
            "loss": [0.017123612345, 12.3456789],
            "loss_std": [None, 0.00123456],  # missing as None in one row
            "best_repeats": [float("nan"), float("nan")],  # empty column
            "empty_text": ["", ""],
        }
    )
    html = html_table(df)
    assert "best_repeats" not in html and "empty_text" not in html
    assert "<td>0.0171</td>" in html and "<td>12.3</td>" in html and "<td>0.00123</td>" in html
    assert "<td>-</td>" in html and "None" not in html and "NaN" not in html
    assert "0.017123" not in html
    summary = pd.DataFrame(
        {
            "task": ["t", "t", "u"],
            "method": ["propulate", "random", "propulate"],
            "best_loss": [1.00, 1.02, 2.0],
            "best_repeats": ["n=3: 0.98-1.05", "", "n=3: 1.9-2.1"],
        }
    )
    assert spread_notes(summary) == [
        "differs from random by less than the spread of repeated measurements",
        "differs from propulate by less than the spread of repeated measurements",
        "",
    ]
    assert "by less than the spread of repeated measurements" in summary_html(summary)
