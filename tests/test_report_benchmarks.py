"""Measured benchmark tables in the report (``report.benchmarks``, ``report --benchmarks``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from propulate.campaign import Campaign, CampaignError
from propulate.report import aggregate, build_report
from propulate.report.benchmarks import BenchmarkFileError, benchmark_section, target_met
from tests.campaign_utils import config
from tests.report_utils import make_run

REPO = Path(__file__).resolve().parents[1]

BENCH: dict[str, Any] = {
    "title": "Multitask quality",
    "command": "python benchmarks/mla_demo.py --seeds 2",
    "commit": "abc1234",
    "tables": [
        {
            "caption": "4 training tasks",
            "columns": ["method", "median gap", "stuck"],
            "rows": [["MLA", 0.000123456, "10%"], ["GP-EI", 0.5, "30%"]],
        }
    ],
    "targets": [
        {"caption": "MLA better than GP-EI", "value": 0.7, "target": 0.65, "better": "higher"},
        {"caption": "MLA stuck", "value": 0.2, "target": 0.1, "better": "lower"},
    ],
}


def test_section_shows_tables_and_whether_targets_are_met(tmp_path: Path) -> None:
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(BENCH))
    page = benchmark_section([path])
    assert "<h2>Multitask quality</h2>" in page
    assert "python benchmarks/mla_demo.py --seeds 2" in page and "abc1234" in page
    assert "<caption>4 training tasks</caption>" in page
    assert "<td>0.0001235</td>" in page and "<td>10%</td>" in page
    assert "MLA better than GP-EI: 0.7 (&ge; 0.65 wanted): <b>met</b>" in page
    assert "MLA stuck: 0.2 (&le; 0.1 wanted): <b>not met</b>" in page
    assert benchmark_section([]) == ""


def test_target_met_counts_ties() -> None:
    assert target_met({"value": 0.65, "target": 0.65, "better": "higher"})
    assert target_met({"value": 0.1, "target": 0.1, "better": "lower"})
    assert not target_met({"value": 0.11, "target": 0.1, "better": "lower"})


@pytest.mark.parametrize(
    ("content", "text"),
    [
        ("{not json", "Expecting property name"),
        (json.dumps({"tables": []}), "'title'"),
        (json.dumps({**BENCH, "tables": [{"columns": ["a"], "rows": [[1, 2]]}]}), "1 cells"),
        (json.dumps({**BENCH, "targets": [{"value": 1, "target": 2}]}), "better"),
    ],
)
def test_bad_files_are_named(tmp_path: Path, content: str, text: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(BenchmarkFileError, match="bad.json") as info:
        benchmark_section([path])
    assert text in str(info.value)


@pytest.mark.slow
def test_report_cli_adds_the_section_and_refuses_a_bad_file(tmp_path: Path) -> None:
    run = make_run(tmp_path / "r", "a", "random", "seed0", [2.0, 1.0])
    summary = tmp_path / "summary.csv"
    aggregate([run]).to_csv(summary, index=False)
    good, bad = tmp_path / "bench.json", tmp_path / "bad.json"
    good.write_text(json.dumps(BENCH))
    bad.write_text("[]")
    base = [sys.executable, "-m", "propulate", "report", "--summary", str(summary)]
    base += ["--runs", str(run), "--out", str(tmp_path / "r.html"), "--benchmarks"]
    proc = subprocess.run(
        [*base, str(good)], cwd=REPO, capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert "Multitask quality" in (tmp_path / "r.html").read_text()
    proc = subprocess.run(
        [*base, str(bad)], cwd=REPO, capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 2 and "bad.json" in proc.stderr and "Traceback" not in proc.stderr
    page = build_report(summary, [run], tmp_path / "plain.html").read_text()
    assert "Multitask quality" not in page


def test_campaign_key_needs_existing_files(tmp_path: Path) -> None:
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(BENCH))
    assert Campaign.from_config(config(report={"benchmarks": [str(path)]})).report_benchmarks == (
        str(path),
    )
    with pytest.raises(CampaignError, match="report.benchmarks.*nope.json"):
        Campaign.from_config(config(report={"benchmarks": ["nope.json"]}))
