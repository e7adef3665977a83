"""The chaos test of whole campaigns (issue 47, benchmarks/chaos.py): its checker reports each
broken invariant, a few trials of faults at random moments end with no violation, and the bugs
the trials found stay fixed."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = Path(sys.executable).parent / "snakemake"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, REPO / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


check = _load("chaos_check")

RUN = "runs/a/propulate-s1"


def _record(x: float, loss: float | None, status: str = "ok", rank: int = 0) -> dict:
    return {"params": {"x": x}, "loss": loss, "status": status, "rank": rank, "seq": 0}


def _run(root: Path, records: list[dict], session: str = "s1", summary: bool = True) -> Path:
    """A run directory holding ``records`` in one session's file, and their summary."""
    from propulate.runs.summary import summarize, write_summary

    run = root / RUN
    (run / "evals").mkdir(parents=True, exist_ok=True)
    with open(run / "evals" / f"{session}-r00000.jsonl", "a") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in records)
    if summary:
        from propulate.runs.log import iter_records

        write_summary(run, summarize(iter_records(run), task="a", run="s1", method="propulate"))
    return run


GOOD = [_record(0.1, 2.0), _record(0.2, 1.0), _record(0.3, None, "failed")]


def test_a_consistent_run_keeps_the_record_invariants(tmp_path: Path) -> None:
    run = _run(tmp_path, GOOD)
    # a last line cut short by a kill is skipped by the readers: no violation
    with open(run / "evals" / "s1-r00000.jsonl", "a") as fh:
        fh.write('{"params": {"x": 0.')
    assert check.check_records(tmp_path) == []
    assert check.check_repeats(tmp_path) == ([], [])
    assert check.check_summaries(tmp_path) == []


def test_a_broken_line_inside_a_log_is_a_violation(tmp_path: Path) -> None:
    run = _run(tmp_path, GOOD)
    text = (run / "evals" / "s1-r00000.jsonl").read_text().splitlines()
    text.insert(1, '{"params": {"x": 0.5}, "lo')
    (run / "evals" / "s1-r00000.jsonl").write_text("\n".join(text) + "\n")
    (problem,) = check.check_records(tmp_path)
    assert "line 2 is not JSON" in problem


def test_a_configuration_recorded_twice_is_a_violation(tmp_path: Path) -> None:
    _run(tmp_path, [*GOOD, _record(0.2, 1.0, rank=1)])
    (problem,), concurrent = check.check_repeats(tmp_path)
    assert '{"x": 0.2} evaluated 2 times (evaluated more than once)' in problem and not concurrent
    # an evaluation the run's own stop interrupted is no evaluation: its resume may redo it
    other = tmp_path / "other"
    _run(other, [*GOOD, _record(0.2, None, "interrupted")])
    assert check.check_repeats(other) == ([], [])


def test_two_ranks_breeding_one_child_at_once_are_counted_apart(tmp_path: Path) -> None:
    """Found by chaos.py seed 106: ranks 0 and 1 both bred x = 0.0 (clipped to the bound) in
    the same 0.5 ms, before either heard of the other's (the engine's documented limit). Not a
    fault's repeat: reported apart; the same configuration in another session, or evaluated
    after the first one ended, stays a violation."""
    at = [
        dict(_record(0.0, 1.0, rank=k), session="s1", start=100.0 + k * 0.0005, seconds=0.2)
        for k in (0, 1)
    ]
    _run(tmp_path, [*GOOD, *at])
    problems, (same,) = check.check_repeats(tmp_path)
    assert problems == [] and "at the same moment by ranks [0, 1]" in same
    later = tmp_path / "later"
    _run(later, [*GOOD, at[0], {**at[1], "start": 100.3}])
    assert len(check.check_repeats(later)[0]) == 1
    resumed = tmp_path / "resumed"
    _run(resumed, [*GOOD, at[0]])
    _run(resumed, [{**at[1], "session": "s2"}], session="s2", summary=False)
    assert len(check.check_repeats(resumed)[0]) == 1


def test_a_summary_that_misses_records_is_a_violation(tmp_path: Path) -> None:
    _run(tmp_path, GOOD)
    _run(tmp_path, [_record(0.9, 0.5)], session="s2", summary=False)  # a later session
    problems = check.check_summaries(tmp_path)
    assert any("summary counts 3 evaluations, the records are 4" in p for p in problems)
    assert any("best loss 1.0 is not the records' 0.5" in p for p in problems)


def _calls(path: Path, out: str, n: int) -> Path:
    with open(path, "a") as fh:
        fh.writelines(json.dumps({"out": out, "t": 1.0, "x": i / n}) + "\n" for i in range(n))
    return path


def test_spending_more_than_one_evaluation_per_rank_beyond_the_budget_is_a_violation(
    tmp_path: Path,
) -> None:
    root = tmp_path / "results" / "c"
    _run(root, [_record(i / 10, float(i)) for i in range(4)])
    expected = check.Expected({RUN: 4}, {RUN: 2}, ["a"], [], [RUN])
    calls = check.count_calls(_calls(tmp_path / "calls", f"results/c/{RUN}", 6), root)
    problems, spent = check.check_budgets(root, expected, calls)
    assert problems == [] and spent.total_beyond == 2
    calls = check.count_calls(_calls(tmp_path / "calls", f"results/c/{RUN}", 1), root)
    problems, spent = check.check_budgets(root, expected, calls)
    assert spent.total_beyond == 3
    assert problems == [
        f"{RUN}: 7 objective calls for a budget of 4 (at most 6: one more per rank)"
    ]
    # records short of the budget: evaluations were lost
    problems, _ = check.check_budgets(root, check.Expected({RUN: 5}, {RUN: 2}, [], []), {})
    assert problems == [f"{RUN}: 4 records for a budget of 5"]


def _lease(folder: Path, pid: int, released: bool) -> None:
    folder.mkdir(parents=True)
    info = {"generation": 1, "host": os.uname().nodename, "pid": pid, "started": 1.0}
    info.update(heartbeat=1.0, released=released)
    (folder / "00000001.json").write_text(json.dumps(info))


def test_a_lease_left_by_a_dead_process_is_a_violation(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PROPULATE_LEASE_HOST", os.uname().nodename)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    _lease(tmp_path / "runs" / "a" / "lease", dead.pid, released=False)
    _lease(tmp_path / "tuning.sqlite.lease", dead.pid, released=True)
    (problem,) = check.check_leases(tmp_path)
    assert problem.startswith("runs/a/lease: lease 1 still held") and "(dead)" in problem


def test_an_evolve_log_without_its_first_attempt_is_a_violation(tmp_path: Path) -> None:
    _run(tmp_path, GOOD)
    _run(tmp_path, [_record(0.7, 3.0)], session="s2", summary=False)
    log = tmp_path / "logs" / "evolve" / "a" / "propulate-s1.log"
    log.parent.mkdir(parents=True)
    expected = check.Expected({}, {}, [], [], [RUN])
    log.write_text(f"results/x/{RUN}: resume\nfinished\n")  # truncated by the second attempt
    problems = check.check_evolve_logs(tmp_path, expected)
    assert "the first attempt's lines are gone" in problems[0]
    assert "1 attempts logged for 2 sessions" in problems[1]
    log.write_text(f"results/x/{RUN}: new\nkilled\nresults/x/{RUN}: resume\nfinished\n")
    assert check.check_evolve_logs(tmp_path, expected) == []


def test_the_tuning_database_must_hold_exactly_the_published_versions(tmp_path: Path) -> None:
    from propulate.tuningdb.store import TuningDB, TuningRow

    root = tmp_path / "results" / "c"
    run = _run(root, GOOD)
    source = str(run.relative_to(tmp_path))
    expected = check.Expected({}, {}, ["a"], [], [])

    def row(loss: float) -> TuningRow:
        return TuningRow("a", {"t": 1.0}, {"x": 0.2}, loss, "evolve", "propulate", 3, source=source)

    with TuningDB(root) as db:
        db.add(row(1.0))
    assert check.check_tuningdb(root, expected) == []
    (root / ".tuning.sqlite.123.abcd.tmp").write_bytes(b"half a version")
    assert check.check_tuningdb(root, expected) == [
        "unpublished versions of the tuning database left: ['.tuning.sqlite.123.abcd.tmp']"
    ]
    (root / ".tuning.sqlite.123.abcd.tmp").unlink()
    with TuningDB(root) as db:
        db.add(row(0.5))  # a second version: the campaign published one
    problems = check.check_tuningdb(root, expected)
    assert "task a has versions [1, 2], expected [1]" in problems[0]
    assert "stores loss 0.5, its run" in problems[1]


#: The CI's trials: seed 1 draws a SIGKILLed evolve rank, seed 2 a SIGKILLed Snakemake (while
#: MLA and transfer ran) whose re-run runs on a clock 45 s behind while the orphaned jobs go on.
#: A trial takes 40-80 s on this machine's 2 shared cores (these 2 took 82 s together), so the
#: issue's 20 CI trials (15-25 minutes) do not fit the suite's budget; the long mode runs more:
#: python benchmarks/chaos.py --long.
CI_TRIALS, CI_SEED = 2, 1


@pytest.mark.slow
@pytest.mark.skipif(not SNAKEMAKE.exists(), reason="snakemake not installed")
def test_campaigns_keep_their_invariants_under_random_faults(tmp_path: Path) -> None:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "chaos.py"), "--trials", str(CI_TRIALS)]
        + ["--seed", str(CI_SEED), "--dir", str(tmp_path), "--json", str(tmp_path / "c.json")],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
        check=False,
    )
    lines = proc.stdout.splitlines()
    assert proc.returncode == 0 and lines[-1] == "violations: 0", proc.stdout[-4000:]
    counts = json.loads((tmp_path / "c.json").read_text())["counts"]
    assert counts["trials"] == CI_TRIALS
    # both faults were injected (not missed), and each trial names its fault and moment
    assert counts["injected"] == {"rank": 1, "clock": 1}, counts
    assert sum(1 for line in lines if line.startswith("trial ") and " at " in line) == CI_TRIALS


faults = _load("chaos_faults")


def _can_mount(where: Path) -> str | None:
    problem = faults.mount_tmpfs(where, 1)
    if problem is None:
        faults.unmount(where)
    return problem


@pytest.mark.slow
@pytest.mark.skipif(not SNAKEMAKE.exists(), reason="snakemake not installed")
def test_a_campaign_whose_disk_fills_up_during_evolve_keeps_its_invariants(
    tmp_path: Path,
) -> None:
    """Seed 23 draws a full disk 1.2 s into the evolve jobs (records being written): the
    campaign runs on a 96 MB tmpfs, filled to the last byte for a moment, then freed."""
    problem = _can_mount(tmp_path / "probe")
    if problem:
        pytest.skip(f"a tmpfs cannot be mounted here (needs root): {problem}")
    proc = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "chaos.py"), "--trials", "1", "--seed", "23"]
        + ["--dir", str(tmp_path / "t"), "--json", str(tmp_path / "c.json")],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        check=False,
    )
    assert proc.returncode == 0 and proc.stdout.splitlines()[-1] == "violations: 0", proc.stdout
    counts = json.loads((tmp_path / "c.json").read_text())["counts"]
    assert counts["injected"] == {"disk": 1}, proc.stdout
    assert "disk full for" in proc.stdout
