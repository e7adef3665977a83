"""The report says what was tuned: its first lines name the objective, the space, the budget,
the methods and the machine; parameters searched on a log scale are drawn on log axes; every
plot is drawn without being scrolled into view; a Sobol total index is shown as an estimate
with its interval."""

from __future__ import annotations

import base64
import json
import math
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from propulate.report import aggregate, build_report
from propulate.report.collect import read_run
from propulate.report.header import describe_parameter
from propulate.report.interactive import log_coordinates
from propulate.report.plots import landscape_plot, parallel_plot
from propulate.report.sensitivity import heatmap_figure, heatmap_plot, st_label
from propulate.sensitivity.model import TaskSensitivity
from propulate.sensitivity.sobol import SobolIndices
from tests.browser_utils import load
from tests.evolve_utils import cli, evolve_args

SPACE = """\
parameters:
  lr: {type: float, low: 1.0e-5, high: 1.0e-1, log: true}
  layers: {type: int, low: 1, high: 8}
  act: {type: categorical, choices: [relu, tanh]}
  momentum: {type: float, low: 0.0, high: 0.9, when: {act: relu}}
"""

OBJECTIVE = """\
import math


def loss(params):
    return math.log10(params["lr"]) + 6 + 0.1 * (params["layers"] - 4) ** 2
"""


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real run of 60 evaluations of ``tuned:loss`` over :data:`SPACE`."""
    root = tmp_path_factory.mktemp("tuned")
    (root / "tuned.py").write_text(OBJECTIVE)
    (root / "space.yaml").write_text(SPACE)
    out = root / "runs" / "t"
    args = evolve_args(root / "space.yaml", out, "--max-evaluations", "60", objective="tuned:loss")
    proc = cli(*args, cwd=root)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def report(run_dir: Path) -> str:
    summary = run_dir.parent.parent / "summary.csv"
    aggregate([run_dir]).to_csv(summary, index=False)
    out = build_report(summary, [run_dir], run_dir.parent.parent / "report.html", title="t")
    return out.read_text()


def test_the_first_lines_say_what_was_tuned(report: str) -> None:
    body = re.sub(r"<script\b[^>]*>.*?</script>", "", report, flags=re.S)
    header = re.search(r'<dl class="tuned" id="what-was-tuned">(.*?)</dl>', body, re.S)
    assert header is not None
    text = re.sub(r"<[^>]+>", "|", header.group(1))
    assert "Objective||tuned:loss" in text
    assert "lr: float in [1e-05, 0.1] (log)" in text
    assert "layers: int in [1, 8]" in text
    assert "act: categorical in {relu, tanh}" in text
    assert "momentum: float in [0, 0.9], active when act relu" in text
    assert "1 search over 1 task: 1 run of at most 60 evaluations (60 evaluations done)" in text
    assert "Methods||propulate (1 run)" in text
    # the default propagator, auto, with its choice and reason (a conditional space, 60
    # evaluations: Bayesian optimisation)
    assert "Propagator||auto chose bo: 2 continuous + 1 integer + 1 categorical parameters" in text
    assert "(conditional parameters, a budget of at most 100 evaluations per parameter" in text
    # and who bred how much of the run: the race between bo and the GA
    bred = re.search(r"\(1 run; bred: (bo|ga) (\d+), (bo|ga) (\d+)\)", text)
    assert bred is not None and {bred.group(1), bred.group(3)} == {"bo", "ga"}, text
    assert int(bred.group(2)) + int(bred.group(4)) == 60
    assert re.search(r"Machine\|\|[^|]*\d+ cores", text), text
    # the first lines: before any other paragraph, table or plot of the page
    start = body.index("<h1>")
    for later in ('<p class="note">', "<table", '<figure class="plot">'):
        assert body.index(header.group(0)) - start < body.index(later) - start


def test_a_parameter_in_words() -> None:
    spec = {"type": "int", "low": 8, "high": 256, "log": True, "when": {"layers": ">= 3"}}
    assert (
        describe_parameter("width", spec) == "width: int in [8, 256] (log), active when layers >= 3"
    )


def test_log_coordinates_ticks_label_the_values() -> None:
    coords, axis = log_coordinates([1e-5, 1e-3, 0.1]) or ([], {})
    assert coords == pytest.approx([-5.0, -3.0, -1.0])
    assert axis["tickvals"] == pytest.approx([-5, -4, -3, -2, -1])
    assert axis["ticktext"] == ["1e-05", "0.0001", "0.001", "0.01", "0.1"]
    narrow = log_coordinates([0.01, 0.04])
    assert narrow is not None and narrow[1]["ticktext"] == ["0.01", "0.02"]
    assert log_coordinates([0.1, "-"]) is None and log_coordinates([0.0, 1.0]) is None


def test_log_parameters_are_on_log_axes(run_dir: Path) -> None:
    run = read_run(run_dir)
    plot = parallel_plot(run.task, [run])
    assert plot is not None
    dims = {d["label"]: d for d in json.loads(plot.figure)["data"][0]["dimensions"]}
    assert "lr (log)" in dims and "layers" in dims and "layers (log)" not in dims
    lr = run.history["lr"].to_numpy(dtype=float)
    shown = _values(dims["lr (log)"]["values"])
    assert min(shown) == pytest.approx(math.log10(lr.min()), abs=1e-4)
    assert max(shown) == pytest.approx(math.log10(lr.max()), abs=1e-4)
    assert "0.001" in dims["lr (log)"]["ticktext"]
    landscape = landscape_plot(run.task, [run])
    assert landscape is not None
    layout = json.loads(landscape.figure)["layout"]
    axes = {layout[a]["title"]["text"]: layout[a].get("type") for a in ("xaxis", "yaxis")}
    assert axes.get("lr (log)") == "log", axes  # lr, then layers, decide this loss
    assert axes.get("layers") in (None, "linear")


def _values(values: list | dict) -> np.ndarray:
    """A trace's coordinates (a list, or Plotly's base64 typed array)."""
    import base64

    if isinstance(values, dict):
        return np.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"])
    return np.asarray(values, dtype=float)


def _sensitivity(st: list[float], conf: list[float]) -> TaskSensitivity:
    d = len(st)
    indices = SobolIndices(
        names=tuple(f"p{i}" for i in range(d)),
        S1=np.full(d, 0.3),
        S1_conf=np.full(d, 0.02),
        ST=np.array(st),
        ST_conf=np.array(conf),
        S2=None,
        S2_conf=None,
        samples=256,
        evaluations=256 * (d + 2),
        seed=0,
        conf_level=0.95,
        variance=1.0,
    )
    return TaskSensitivity(id="t", task=None, trained=True, output="loss", indices=indices)


def test_a_total_index_above_one_is_shown_with_its_interval() -> None:
    result = _sensitivity([1.01, 0.2], [0.04, 0.01])
    assert st_label(1.01, 0.04) == "1.01 ± 0.04"
    trace = json.loads(heatmap_plot([result]).figure)["data"][0]
    assert trace["text"][0] == ["1.01 ± 0.04", "0.20 ± 0.01"]
    assert trace["texttemplate"] == "%{text}"
    assert heatmap_figure([result])[:8] == b"\x89PNG\r\n\x1a\n"


def _drawn(dom: str) -> tuple[list[str], list[bytes]]:
    """The plot divs of a rendered page, and the PNGs of those shown as still images."""
    divs = re.findall(r'<div id="[^"]+" class="plotly-plot[^"]*"[^>]*>', dom)
    stills = re.findall(r'class="plot-still"|src="data:image/png;base64,([^"]+)" alt="plot"', dom)
    return divs, [base64.b64decode(s) for s in stills if s]


@pytest.mark.slow
def test_every_plot_is_drawn_without_scrolling(report: str, run_dir: Path, tmp_path: Path) -> None:
    """In a window that shows only the top of the page, every plot is drawn after loading (a
    saved page, a full-page screenshot or a print shows them all)."""
    page = run_dir.parent.parent / "report.html"
    count = report.count('class="plotly-plot"')
    assert count >= 3
    loaded = load(page.as_uri(), tmp_path / "profile", budget_ms=8000, size=(1000, 700))
    divs, _ = _drawn(loaded.dom)
    assert len(divs) == count
    undrawn = [d for d in divs if 'data-drawn="1"' not in d]
    assert not undrawn, undrawn


@pytest.mark.slow
def test_many_webgl_plots_all_stay_visible(run_dir: Path, tmp_path: Path) -> None:
    """Twelve tasks' parallel coordinates: more WebGL contexts than a browser keeps alive. The
    ones away from the window become images of themselves (each a full plot, not a blank),
    the one near it stays live, and nothing fails."""
    root = run_dir.parent.parent
    runs = [tmp_path / "runs" / f"t{i}" for i in range(12)]

    def evolve(i: int) -> subprocess.CompletedProcess[str]:
        extra = ("--max-evaluations", "30", "--task-id", f"t{i}", "--seed", str(i))
        return cli(
            *evolve_args(root / "space.yaml", runs[i], *extra, objective="tuned:loss"), cwd=root
        )

    with ThreadPoolExecutor(max_workers=3) as pool:  # the runs are independent processes
        for proc in pool.map(evolve, range(len(runs))):
            assert proc.returncode == 0, proc.stderr[-2000:]
    aggregate(runs).to_csv(tmp_path / "summary.csv", index=False)
    page = build_report(tmp_path / "summary.csv", runs, tmp_path / "many.html", title="many")
    loaded = load(page.as_uri(), tmp_path / "profile", budget_ms=20000, size=(1000, 900))
    divs, pngs = _drawn(loaded.dom)
    webgl = [d for d in divs if 'data-gl="1"' in d]
    assert len(divs) == 36 and all('data-drawn="1"' in d for d in divs)
    assert len(webgl) == 12
    still = [d for d in webgl if 'data-still="1"' in d]
    assert len(still) == len(pngs) >= 10  # the few near the window may stay live
    assert all(len(png) > 20_000 for png in pngs), [len(p) for p in pngs]  # lines drawn
    assert not [m for m in loaded.console if "Error" in m or "Uncaught" in m], loaded.console
