"""Propulate 1.2's tutorials run unchanged: each one's code path, as its users call it, under
``mpiexec`` (our own equivalents in ``tests/mpi_scripts/tutorials12``: the same imports, calls
and command-line options as the nine tutorials that need no torch).

A failing rank must not leave the other ranks waiting: the multi-rank tutorial on too few
ranks, and a script whose rank 1 raises, end the whole job with a non-zero status.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from propulate.compat.utils.benchmark_functions import get_function_search_space
from propulate.runs.log import iter_records
from tests.mpi_utils import SCRIPTS, popen_mpi, run_mpi

pytestmark = pytest.mark.mpi
TUTORIALS = SCRIPTS / "tutorials12"
#: rank 0's summary line per island and its best individual (printed with 6 digits)
SUMMARY = re.compile(r"island (\d+): best \d+ of its individuals\n\s+\(1\) loss (\S+)")


def tutorial(
    name: str, n: int, args: list[str], cwd: Path, timeout: float = 120.0
) -> subprocess.CompletedProcess[str]:
    """Run the tutorial ``name`` on ``n`` ranks in ``cwd`` (non-zero exit fails the test)."""
    return run_mpi(n, [str(TUTORIALS / f"{name}.py"), *args], timeout=timeout, cwd=cwd)


def records(directory: Path) -> list[dict[str, Any]]:
    return list(iter_records(directory))


def summary_bests(stdout: str) -> dict[int, float]:
    """Island -> best loss, from the summary ``summarize()`` printed."""
    return {int(i): float(loss) for i, loss in SUMMARY.findall(stdout)}


def test_minimum_working_example(tmp_path: Path) -> None:
    proc = tutorial("minimum_working_example", 2, [], tmp_path)
    recs = records(tmp_path / "propulate_checkpoints")
    assert len(recs) == 2 * 40
    assert summary_bests(proc.stdout) == {0: pytest.approx(min(r["loss"] for r in recs), rel=1e-5)}


@pytest.mark.parametrize(
    ("name", "options"),
    [
        ("propulator_example", ["--function", "rosenbrock"]),
        ("cmaes_example", ["--adapter", "basic"]),
        ("cmaes_example", ["--adapter", "active"]),
        ("pso_example", ["--variant", "Basic"]),
        ("pso_example", ["--variant", "VelocityClamping"]),
        ("pso_example", ["--variant", "Constriction"]),
        ("pso_example", ["--variant", "Canonical", "--cognitive", "2.1"]),
        ("nm_example", ["--function", "himmelblau"]),
    ],
)
def test_single_island_tutorials(tmp_path: Path, name: str, options: list[str]) -> None:
    out = tmp_path / "ck"
    proc = tutorial(name, 2, ["--generations", "15", "--checkpoint", str(out), *options], tmp_path)
    recs = records(out)
    assert len(recs) == 2 * 15
    assert {r["rank"] for r in recs} == {0, 1}
    function = options[1] if options[0] == "--function" else "sphere"
    loss, limits = get_function_search_space(function)
    for r in recs:
        assert all(limits[k][0] <= v <= limits[k][1] for k, v in r["params"].items())
        assert r["loss"] == pytest.approx(loss(r["params"]))
    assert summary_bests(proc.stdout) == {0: pytest.approx(min(r["loss"] for r in recs), rel=1e-5)}
    assert (out / f"{name}.log").read_text().count("best 1 of its individuals") == 1


@pytest.mark.parametrize("pollination", [False, True])
def test_islands_example(tmp_path: Path, pollination: bool) -> None:
    out = tmp_path / "ck"
    args = ["--generations", "15", "--checkpoint", str(out), "--num_islands", "2"]
    proc = tutorial("islands_example", 4, args + ["--pollination"] * pollination, tmp_path)
    recs = records(out)
    assert len(recs) == 4 * 15
    assert {r["island"] for r in recs} == {0, 1}
    assert set(summary_bests(proc.stdout)) == {0, 1}


def test_multi_rank_workers_example(tmp_path: Path) -> None:
    """Four ranks: two workers of two ranks on two islands (the tutorial's defaults)."""
    out = tmp_path / "ck"
    proc = tutorial(
        "multi_rank_workers_example", 4, ["--generations", "15", "--checkpoint", str(out)], tmp_path
    )
    recs = records(out)
    assert len(recs) == 2 * 15
    assert {r["island"] for r in recs} == {0, 1}
    for r in recs:  # each rank of a worker squared one coordinate, the sum reduced over both
        assert r["loss"] == pytest.approx(r["params"]["a"] ** 2 + r["params"]["b"] ** 2)
    assert set(summary_bests(proc.stdout)) == {0, 1}


@pytest.mark.parametrize("kind", ["log", "mock"])
def test_surrogate_tutorials(tmp_path: Path, kind: str) -> None:
    """A 1.2 surrogate subclass of ``propulate.Surrogate`` sees every evaluation of the island
    (its own, and the other rank's replayed) with every epoch's value, and never cancels."""
    proc = run_mpi(2, [str(TUTORIALS / "surrogate_example.py"), str(tmp_path), kind])
    recs = records(tmp_path)
    assert len(recs) == 2 * 8 and all(r["status"] == "ok" for r in recs)
    assert all(len(r["curve"]) == 3 for r in recs)
    for rank in range(2):
        report = json.loads((tmp_path / f"surrogate-{rank}.json").read_text())
        assert report["surrogates"] == 1
        assert report["calls"] == {"start_run": 16, "cancel": 48, "update": 16}
        if kind == "log":
            assert report["best_loss"] == pytest.approx(min(r["loss"] for r in recs))
    if kind == "log":
        assert proc.stdout.count("LogSurrogate initialized") == 2
        assert proc.stdout.count("LogSurrogate - start_run: keys ['lr', 'momentum']") == 32


@pytest.mark.parametrize("kind", ["migrator", "pollinator"])
def test_migrator_and_pollinator_built_by_hand(tmp_path: Path, kind: str) -> None:
    run_mpi(2, [str(TUTORIALS / "migrator_example.py"), str(tmp_path), kind])
    recs = records(tmp_path)
    assert len(recs) == 2 * 60
    assert {r["island"] for r in recs} == {0, 1}
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["islands"] == 2


def ends_within(args: list[str], cwd: Path, seconds: float = 60.0) -> tuple[int, str]:
    """Run ``args`` on 2 ranks; its exit status and stderr, or fail if it is still running
    after ``seconds`` (then the job is killed)."""
    proc = popen_mpi(2, args, cwd=cwd)
    try:
        _, err = proc.communicate(timeout=seconds)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"{args[0]} still ran after {seconds} s: a rank waits on a dead one")
    return proc.returncode, err


def test_too_few_ranks_for_the_islands_end_the_job(tmp_path: Path) -> None:
    """The multi-rank tutorial's defaults (2 islands of 2-rank workers) on 2 ranks: 1 worker."""
    args = [str(TUTORIALS / "multi_rank_workers_example.py"), "--checkpoint", str(tmp_path)]
    code, err = ends_within(args, tmp_path)
    assert code != 0
    assert "1 workers cannot form 2 islands" in err


def test_an_error_on_one_rank_ends_the_job(tmp_path: Path) -> None:
    code, err = ends_within([str(TUTORIALS / "one_rank_fails.py"), str(tmp_path)], tmp_path)
    assert code != 0
    assert "rank 1 fails on purpose" in err
