"""The report and the dashboard in a real browser (headless Chromium): plots drawn, no
JavaScript errors, a screenshot of each in the test's directory; the live page follows a run."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from propulate.cli.dashboard_state import Live
from propulate.models.lcm import LCM
from propulate.report import aggregate, build_report
from tests.browser_utils import chromium, load
from tests.dashboard_utils import append, serving, start_run
from tests.report_utils import make_run


def _lcm(path: Path) -> Path:
    tasks = [{"id": "a"}, {"id": "b"}]
    lcm = LCM(np.zeros((2, 1)), [0, 1], [1.0, 2.0], n_tasks=2, latent=1, info={"tasks": tasks})
    lcm.W = np.array([[[1.0], [0.5]]])
    lcm.kappa = np.array([[0.1, 0.2]])
    lcm.save(path)
    return path


@pytest.mark.slow
def test_report_renders_without_errors(tmp_path: Path) -> None:
    chromium()
    rng = np.random.default_rng(3)
    runs = [
        make_run(tmp_path / "runs" / t, t, "propulate", "seed1", list(rng.random(40) + 0.1))
        for t in ("a", "b")
    ]
    summary = tmp_path / "summary.csv"
    aggregate(runs).to_csv(summary, index=False)
    out = build_report(summary, runs, tmp_path / "r.html", model=_lcm(tmp_path / "lcm.json"))
    shot = tmp_path / "report.png"
    page = load(out.as_uri() + "#all", tmp_path / "profile", screenshot=shot)
    assert page.console == []
    plots = re.findall(r'<div id="([^"]+)" class="plotly-plot([^"]*)"', page.dom)
    # convergence and parallel coordinates of a and b, the task correlation
    assert len(plots) == 5 and all("js-plotly-plot" in cls for _, cls in plots), plots
    assert page.dom.count('class="main-svg"') >= len(plots)
    assert page.dom.count('class="sortable"') >= 5  # the summary table's headers
    assert "heatmap" in page.dom and "parcoords" in page.dom
    assert shot.stat().st_size > 20_000


class _Growing(Live):
    """A live view whose run records two more evaluations after the page's first poll."""

    def __init__(self, root: Path, run: Path) -> None:
        super().__init__(root)
        self.run = run
        self.answers: list[dict[str, Any]] = []

    def state(self) -> dict[str, Any]:
        if len(self.answers) == 1:
            append(self.run, [0.5, None], first=3)
        self.answers.append(super().state())
        return self.answers[-1]


def test_dashboard_follows_a_run(tmp_path: Path) -> None:
    chromium()
    run = tmp_path / "results" / "c" / "runs" / "a"
    start_run(run)
    append(run, [3.0, 2.0, 1.0])
    live = _Growing(tmp_path / "results", run)
    shot = tmp_path / "dashboard.png"
    with serving(live, interval=1.0) as url:
        page = load(url + "/", tmp_path / "profile", budget_ms=4000, screenshot=shot)
    assert page.console == []
    first = live.answers[0]["runs"][0]
    assert (first["evaluations"], first["failures"], first["best"]) == (3, 0, 1.0)
    assert len(live.answers) >= 3  # the page polled again by itself
    row = re.search(r'<tr class="run">(.*?)</tr>', page.dom)
    assert row, page.dom[-2000:]
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row.group(1))
    assert cells[0] == "c/runs/a" and cells[1] == "5/10" and cells[3] == "1"
    assert cells[4] == "0.500" and cells[7].startswith("running")
    assert 'class="main-svg"' in page.dom  # the best loss over time
    assert shot.stat().st_size > 10_000
