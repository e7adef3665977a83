"""The report's interactive figures: sampling, parameter choice, tables, the page's scripts."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd

from propulate.history import EvaluationLog
from propulate.report import aggregate, build_report
from propulate.report.collect import read_run
from propulate.report.interactive import MAX_POINTS, importance, sample_note, sample_rows
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
    plot = landscape_plot("t", [run])
    assert plot is not None
    layout = json.loads(plot.figure)["layout"]
    assert {layout["xaxis"]["title"]["text"], layout["yaxis"]["title"]["text"]} == {"a", "c"}


def test_convergence_plot_samples_a_large_run_and_says_so(tmp_path: Path) -> None:
    run = read_run(_run(tmp_path / "r", MAX_POINTS + 600))
    plot = convergence_plot("t", [run])
    traces = json.loads(plot.figure)["data"]
    markers = [t for t in traces if t["mode"] == "markers" and t["xaxis"] == "x"]
    assert sum(_length(t["x"]) for t in markers) == MAX_POINTS
    assert f"{MAX_POINTS:,} of {MAX_POINTS + 600:,} evaluations" in plot.caption
    failed = [t for t in markers if t["marker"]["symbol"] == "x"]
    assert failed and all("failed" in h for h in failed[0]["hovertemplate"])
    ok = [t for t in markers if t["marker"]["symbol"] == "circle"][0]
    assert re.search(r"loss [0-9.e-]+ \(ok\)<br>rank 0, island 0<br>a = ", ok["hovertemplate"][0])


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
