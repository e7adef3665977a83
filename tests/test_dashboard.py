"""``python -m propulate dashboard``: incremental reading, Snakemake's log, the HTTP answers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from propulate.cli.dashboard_state import Live, LogCache, snakemake_progress, snakemake_runs
from propulate.cli.status import run_status
from tests.dashboard_utils import append, serving, start_run

SNAKEMAKE_LOG = """Assuming unrestricted shared filesystem usage.
  Date: 2026-12-05 05:39:05
  Config file(s): [PosixPath('{config}')]
Building DAG of jobs...
Job stats:
job          count
---------  -------
evolve           3
report           1
all              1
total            5

Select jobs to execute...
[Sat Dec  5 05:39:06 2026]
rule evolve:
    output: results/c/runs/a/summary.json
    jobid: 1
    reason: Missing output files
[Sat Dec  5 05:39:06 2026]
rule evolve:
    output: results/c/runs/b/summary.json
    jobid: 2
[Sat Dec  5 05:39:06 2026]
rule evolve:
    output: results/c/runs/d/summary.json
    jobid: 3
[Sat Dec  5 05:39:08 2026]
Finished jobid: 1 (Rule: evolve)
1 of 5 steps (20%) done
[Sat Dec  5 05:39:09 2026]
Error in rule evolve:
    jobid: 3
"""


def _tree(root: Path) -> dict[str, tuple[int, float]]:
    return {str(p): (p.stat().st_size, p.stat().st_mtime) for p in root.rglob("*")}


def test_cache_reads_only_what_was_appended(tmp_path: Path) -> None:
    run = tmp_path / "r"
    start_run(run)
    append(run, [3.0, None, 2.0])
    cache = LogCache()
    first = run_status(run, scan=cache.scan)
    assert (first.evaluations, first.failures, first.best_loss) == (3, 1, 2.0)
    read = cache.bytes_read
    assert run_status(run, scan=cache.scan).evaluations == 3 and cache.bytes_read == read
    log = next((run / "evals").glob("*.jsonl"))
    size = log.stat().st_size
    append(run, [5.0, 1.0], first=3)
    with log.open("ab") as fh:  # a writer killed mid-line: not a record (yet)
        fh.write(b'{"task": "t", "params": {"x"')
    again = run_status(run, scan=cache.scan)
    plain = run_status(run)
    assert (again.evaluations, again.failures, again.best_loss) == (5, 1, 1.0)
    assert (plain.evaluations, plain.best_loss, plain.rate) == (5, 1.0, again.rate)
    assert cache.bytes_read - read == log.stat().st_size - size  # each byte once
    assert cache.improvements(log) == [(1001.0, 3.0), (1003.0, 2.0), (1005.0, 1.0)]


def test_the_state_says_which_member_of_auto_bred_how_much(tmp_path: Path) -> None:
    """A run of ``auto`` that probed the landscape and handed the run to the GA: the dashboard's
    method cell says so, as ``status`` does, and keeps counting as records arrive."""
    from propulate.compat.history import EvaluationLog
    from propulate.runs.metadata import RunMetadata, write_run_metadata
    from propulate.runs.outcome import outcome_from
    from tests.dashboard_utils import META

    run = tmp_path / "r"
    chosen = {"spec": "auto", "first": "cma", "challenger": "ga", "race": 400, "reason": "..."}
    meta = RunMetadata(
        objective="m:f",
        space={"parameters": {}},
        method="propulate",
        run="seed0",
        seed=0,
        max_evaluations=2000,
        propagator={**chosen, "probe": 81, "probe_pick": "ga"},
    )
    write_run_metadata(run, meta)

    def bred(members: list[str], first: int) -> None:
        with EvaluationLog(run, 0, "s1", META) as log:
            for i, who in enumerate(members, start=first):
                outcome = outcome_from(float(i), None, None, None, None)
                outcome.start, outcome.seconds = 1000.0 + i, 1.0
                log.record({"x": i}, outcome, generation=i, state={"auto": who})

    bred(["probe"] * 3 + ["cma"], 0)
    live = Live(tmp_path)
    [row] = live.state()["runs"]
    assert row["method"] == (
        "auto: cma, probed for ga, raced ga (cma bred 1, ga bred 0, probe bred 3)"
    )
    bred(["ga"] * 5, 4)
    [row] = live.state()["runs"]
    assert row["method"].endswith("(cma bred 1, ga bred 5, probe bred 3)")


def test_snakemake_log_gives_jobs_done_running_failed(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("name: camp\n")
    logs = tmp_path / ".snakemake" / "log"
    logs.mkdir(parents=True)
    log = logs / "2026-12-05T053905.1.snakemake.log"
    log.write_text(SNAKEMAKE_LOG.format(config=config))
    info = snakemake_progress(log)
    assert (info["planned"], info["done"], info["campaign"]) == (5, 1, "camp")
    assert info["running"] == ["evolve", "evolve"] and info["failed"] == ["evolve"]
    assert info["rules"][0] == {"rule": "evolve", "planned": 3, "done": 1}
    (logs / "2026-12-05T060000.1.snakemake.log").write_text("Building DAG of jobs...\n")
    assert [r["log"] for r in snakemake_runs(tmp_path / ".snakemake")] == [log.name]  # --report
    (tmp_path / ".snakemake" / "locks").mkdir()
    assert not snakemake_runs(tmp_path / ".snakemake")[0]["active"]
    (tmp_path / ".snakemake" / "locks" / "0.input.lock").write_text("")
    assert snakemake_runs(tmp_path / ".snakemake")[0]["active"]


def test_server_answers_and_writes_nothing(tmp_path: Path) -> None:
    results = tmp_path / "results"
    start_run(results / "c" / "runs" / "a")
    append(results / "c" / "runs" / "a", [2.0, float("nan"), 1.0])
    before = _tree(tmp_path)
    with serving(Live(results)) as url:
        page = urllib.request.urlopen(url + "/").read().decode()
        assert "/api/state" in page and '<script src="/plotly.js">' in page
        state = json.loads(urllib.request.urlopen(url + "/api/state").read())
        assert urllib.request.urlopen(url + "/plotly.js").read().startswith(b"/**")
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(url + "/../etc/passwd")
    (run,) = state["runs"]
    assert run["path"] == "c/runs/a" and (run["evaluations"], run["budget"]) == (3, 10)
    assert run["best"] == 1.0 and run["best_over_time"] == [[1001.0, 2.0], [1003.0, 1.0]]
    assert run["state"].startswith("running")
    assert _tree(tmp_path) == before


def test_cli_serves_on_localhost(tmp_path: Path) -> None:
    start_run(tmp_path / "r")
    append(tmp_path / "r", [1.0])
    proc = subprocess.Popen(
        [sys.executable, "-m", "propulate", "dashboard", str(tmp_path), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert "http://127.0.0.1:" in line, line
        url = line.split()[-4]
        state = json.loads(urllib.request.urlopen(url + "api/state", timeout=10).read())
        assert state["runs"][0]["evaluations"] == 1
    finally:
        proc.terminate()
        proc.wait(timeout=10)
