"""An evolve run none of whose evaluations succeeded ends with status 1 and the first error
as the last line, also when its budget ran out before the failure limit."""

from __future__ import annotations

from pathlib import Path

import pytest

from propulate.cli.failed_run import no_success_message
from propulate.runs.log import EvaluationLog
from tests.evolve_utils import cli, evolve_args

FAILING = """\
def loss(params):
    raise RuntimeError(f"no matrix for a={params['a']:.1f}")
"""


@pytest.mark.slow
def test_a_run_whose_every_evaluation_failed_says_so_last(tmp_path: Path, space: Path) -> None:
    (tmp_path / "failing.py").write_text(FAILING)
    args = evolve_args(space, Path("run"), "--max-evaluations", "6", objective="failing:loss")
    proc = cli(*args, "--method", "random", cwd=tmp_path)  # 6 < the failure limit (20)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stderr.rstrip().splitlines()
    assert lines[-1].startswith("RuntimeError: no matrix for a="), proc.stderr
    assert any(
        line.startswith("propulate evolve: all 6 evaluations of the run failed") for line in lines
    )
    assert (tmp_path / "run" / "summary.json").is_file()  # the records stay summarized


def _log(out: Path, *outcomes: tuple[float | None, str, str | None, dict | None]) -> None:
    log = EvaluationLog(out, rank=0)
    for i, (loss, status, error, details) in enumerate(outcomes):
        log.append(
            {"a": float(i)},
            loss,
            island=0,
            generation=i,
            start=100.0 + i,
            seconds=1.0,
            status=status,
            error=error,
            details=details,
        )
    log.close()


def test_a_program_error_ends_with_its_error_line(tmp_path: Path) -> None:
    details = {"command": "driver --m 4", "exit_code": -11, "stderr": "Segmentation fault"}
    _log(
        tmp_path,
        (None, "failed", "EvaluationError: command exited with code -11", details),
        (None, "interrupted", None, None),
    )
    message = no_success_message(tmp_path)
    assert message is not None
    lines = message.splitlines()
    assert lines[0].startswith("propulate evolve: the only evaluation of the run failed")
    assert "command: driver --m 4" in lines and "  Segmentation fault" in lines
    assert lines[-1] == "EvaluationError: command exited with code -11"
    assert sum("command exited with code -11" in line for line in lines) == 1


def test_one_loss_or_a_pruned_evaluation_is_a_success(tmp_path: Path) -> None:
    _log(tmp_path / "ok", (None, "failed", "E: x", None), (1.0, "ok", None, None))
    _log(tmp_path / "pruned", (None, "failed", "E: x", None), (None, "pruned", None, None))
    _log(tmp_path / "nothing", (None, "interrupted", None, None))
    assert no_success_message(tmp_path / "ok") is None
    assert no_success_message(tmp_path / "pruned") is None
    assert no_success_message(tmp_path / "nothing") is None
