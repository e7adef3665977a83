"""Command objectives evaluated: values substituted as one argument each, result parsing,
failures, repeats, re-measurement of a lucky best, task values, environment and working
directory, and a child environment without launcher variables.

Process-level behaviour (timeouts, signals, nested MPI launches) is in
``tests/test_command_process.py``.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import numpy as np
import pytest

from propulate.runs.outcome import OK, EvaluationError, Outcome, evaluate
from propulate.user_objective import Command, bind_task, clean_environment, objective_from_config
from propulate.user_objective.template import format_value
from tests.command_utils import REGEX

PY = shlex.quote(sys.executable)

#: Writes its arguments as JSON to the file named by the first one, prints a loss.
ARGV_SCRIPT = """\
import json, sys
with open(sys.argv[1], "w") as fh:
    json.dump(sys.argv[2:], fh)
print("time: 1.0")
"""

#: Prints the next loss of the list in argv[2] (a counter in file argv[1] says which).
SEQUENCE_SCRIPT = """\
import os, sys
counter, values = sys.argv[1], sys.argv[2].split(",")
i = int(open(counter).read()) if os.path.exists(counter) else 0
open(counter, "w").write(str(i + 1))
value = values[min(i, len(values) - 1)]
if value == "fail":
    sys.exit("boom")
print(f"step {i}")
print(f"time: {value}")
"""


@pytest.fixture
def script(tmp_path: Path):
    """Write a Python script to ``tmp_path`` and return a command prefix that runs it."""

    def make(source: str, name: str = "prog.py") -> str:
        path = tmp_path / name
        path.write_text(source)
        return f"{PY} {shlex.quote(str(path))}"

    return make


def test_values_stay_one_argument_each(script, tmp_path: Path) -> None:
    """Spaces, negative numbers and shell characters in values never split or run anything."""
    out = tmp_path / "argv.json"
    cmd = Command(
        script(ARGV_SCRIPT) + " {out} --label {label} --x={x} {y} {cat} '{z} fixed'", result=REGEX
    )
    params = {
        "label": "a b  c",
        "x": -3,
        "y": -0.5,
        "cat": "ikj; touch pwned",
        "z": 1e-5,
        "out": str(out),
    }
    assert cmd(params) == 1.0
    expected = ["--label", "a b  c", "--x=-3", "-0.5", "ikj; touch pwned", "1e-05 fixed"]
    assert json.loads(out.read_text()) == expected
    assert cmd.argv(params)[-6:] == expected
    assert not (tmp_path / "pwned").exists()


def test_shell_script_gets_quoted_values(tmp_path: Path) -> None:
    """In ``bash -c SCRIPT`` each value is one shell word; ``$(...)`` in a value is not run."""
    out = tmp_path / "words"
    cmd = Command("bash -c 'printf \"%s|\" {a} {b} > {out}; echo time: 2'", result=REGEX)
    assert cmd({"a": "x y", "b": "$(touch pwned)", "out": str(out)}) == 2.0
    assert out.read_text() == "x y|$(touch pwned)|"
    assert not Path("pwned").exists() and not (tmp_path / "pwned").exists()


def test_value_formatting_and_brace_escapes() -> None:
    assert [format_value(v) for v in (3, 0.1, 1e-5, np.int64(7), np.float64(2.5), "ijk")] == [
        "3",
        "0.1",
        "1e-05",
        "7",
        "2.5",
        "ijk",
    ]
    cmd = Command("echo {{x}} {x} {} ${{HOME}}", result=REGEX)
    assert cmd.argv({"x": 4}) == ["echo", "{x}", "4", "{}", "${HOME}"]
    assert cmd.placeholders == ["x"]


@pytest.mark.parametrize(
    ("stdout", "result", "loss"),
    [
        ("time: 3\nmore\ntime: 1.5e-3\n", REGEX, 1.5e-3),  # the last match counts
        ('{"loss": 2.5, "n": 1}', {"json": "loss"}, 2.5),
        ('log line\n{"t": {"total": 7}}\n{"other": 1}\n', {"json": "t.total"}, 7.0),
        ('{\n  "loss": "4.25"\n}\n', {"json": "loss"}, 4.25),  # pretty-printed whole output
    ],
)
def test_result_parsing(stdout: str, result: object, loss: float) -> None:
    cmd = Command("printf %s {s}", result=result)  # type: ignore[arg-type]
    assert cmd({"s": stdout}) == loss


@pytest.mark.parametrize(
    ("stdout", "result", "message"),
    [
        ("nothing here", REGEX, "no match for result regex"),
        ("time: abc", "time: (\\w+)", "not a number"),
        ("time: nan", "time: (\\S+)", "not a finite number"),
        ('{"loss": true}', {"json": "loss"}, "not a number"),
        ('{"other": 1}', {"json": "loss"}, "no JSON object with key 'loss'"),
    ],
)
def test_unusable_output_fails(stdout: str, result: object, message: str) -> None:
    cmd = Command("printf %s {s}", result=result)  # type: ignore[arg-type]
    with pytest.raises(EvaluationError, match=message) as info:
        cmd({"s": stdout})
    assert info.value.details["exit_code"] == 0
    assert info.value.details["stdout"] == stdout.splitlines()[-1]


def test_bad_result_specs_fail_at_construction() -> None:
    with pytest.raises(ValueError, match="has no group"):
        Command("true", result="time: [0-9]+")
    with pytest.raises(ValueError, match="must be a regex string or"):
        Command("true", result={"yaml": "x"})
    with pytest.raises(ValueError, match="cannot be split"):
        Command("echo 'unbalanced", result=REGEX)


def test_nonzero_exit_keeps_code_and_stderr_tail(script) -> None:
    cmd = Command(
        script(
            "import sys\nfor i in range(30):\n    print('line', i, file=sys.stderr)\nsys.exit(3)\n"
        ),
        result=REGEX,
    )
    out = evaluate(cmd, {})
    assert out.status == "failed"
    assert "exited with code 3: line 29" in out.error
    assert out.details["exit_code"] == 3 and out.details["timed_out"] is False
    tail = out.details["stderr"].splitlines()
    assert tail == [f"line {i}" for i in range(10, 30)]
    assert out.details["losses"] == [None]


def test_repeats_give_the_median_and_keep_every_run(script, tmp_path: Path) -> None:
    cmd = Command(script(SEQUENCE_SCRIPT) + " {counter} 5,1,3", result=REGEX, repeats=3)
    out = evaluate(cmd, {"counter": str(tmp_path / "c")})
    assert out.status == OK and out.loss == 3.0
    assert out.details["losses"] == [5.0, 1.0, 3.0]
    assert len(out.details["times"]) == 3 and all(t > 0 for t in out.details["times"])
    assert [r["exit_code"] for r in out.details["runs"]] == [0, 0, 0]


def test_a_failing_repeat_fails_the_evaluation(script, tmp_path: Path) -> None:
    cmd = Command(script(SEQUENCE_SCRIPT) + " {counter} 2,fail,2", result=REGEX, repeats=3)
    with pytest.raises(
        EvaluationError, match="run 2 of 3: command exited with code 1: boom"
    ) as info:
        cmd({"counter": str(tmp_path / "c")})
    assert info.value.details["losses"] == [2.0, None]


def test_confirm_remeasures_a_lucky_best(script, tmp_path: Path) -> None:
    """One lucky run (1) followed by two normal ones (10): the confirmed loss is 10."""
    cmd = Command(script(SEQUENCE_SCRIPT) + " {counter} 1,10,10,10", result=REGEX)
    params = {"counter": str(tmp_path / "c")}
    first = evaluate(cmd, params)
    assert first.loss == 1.0
    confirmed = cmd.confirm(params, first)
    assert confirmed.status == OK and confirmed.loss == 10.0
    assert confirmed.details["losses"] == [1.0, 10.0, 10.0]  # default: max(repeats, 2) re-runs
    assert confirmed.details["confirmed"] is True and confirmed.details["first_loss"] == 1.0
    assert confirmed.start == first.start and confirmed.seconds >= first.seconds
    more = Command(cmd.command, result=REGEX, repeats=3, confirm_repeats=1)
    assert more.confirm(params, Outcome(4.0)).details["losses"] == [4.0, 10.0]


def test_confirm_keeps_failures_and_fails_on_a_failing_rerun(script, tmp_path: Path) -> None:
    cmd = Command(script(SEQUENCE_SCRIPT) + " {counter} 1,fail", result=REGEX)
    params = {"counter": str(tmp_path / "c")}
    bad = Outcome(None, "failed", "x")
    assert cmd.confirm(params, bad) is bad
    out = cmd.confirm(params, evaluate(cmd, params))
    assert out.status == "failed" and "run 1 of 2" in out.error
    assert out.details["confirmed"] is False and out.details["losses"] == [1.0, None]


def test_task_values_env_and_workdir(script, tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    prog = script("import os\nprint('time:', int(os.environ['NT']) * 100 + len(os.listdir()))\n")
    cmd = objective_from_config(
        {
            "command": prog + " --m {m}",
            "result": REGEX,
            "env": {"NT": "{threads}"},
            "workdir": str(tmp_path / "sub"),
        },
        task={"m": 5},
        space_names=["threads"],
    )
    assert isinstance(cmd, Command) and cmd.task == {"m": 5}
    assert cmd({"threads": 3}) == 300.0
    assert cmd({"threads": 2}, {"m": 1}) == 200.0  # an explicit task wins over the bound one
    assert bind_task(Command("true", result=REGEX), {"m": 1}).task == {"m": 1}


def test_child_environment_has_no_launcher_variables(monkeypatch, script) -> None:
    for name in (
        "PMI_RANK",
        "PMIX_RANK",
        "HYDRA_X",
        "OMPI_COMM_WORLD_RANK",
        "SLURM_PROCID",
        "SLURM_STEP_ID",
        "MPI_LOCALRANKID",
    ):
        monkeypatch.setenv(name, "1")
    monkeypatch.setenv("SLURM_JOB_ID", "42")
    env = clean_environment()
    assert env["SLURM_JOB_ID"] == "42" and "PATH" in env
    assert not {"PMI_RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID", "MPI_LOCALRANKID"} & set(env)
    prog = script(
        "import os\nprint('time:', sum(k.startswith(('PMI', 'HYDRA', 'OMPI', "
        "'SLURM_PROCID', 'SLURM_STEP', 'MPI_LOCAL')) for k in os.environ))\n"
    )
    assert Command(prog, result=REGEX)({}) == 0.0
