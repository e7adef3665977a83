"""Command objectives set up: checks before any evaluation (unknown placeholders, missing or
non-executable programs), launcher prefixes, the config round trip, the command-line flags,
the outlier rule, and the example campaign's C program.
"""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

import numpy as np
import pytest
import yaml

from propulate.runs.outcome import OK, EvaluationError, evaluate
from propulate.space import SearchSpace
from propulate.user_objective import (
    Command,
    add_command_arguments,
    command_from_args,
    is_outlier,
    load_objective,
    nearest_losses,
    objective_from_config,
)
from tests.command_utils import EXAMPLE, REGEX, build_matmul


def test_unknown_placeholder_fails_before_any_evaluation(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    config = {"command": f"touch {marker} --nb {{nbb}}", "result": REGEX, "env": {"X": "{threads}"}}
    with pytest.raises(ValueError) as info:
        objective_from_config(config, task={"m": 1}, space_names=["nb", "threads"])
    message = str(info.value)
    assert "{nbb}" in message and "known names: m, nb, threads" in message
    assert "\n" not in message
    assert not marker.exists()
    with pytest.raises(ValueError, match="no value for placeholder"):
        Command(config["command"], result=REGEX)({"nb": 1})


def test_missing_or_non_executable_program(tmp_path: Path) -> None:
    missing = Command("no-such-program-xyz --n {n}", result=REGEX)
    with pytest.raises(ValueError, match="'no-such-program-xyz' not found on PATH"):
        missing.check(["n"])
    with pytest.raises(EvaluationError, match="cannot run") as info:
        missing({"n": 1})
    assert info.value.details["exit_code"] is None
    plain = tmp_path / "app"
    plain.write_text("#!/bin/sh\necho time: 1\n")
    cmd = Command("./app", result=REGEX, workdir=str(tmp_path))
    with pytest.raises(ValueError, match="'./app' is not executable"):
        cmd.check([])
    plain.chmod(0o755)
    cmd.check([])
    assert cmd({}) == 1.0
    with pytest.raises(ValueError, match="'./bin/run' not found"):
        Command("./bin/run", result=REGEX, launcher="env", workdir=str(tmp_path)).check([])
    with pytest.raises(ValueError, match="not a directory"):
        Command("true", result=REGEX, workdir=str(tmp_path / "nope")).check([])


def test_launcher_prefix_and_nproc(tmp_path: Path) -> None:
    cmd = Command("./app --x {x}", result=REGEX, launcher="mpiexec -n {nproc}", nproc=4)
    assert cmd.argv({"x": 1}) == ["mpiexec", "-n", "4", "./app", "--x", "1"]
    assert cmd.argv({"x": 1, "nproc": 2})[:3] == ["mpiexec", "-n", "2"]


def test_from_config_round_trip_and_errors(tmp_path: Path) -> None:
    config = {
        "command": "./app {x}",
        "result": {"json": "t"},
        "timeout": 5,
        "repeats": 3,
        "launcher": "mpiexec -n {nproc}",
        "env": {"A": "{x}"},
        "workdir": "w",
    }
    assert Command.from_config(config).to_config() == config
    with pytest.raises(ValueError, match=r"unknown key\(s\) time_out \(known: command"):
        Command.from_config({**config, "time_out": 1})
    with pytest.raises(ValueError, match="needs 'result'"):
        Command.from_config({"command": "true"})
    for bad in ({"repeats": 0}, {"timeout": -1}, {"timeout": True}, {"env": ["A"]}):
        with pytest.raises(ValueError, match="objective"):
            Command.from_config({**config, **bad})
    path = tmp_path / "objective.yaml"
    path.write_text("command: \"printf 'time: {x}'\"\nresult: 'time: ([0-9.]+)'\n")
    assert load_objective(str(path))({"x": 2}) == 2.0
    path.write_text("command: a: b\n")
    with pytest.raises(ValueError, match="objective.yaml: not YAML"):
        load_objective(str(path))


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_command_arguments(parser)
    return parser.parse_args(argv)


def test_cli_flags_build_a_command() -> None:
    assert command_from_args(_parse([])) is None
    cmd = command_from_args(
        _parse(
            [
                "--objective-command",
                "./app --nb {nb}",
                "--result-json",
                "time",
                "--command-timeout",
                "30",
                "--repeats",
                "3",
                "--launcher",
                "srun -n {nproc} --exact",
                "--command-env",
                "OMP_NUM_THREADS={threads}",
                "--command-env",
                "X=a=b",
                "--workdir",
                "run",
            ]
        )
    )
    assert cmd is not None
    assert cmd.to_config() == {
        "command": "./app --nb {nb}",
        "result": {"json": "time"},
        "timeout": 30.0,
        "repeats": 3,
        "launcher": "srun -n {nproc} --exact",
        "env": {"OMP_NUM_THREADS": "{threads}", "X": "a=b"},
        "workdir": "run",
    }
    with pytest.raises(ValueError, match="--repeats need"):
        command_from_args(_parse(["--repeats", "2"]))
    with pytest.raises(ValueError, match="exactly one of --result-regex and --result-json"):
        command_from_args(_parse(["--objective-command", "true"]))
    with pytest.raises(ValueError, match="expected NAME=VALUE"):
        command_from_args(
            _parse(
                ["--objective-command", "true", "--result-regex", "(x)", "--command-env", "NOVALUE"]
            )
        )


def test_outlier_rule() -> None:
    neighbours = [1.0, 1.2, 0.9, 1.1]
    assert not is_outlier(1.3, neighbours)
    assert is_outlier(0.2, neighbours) and is_outlier(4.0, neighbours)
    assert not is_outlier(0.2, neighbours[:2])  # too few neighbours: no evidence
    assert not is_outlier(-1.0, neighbours)  # the ratio rule needs positive losses
    assert is_outlier(2.0, neighbours, factor=1.5)
    points = np.array([[0.0, 0.0], [0.1, 0.0], [1.0, 1.0], [0.0, 0.2]])
    assert nearest_losses([0.0, 0.05], points, [1.0, 2.0, 3.0, 4.0], k=2) == [1.0, 2.0]


def test_example_campaign_objective_runs_the_c_program(tmp_path: Path) -> None:
    """examples/command: the Makefile builds with the system cc; the campaign's objective passes
    its check against the campaign's spaces and measures; a bad argument is a failed run."""
    folder = build_matmul(tmp_path)
    config = yaml.safe_load((EXAMPLE / "campaign.yaml").read_text())
    params, tasks = (SearchSpace.from_dict(config[k]) for k in ("parameters", "task_space"))
    objective = {**config["objective"], "workdir": str(folder), "repeats": 2}
    cmd = objective_from_config(objective, task={"n": 64}, space_names=list(params))
    cmd.check(list(params), list(tasks))
    out = evaluate(cmd, {"nb": 16, "unroll": "4", "order": "ikj"})
    assert out.status == OK and out.loss > 0 and len(out.details["losses"]) == 2
    bad = evaluate(cmd, {"nb": 16, "unroll": "3", "order": "ikj"})
    assert (
        bad.details["exit_code"] == 2 and "--unroll must be 1, 2, 4 or 8" in bad.details["stderr"]
    )


def _matmul(folder: Path, *args: str) -> dict[str, str]:
    """The ``key: value`` lines ``matmul`` prints."""
    proc = subprocess.run(
        ["./matmul", *args], cwd=folder, capture_output=True, text=True, check=True, timeout=60
    )
    return dict(line.split(": ", 1) for line in proc.stdout.splitlines())


def test_matmul_threads_split_the_rows_and_report_cpu_time(tmp_path: Path) -> None:
    """``--threads T`` gives the checksum of one thread (every element summed in the same
    order) for both loop orders and uneven splits, and prints the wall and the CPU time."""
    folder = build_matmul(tmp_path)
    for order, n, nb in (("ikj", 97, 16), ("ijk", 61, 7)):
        base = ["--n", str(n), "--nb", str(nb), "--unroll", "4", "--order", order]
        one = _matmul(folder, *base, "--threads", "1")
        assert set(one) == {"checksum", "time", "cpu"}
        for threads in ("2", "3"):
            out = _matmul(folder, *base, "--threads", threads)
            assert set(out) == {"checksum", "time", "cpu"}
            assert out["checksum"] == one["checksum"]
            assert float(out["time"]) > 0 and float(out["cpu"]) > 0
    assert (
        _matmul(folder, "--n", "8")["checksum"]
        == _matmul(folder, "--n", "8", "--threads", "1")["checksum"]
    )  # the default is one thread
    bad = subprocess.run(
        ["./matmul", "--threads", "0"], cwd=folder, capture_output=True, text=True, check=False
    )
    assert bad.returncode == 2 and "--threads must be in 1..64" in bad.stderr


def test_two_objectives_example_is_a_valid_campaign(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """examples/command/two_objectives.yaml validates (its program built) and its objective
    reads both results of one run of the program."""
    from propulate.campaign import Campaign

    folder = build_matmul(tmp_path)
    config = yaml.safe_load((EXAMPLE / "two_objectives.yaml").read_text())
    monkeypatch.chdir(tmp_path)
    campaign = Campaign.from_config(config)
    assert campaign.evolve.objectives == "time:min:1,cpu:min:0.5"  # weighted for TLA, baselines
    assert sorted(campaign.new_tasks) == ["n300", "n560"] and campaign.baselines.default
    objective = {**config["objective"], "workdir": str(folder), "repeats": 1}
    cmd = objective_from_config(objective, task={"n": 48}, space_names=list(config["parameters"]))
    values = cmd({"nb": 16, "unroll": "2", "order": "ikj", "threads": 2})
    assert set(values) == {"time", "cpu"} and all(v > 0 for v in values.values())
