"""The report's interactive figures: sampling, parameter choice, tables, the page's scripts."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd

from propulate.compat.history import EvaluationLog
from propulate.report import aggregate, build_report
from propulate.report.collect import read_run
from propulate.report.interactive import (
    MAX_POINTS,
    hover_data,
    importance,
    improvements,
    point_budget,
    sample_note,
    sample_rows,
    sample_runs,
)
from propulate.report.plots import convergence_plot, landscape_plot, transfer_plot
from propulate.report.tables import html_table
from propulate.runs.table import best_so_far


def _run(directory: Path, n: int, seed: int = 0) -> Path:
    """A run whose loss is (a - 0.3)^2 + 0.1 c, b has no effect; some failures."""
    rng = np.random.default_rng(seed)
    meta = {"task": "t", "run": "seed1", "method": "propulate"}
    with EvaluationLog(directory, rank=0, meta=meta) as log:
        for i in range(n):
            params = {"a": float(rng.random()), "b": float(rng.random()), "c": int(i % 2)}
            loss = None if i % 50 == 7 else (params["a"] - 0.3) ** 2 + 0.1 * params["c"]
            log.append(params, loss, island=0, generation=i, start=10.0 + i, seconds=0.5)
    return directory


def _length(values: list | dict) -> int:
    """Points of a trace's coordinates (a list, or Plotly's base64 typed array)."""
    if isinstance(values, dict):
        return np.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"]).size
    return len(values)


def test_sample_keeps_every_improvement_and_the_limit() -> None:
    losses = np.linspace(10, 1, 20_000) + np.tile([0.0, 5.0], 10_000)  # improves every 2nd
    frame = pd.DataFrame(
        {"loss": losses, "start": np.arange(20_000.0), "seconds": 1.0, "rank": 0, "seq": 0}
    )
    curve = best_so_far(frame)
    kept = sample_rows(curve, limit=12_000)
    improved = curve["best_loss"] < curve["best_loss"].shift(1, fill_value=np.inf)
    assert set(curve.index[improved]) <= set(kept.index)
    assert len(kept) == 12_000 and kept.index.is_monotonic_increasing
    assert len(sample_rows(curve, limit=50_000)) == 20_000
    assert "12,000 of 20,000" in sample_note(12_000, 20_000) and sample_note(5, 5) == ""


def test_importance_ranks_the_parameter_that_drives_the_loss(tmp_path: Path) -> None:
    run = read_run(_run(tmp_path / "r", 400))
    frame = run.history
    scores = importance(frame, ["a", "b", "c"])
    assert scores["a"] > 0.3 and scores["b"] < 0.2 and scores["c"] > scores["b"]
    # a conditional parameter, active in a third of the evaluations, scored where it is
    frame = frame.assign(d=np.where(np.arange(len(frame)) % 3 == 0, frame["a"], np.nan))
    assert importance(frame, ["d"])["d"] > 0.3
    assert importance(frame.assign(d=np.nan), ["d"])["d"] == 0.0
    plot = landscape_plot("t", [run])
    assert plot is not None
    layout = json.loads(plot.figure)["layout"]
    assert {layout["xaxis"]["title"]["text"], layout["yaxis"]["title"]["text"]} == {"a", "c"}


def test_one_budget_per_plot_is_shared_by_its_runs() -> None:
    frames = []
    for n in (9_003, 3_003, 303):
        losses = np.r_[[5.0, 4.0, 3.0], np.full(n - 3, 9.0)]  # three improvements each
        frames.append(
            best_so_far(
                pd.DataFrame({"loss": losses, "start": np.arange(float(n)), "seconds": 1.0})
            )
        )
    kept = sample_runs(frames, limit=1_239)
    assert [len(k) for k in kept] == [3 + 900, 3 + 300, 3 + 30]  # 1,230 others, 9:3:0.3
    assert all(k.index[:3].tolist() == [0, 1, 2] for k in kept)
    assert sample_runs(frames, limit=20_000) == frames
    assert point_budget(3) == MAX_POINTS and point_budget(30) < MAX_POINTS / 2
    assert point_budget(10_000) >= 500


def test_convergence_plot_samples_a_large_run_and_says_so(tmp_path: Path) -> None:
    run = read_run(_run(tmp_path / "r", MAX_POINTS + 600))
    plot = convergence_plot("t", [run])
    traces = json.loads(plot.figure)["data"]
    markers = [t for t in traces if t["mode"] == "markers" and t["xaxis"] == "x"]
    assert sum(_length(t["x"]) for t in markers) == MAX_POINTS
    assert f"{MAX_POINTS:,} of {MAX_POINTS + 600:,} evaluations" in plot.caption
    failed = [t for t in markers if t["marker"]["symbol"] == "x"]
    assert failed and all("failed" in row[0] for row in failed[0]["customdata"])
    ok = [t for t in markers if t["marker"]["symbol"] == "circle"][0]
    assert ok["hovertemplate"].startswith("%{customdata[0]}<br>%{customdata[1]}<br>a = %{custom")
    head, where, a, b, c = ok["customdata"][0]
    assert re.fullmatch(r"loss [0-9.e-]+ \(ok\)", head) and where == "rank 0, island 0"
    assert len(a) <= 6 and c in {"0", "1"}
    right = [t for t in traces if t["mode"] == "markers" and t["xaxis"] == "x2"]
    assert all(len(row) == 3 for t in right for row in t["customdata"])  # no parameters


def test_runs_of_many_parameters_share_a_smaller_budget(tmp_path: Path) -> None:
    runs = []
    for seed in range(3):
        directory = tmp_path / f"r{seed}"
        meta = {"task": "t", "run": f"seed{seed}", "method": "propulate"}
        rng = np.random.default_rng(seed)
        with EvaluationLog(directory, rank=0, meta=meta) as log:
            for i in range(2_000):
                params = {f"x{j}": float(v) for j, v in enumerate(rng.random(30))}
                log.append(
                    params,
                    float(sum(params.values())),
                    island=0,
                    generation=i,
                    start=i,
                    seconds=0.1,
                )
        runs.append(read_run(directory))
    traces = json.loads(convergence_plot("t", runs).figure)["data"]
    drawn = sum(_length(t["x"]) for t in traces if t["mode"] == "markers" and t["xaxis"] == "x")
    improved = sum(int(improvements(best_so_far(r.history)).sum()) for r in runs)
    assert drawn == max(point_budget(30), improved) < 6_000
    assert len(json.loads(landscape_plot("t", runs).figure)["data"][0]["customdata"]) == drawn


def test_tables_round_configurations_and_numbers() -> None:
    df = pd.DataFrame(
        {"best_params": [json.dumps({"x": 0.123456789, "k": 3, "s": "a"})], "loss": [1 / 3]}
    )
    text = html_table(df)
    assert '"x": 0.1235' in text and '"k": 3' in text and "0.333<" in text
    assert "0.12345" not in text and "0.3333" not in text


def test_page_has_plotly_once_sortable_tables_and_no_links(tmp_path: Path) -> None:
    runs = [_run(tmp_path / "runs" / "t", 60)]
    summary = tmp_path / "summary.csv"
    aggregate(runs).to_csv(summary, index=False)
    page = build_report(summary, runs, tmp_path / "r.html", title="t").read_text()
    assert page.count("* plotly.js v") == 1
    assert page.count('class="plotly-plot"') == 3  # convergence, parallel, landscape
    assert 'th.addEventListener("click"' in page
    markup = re.sub(r"<script\b[^>]*>.*?</script>", "", page, flags=re.S)
    assert not re.search(r"(src|href)=\"(?!data:)", markup)
    for block in re.findall(r'<script type="application/json"[^>]*>(.*?)</script>', page, re.S):
        assert set(json.loads(block)) >= {"data", "layout"}


def test_transfer_plot_without_model_shows_the_measurements(tmp_path: Path) -> None:
    tla2 = read_run(_run(tmp_path / "tla2", 6))
    plot = transfer_plot("n", ({"params": {"a": 0.3}}, 0.05), tla2, None)
    names = [t.get("name") for t in json.loads(plot.figure)["data"]]
    assert names == ["TLA2 measured", "TLA2 best so far", "TLA1 prediction, measured"]
    assert plot.caption.startswith("No model predictions")


def test_hover_shows_the_repeats_of_one_loss_or_of_several_objectives() -> None:
    """A command's repeated runs: one loss each, or (several objectives) a mapping each."""
    one = {"losses": [0.3, 0.1, 0.2]}
    several = {"losses": [{"time": 0.02, "cpu": 0.04}, {"time": 0.03, "cpu": 0.05}]}
    frame = pd.DataFrame(
        {
            "loss": [0.2, 0.02, 1.0],
            "status": ["ok"] * 3,
            "rank": [0] * 3,
            "island": [0] * 3,
            "details": [one, several, None],
        }
    )
    rows, _ = hover_data(frame)
    assert rows[0][1].endswith("repeats n=3: 0.1-0.3")
    assert rows[1][1].endswith("repeats n=2: time 0.02-0.03, cpu 0.04-0.05")
    assert rows[2][1] == "rank 0, island 0"
