"""``python -m propulate evolve`` with a program as the objective, and task ids without tasks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from propulate.compat.history import iter_records
from propulate.runs.metadata import read_run_metadata
from propulate.runs.summary import read_summary

SPACE = """\
parameters:
  x: {type: int, low: -3, high: 3}
  word: {type: categorical, choices: [a, "b c"]}
"""
# The program prints |x| + len(word): the minimum 1 is at x = 0, word = a.
PROGRAM = "import sys; print('time:', abs(int(sys.argv[1])) + len(sys.argv[2]))"


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "propulate", "evolve", *args],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=cwd,
    )


@pytest.mark.slow
def test_a_program_is_the_objective(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(SPACE)
    command = f'{sys.executable} -c "{PROGRAM}" {{x}} {{word}}'
    proc = cli(
        "--objective-command",
        command,
        "--result-regex",
        r"time: ([0-9.]+)",
        "--space",
        "s.yaml",
        "--out",
        "run",
        "--max-evaluations",
        "14",
        "--method",
        "random",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    records = list(iter_records(tmp_path / "run"))
    assert len(records) == 14 and all(r["status"] == "ok" for r in records)
    for r in records:  # a value with a space stayed one argument
        assert r["loss"] == abs(r["params"]["x"]) + len(r["params"]["word"])
    summary = read_summary(tmp_path / "run")
    assert summary is not None and summary.best_loss == min(r["loss"] for r in records)
    assert read_run_metadata(tmp_path / "run").objective == f"command: {command}"


@pytest.mark.slow
def test_a_bad_command_fails_before_any_evaluation(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(SPACE)
    for command, needle in (("echo {nbb}", "{nbb}"), ("./missing-program {x}", "not found")):
        proc = cli(
            "--objective-command",
            command,
            "--result-regex",
            "t: (.*)",
            "--space",
            "s.yaml",
            "--out",
            "run",
            "--max-evaluations",
            "5",
            cwd=tmp_path,
        )
        assert proc.returncode == 2
        assert needle in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
        assert not (tmp_path / "run" / "evals").exists()
    proc = cli("--space", "s.yaml", "--out", "run", "--max-evaluations", "5", cwd=tmp_path)
    assert proc.returncode == 2 and "exactly one of --objective" in proc.stderr


def test_task_id_names_a_run_without_task_values(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text("parameters:\n  a: [-1.0, 1.0]\n  b: [-1.0, 1.0]\n")
    proc = cli(
        "--objective",
        "propulate.problems.benchmark:sphere",
        "--task-id",
        "sphere",
        "--space",
        "s.yaml",
        "--out",
        "run",
        "--max-evaluations",
        "6",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert {r["task"] for r in iter_records(tmp_path / "run")} == {"sphere"}
    summary = read_summary(tmp_path / "run")
    assert summary is not None and summary.task == "sphere" and summary.failures == 0


def test_a_program_that_always_fails_shows_its_own_error(tmp_path: Path) -> None:
    """The failure limit stops the run with the program's error: its exit code and the tail of
    its stderr, not a traceback through this package."""
    (tmp_path / "s.yaml").write_text(SPACE)
    failing = (
        "import sys; print('reading input', file=sys.stderr); "
        "print('fatal: no matrix file', file=sys.stderr); sys.exit(3)"
    )
    proc = cli(
        "--objective-command",
        f'{sys.executable} -c "{failing}" {{x}}',
        "--result-regex",
        r"time: ([0-9.]+)",
        "--space",
        "s.yaml",
        "--out",
        "run",
        "--max-evaluations",
        "20",
        "--failure-limit",
        "3",
        cwd=tmp_path,
    )
    assert proc.returncode == 1, proc.stderr
    final = proc.stderr[proc.stderr.index("propulate evolve: stopped:") :]
    assert "command exited with code 3" in final and "exit code: 3" in final
    assert "stderr (last lines):\n  reading input\n  fatal: no matrix file" in final
    assert "Traceback" not in proc.stderr and 'File "' not in proc.stderr
