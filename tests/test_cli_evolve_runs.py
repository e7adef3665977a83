"""``python -m propulate evolve`` on one rank (one plain ``python`` process): an objective from
the working directory, run.json and the summary over a resume, parameters named like log
columns, the failure limit, Ctrl-C and the evaluation timeout.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import propulate
from propulate.compat.history import iter_records, read_history
from propulate.runs.metadata import read_run_metadata
from propulate.runs.summary import read_summary
from tests.evolve_utils import cli, evolve_args

# ------------------------------------------------------------------ real runs (one rank)


@pytest.mark.slow
def test_objective_in_the_working_directory_run_json_and_summary(
    tmp_path: Path, space: Path
) -> None:
    # -P: Python itself does not put the working directory on sys.path; the CLI does
    (tmp_path / "myobj.py").write_text("def loss(p):\n    return (p['a'] - 1) ** 2 + p['b'] ** 2\n")
    args = evolve_args(
        space,
        Path("run"),
        "--method",
        "optuna",
        "--max-evaluations",
        "8",
        "--progress-interval",
        "100",
        objective="myobj:loss",
    )
    proc = cli(*args, cwd=tmp_path, flags=("-P",))
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "run"
    meta = read_run_metadata(out)
    assert meta is not None and meta.objective == "myobj:loss" and meta.method == "optuna"
    assert meta.space["parameters"]["b"] == {
        "type": "float",
        "low": -5.12,
        "high": 5.12,
        "log": False,
    }
    assert meta.max_evaluations == 8 and meta.run == "seed0" and meta.seed == 0
    assert meta.version == propulate.__version__
    # a resume with a larger budget: the budget in run.json follows, the summary spans both
    args[args.index("8")] = "12"
    proc = cli(*args, cwd=tmp_path, flags=("-P",))
    assert proc.returncode == 0, proc.stderr
    assert read_run_metadata(out).max_evaluations == 12  # type: ignore[union-attr]
    records = list(iter_records(out))
    assert len(records) == 12 and len({r["session"] for r in records}) == 2
    summary = read_summary(out)
    assert summary is not None
    assert (summary.run, summary.seed, summary.method) == ("seed0", 0, "optuna")
    assert summary.parameters == ["a", "b"] and summary.evaluations == 12
    span = max(r["start"] + r["seconds"] for r in records) - min(r["start"] for r in records)
    assert summary.wall_time == pytest.approx(span)
    assert summary.evaluations_per_second == pytest.approx(12 / span)
    assert summary.best_loss == pytest.approx(min(r["loss"] for r in records))


def _log_names_allowed() -> bool:
    from propulate.space import SearchSpace

    try:
        SearchSpace({"status": (0.0, 1.0)})
    except ValueError:
        return False
    return True


@pytest.mark.slow
@pytest.mark.skipif(
    not _log_names_allowed(), reason="needs the space to accept names like 'status' (models branch)"
)
def test_parameters_may_take_the_log_columns_names(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(
        "parameters:\n  status: {type: float, low: -1, high: 1}\n"
        "  rank: {type: int, low: 0, high: 3}\n  method: {type: categorical, choices: [x, y]}\n"
    )
    (tmp_path / "named.py").write_text(
        "def loss(p):\n    return p['status'] ** 2 + p['rank'] + (p['method'] == 'y')\n"
    )
    proc = cli(
        *evolve_args(
            tmp_path / "s.yaml",
            Path("run"),
            "--method",
            "optuna",
            "--max-evaluations",
            "6",
            "--progress-interval",
            "100",
            objective="named:loss",
        ),
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    df = read_history(tmp_path / "run")
    assert df.attrs["parameters"] == ["param.status", "param.rank", "param.method"]
    assert (df["status"] == "ok").all() and (df["method"] == "optuna").all()
    assert df["param.rank"].between(0, 3).all() and set(df["param.method"]) <= {"x", "y"}
    summary = read_summary(tmp_path / "run")
    assert summary is not None and summary.parameters == ["status", "rank", "method"]


FAILING = """\
def loss(p):
    raise RuntimeError(f"no luck with a={p['a']:.3f}")
"""


@pytest.mark.parametrize("method", ["optuna", "propulate"])
def test_failure_limit_stops_with_the_first_traceback_once(
    tmp_path: Path, space: Path, method: str
) -> None:
    (tmp_path / "failing.py").write_text(FAILING)
    proc = cli(
        *evolve_args(
            space,
            Path("run"),
            "--method",
            method,
            "--max-evaluations",
            "50",
            "--failure-limit",
            "4",
            "--progress-interval",
            "100",
            objective="failing:loss",
        ),
        cwd=tmp_path,
    )
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.count("Traceback (most recent call last)") == 1
    assert "last 4 evaluations all failed" in proc.stderr
    assert "RuntimeError: no luck with a=" in proc.stderr
    records = list(iter_records(tmp_path / "run"))
    assert len(records) == 4 and all(r["status"] == "failed" for r in records)
    assert all("RuntimeError: no luck" in r["traceback"] for r in records)
    summary = read_summary(tmp_path / "run")
    assert summary is not None and summary.stop_reason == "failures"
    assert summary.failures == 4 and summary.best_loss is None


SLOW = """\
import time

def loss(p):
    time.sleep(0.05)
    return p['a'] ** 2
"""


@pytest.mark.parametrize("method", ["optuna", "propulate"])
def test_ctrl_c_stops_cleanly_and_writes_the_summary(
    tmp_path: Path, space: Path, method: str
) -> None:
    (tmp_path / "slow.py").write_text(SLOW)
    cmd = [
        sys.executable,
        "-m",
        "propulate",
        *evolve_args(
            space,
            Path("run"),
            "--method",
            method,
            "--time-limit",
            "100",
            "--progress-interval",
            "100",
            objective="slow:loss",
        ),
    ]
    proc = subprocess.Popen(
        cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(list(iter_records(tmp_path / "run"))) < 3:
            time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    summary = read_summary(tmp_path / "run")
    assert summary is not None and summary.stop_reason == "signal"
    assert summary.evaluations == len(list(iter_records(tmp_path / "run"))) >= 3


@pytest.mark.slow
def test_eval_timeout_records_a_timeout_and_goes_on(tmp_path: Path, space: Path) -> None:
    (tmp_path / "sleepy.py").write_text(
        "import time\n\ndef loss(p):\n    if p['a'] > 0:\n        time.sleep(30)\n"
        "    return p['a'] ** 2\n"
    )
    proc = cli(
        *evolve_args(
            space,
            Path("run"),
            "--method",
            "random",
            "--max-evaluations",
            "12",
            "--eval-timeout",
            "0.5",
            "--failure-limit",
            "0",
            "--progress-interval",
            "100",
            objective="sleepy:loss",
        ),
        cwd=tmp_path,
        timeout=90,
    )
    assert proc.returncode == 0, proc.stderr
    df = read_history(tmp_path / "run")
    assert len(df) == 12
    assert (df.loc[df["a"] > 0, "status"] == "timeout").all()
    assert (df.loc[df["a"] <= 0, "status"] == "ok").all()
