"""A command objective's progress lines: values while the program runs, stopped programs'
process groups ended, a pattern that never matches."""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import Any

import pytest

from propulate.engine.evaluation import run_objective
from propulate.engine.steps import accepts_report
from propulate.pruners import Pruner
from propulate.user_objective import progress as progress_module
from propulate.user_objective.command import Command


class StopAt(Pruner):
    def __init__(self, step: float) -> None:
        self.step = step

    def should_stop(self, curve: Any) -> bool:
        return curve[-1][0] >= self.step


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_progress_values_reach_the_pruner_and_a_stop_ends_the_process_group(
    tmp_path: Path,
) -> None:
    pidfile = tmp_path / "child.pid"
    script = (
        f"sleep 60 & echo $! > {pidfile}; "
        "for i in 1 2 3 4 5 6 7 8; do echo epoch $i val_loss 0.{x}$i; sleep 0.3; done; "
        "echo final 0.{x}"
    )
    cmd = Command.from_config(
        {
            "command": f"bash -c '{script}'",
            "result": "final ([0-9.]+)",
            "progress": r"epoch (\d+) val_loss ([0-9.eE+-]+)",
        }
    )
    assert accepts_report(cmd)
    t = time.monotonic()
    out = run_objective(cmd, {"x": 5}, pruner=StopAt(3), report=True)
    assert time.monotonic() - t < 4  # not the 2.4 s of all epochs plus the sleeping child
    assert out.status == "pruned" and out.error == "stopped by the pruner at step 3"
    assert out.curve == [[1, 0.51], [2, 0.52], [3, 0.53]]
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid)  # the background child went with the group
    done = run_objective(cmd, {"x": 4}, report=True)  # no pruner: runs to the end
    assert done.ok and done.loss == 0.4 and len(done.curve) == 8


def test_progress_alone_gives_the_loss_and_steps_count_matching_lines() -> None:
    cmd = Command.from_config(
        {"command": "bash -c 'echo loss {x}; echo noise; echo loss 0.25'", "progress": "loss (.+)"}
    )
    out = run_objective(cmd, {"x": 0.5}, report=True)
    assert out.ok and out.loss == 0.25 and out.curve == [[0, 0.5], [1, 0.25]]
    assert cmd.to_config() == {"command": cmd.command, "progress": "loss (.+)"}
    bad = run_objective(cmd, {"x": "abc"}, report=True)
    assert bad.status == "failed" and "'abc'" in bad.error


def test_a_pattern_that_never_matches_stops_nothing_and_is_logged_once(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(progress_module, "_WARNED", set())
    cmd = Command.from_config(
        {
            "command": "bash -c 'echo result {x}'",
            "result": "result ([0-9.]+)",
            "progress": r"epoch (\d+) ([0-9.]+)",
        }
    )
    with caplog.at_level(logging.WARNING, logger="propulate"):
        for x in (0.5, 0.7):
            out = run_objective(cmd, {"x": x}, pruner=StopAt(0), report=True)
            assert out.ok and out.loss == x and out.curve == []
    warnings = [r for r in caplog.records if "matched no line" in r.getMessage()]
    assert len(warnings) == 1 and r"epoch (\d+)" in warnings[0].getMessage()


def test_progress_settings_are_checked() -> None:
    for cfg, match in (
        ({"command": "true", "progress": "no group"}, "needs 1 group"),
        ({"command": "true", "progress": "(a)(b)(c)"}, "needs 1 group"),
        ({"command": "true", "progress": "(["}, "progress regex"),
        ({"command": "true", "progress": "(x)", "repeats": 3}, "repeats 1"),
        ({"command": "true"}, "needs 'result'"),
    ):
        with pytest.raises(ValueError, match=match):
            Command.from_config(cfg)
