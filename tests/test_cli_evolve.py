"""``python -m propulate evolve``: help and defaults, input errors, resume checks, summary,
failures, Ctrl-C, objectives in the working directory.

Most checks run in-process or as one plain ``python`` process (a one-rank MPI job); only what
needs several ranks runs under ``mpiexec -n 2``. The Optuna baseline stands in where a real
run is needed; the tests of the island model's new interface (``Islands.result``,
``eval_timeout``, ``failure_limit``) are skipped until the engine provides it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from propulate.cli import build_parser, main
from propulate.cli.evolve_args import evolve_settings as settings_from_args
from propulate.history import iter_records, read_history
from propulate.methods import METHODS, SEARCH_METHODS
from propulate.runs.metadata import RunMetadata, read_run_metadata, write_run_metadata
from propulate.runs.summary import read_summary
from propulate.settings import EvolveSettings, defaults, described
from tests.mpi_utils import run_mpi

SPACE = """\
parameters:
  a: {type: float, low: -5.12, high: 5.12}
  b: [-5.12, 5.12]
"""
SPHERE = "propulate.objectives.benchmark:sphere"
USED_BY = {name: METHODS[name].settings for name in SEARCH_METHODS}


def _flag(name: str) -> str:
    return described(EvolveSettings, name).flag


try:
    from propulate.islands import Islands

    ENGINE = hasattr(Islands, "result")
except ImportError:  # pragma: no cover - mpi4py missing
    ENGINE = False
needs_engine = pytest.mark.skipif(
    not ENGINE, reason="needs the engine's Islands.result(), eval_timeout and failure_limit"
)


def cli(
    *args: str, cwd: Path | None = None, flags: tuple[str, ...] = (), timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``python [FLAGS] -m propulate ARGS`` as one process (one MPI rank)."""
    return subprocess.run(
        [sys.executable, *flags, "-m", "propulate", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
    )


@pytest.fixture
def space(tmp_path: Path) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(SPACE)
    return path


def evolve_args(space: Path, out: Path, *extra: str, objective: str = SPHERE) -> list[str]:
    return ["evolve", "--objective", objective, "--space", str(space), "--out", str(out), *extra]


def one_error_line(err: str) -> str:
    """The single line of an error message (fails on more, on a traceback or on nothing)."""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


# ------------------------------------------------------------------ help and defaults


def test_help_shows_every_option_with_its_default() -> None:
    parser = build_parser("evolve")
    sub = next(a for a in parser._actions if a.dest == "command").choices["evolve"]
    helps = {a.dest: " ".join((a.help or "").split()) for a in sub._actions}
    for name, value in defaults(EvolveSettings).items():
        shown = "pollination" if name == "pollination" else ("none" if value is None else value)
        assert f"(default: {shown})" in helps[name], name
    text = " ".join(cli("evolve", "--help").stdout.split())
    for flag in (
        "--eval-timeout SECONDS",
        "--failure-limit N",
        "(default: 20)",
        "0: never",
        "--method {propulate,optuna,random}",
    ):
        assert flag in text


def test_defaults_come_from_the_settings_and_every_option_sets_its_field(space: Path) -> None:
    parse = build_parser("evolve").parse_args
    base = evolve_args(space, Path("out"), "--max-evaluations", "5")
    assert settings_from_args(parse(base)) == EvolveSettings(max_evaluations=5)
    given = {
        "seed": 3,
        "generations": 4,
        "time_limit": 9.5,
        "eval_timeout": 2.5,
        "failure_limit": 0,
        "islands": 2,
        "pop_size": 5,
        "migration_probability": 0.3,
        "crossover_prob": 0.2,
        "mutation_prob": 0.1,
        "random_init_prob": 0.05,
        "sigma_factor": 0.2,
        "ranks_per_worker": 2,
        "progress_interval": 1.5,
    }
    argv = base + [x for k, v in given.items() for x in (_flag(k), str(v))] + ["--migration"]
    got = settings_from_args(parse(argv))
    assert got == EvolveSettings(max_evaluations=5, pollination=False, **given)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--max-evaluations", "0"], "argument --max-evaluations: must be at least 1, got 0"),
        (["--max-evaluations", "-4"], "--max-evaluations: must be at least 1"),
        (["--max-evaluations", "2.5"], "--max-evaluations: expected a whole number"),
        (["--time-limit", "nan"], "--time-limit: must be a finite number > 0, got nan"),
        (["--time-limit", "inf"], "--time-limit: must be a finite number > 0"),
        (["--time-limit", "0"], "--time-limit: must be a finite number > 0"),
        (["--time-limit", "-1"], "--time-limit: must be a finite number > 0"),
        (["--max-evaluations", "9", "--eval-timeout", "0"], "--eval-timeout: must be a finite"),
        (["--max-evaluations", "9", "--eval-timeout", "nan"], "--eval-timeout: must be a finite"),
        (
            ["--max-evaluations", "9", "--failure-limit", "-1"],
            "--failure-limit: must be at least 0",
        ),
        (["--max-evaluations", "9", "--migration-probability", "1.5"], "in [0, 1]"),
        (
            ["--max-evaluations", "9", "--method", "optuna", "--islands", "2"],
            "--islands is not used by --method optuna",
        ),
        (
            ["--max-evaluations", "9", "--method", "optuna", "--eval-timeout", "5"],
            "--eval-timeout is not used by --method optuna",
        ),
        (
            ["--max-evaluations", "9", "--method", "optuna", "--ranks-per-worker", "2"],
            "--ranks-per-worker is not used by --method optuna",
        ),
        (
            ["--max-evaluations", "9", "--method", "random", "--pop-size", "4"],
            "--pop-size is not used by --method random",
        ),
        (
            ["--max-evaluations", "9", "--method", "random", "--migration"],
            "--migration is not used by --method random",
        ),
        ([], "give a stopping criterion"),
        (["--max-evaluations", "9", "--bogus"], "unrecognized arguments: --bogus"),
    ],
)
def test_bad_options_are_one_line_and_exit_2(
    tmp_path: Path, space: Path, capsys: Any, extra: list[str], message: str
) -> None:
    assert main(evolve_args(space, tmp_path / "out", *extra)) == 2
    captured = capsys.readouterr()
    line = one_error_line(captured.err)
    assert line.startswith("propulate evolve: error: ") and message in line
    assert captured.out == ""
    assert not (tmp_path / "out").exists()


def test_every_option_unused_by_a_method_is_refused(
    tmp_path: Path, space: Path, capsys: Any
) -> None:
    values = {
        "seed": "1",
        "generations": "3",
        "time_limit": "5",
        "eval_timeout": "3",
        "failure_limit": "3",
        "islands": "2",
        "pop_size": "3",
        "migration_probability": "0.1",
        "crossover_prob": "0.1",
        "mutation_prob": "0.1",
        "random_init_prob": "0.2",
        "sigma_factor": "0.1",
        "ranks_per_worker": "2",
        "progress_interval": "3",
    }
    for method, used in USED_BY.items():
        for name, value in values.items():
            argv = evolve_args(
                space,
                tmp_path / "out",
                "--max-evaluations",
                "5",
                "--method",
                method,
                _flag(name),
                value,
            )
            if name in used:
                assert settings_from_args(build_parser("evolve").parse_args(argv)).method == method
            else:
                assert main(argv) == 2, (method, name)
                assert f"{_flag(name)} is not used by --method {method}" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("space_text", "objective", "message"),
    [
        ("parameters:\n  a: {type: float, low: 3, high: 1}\n", SPHERE, "parameter 'a'"),
        ("parameters: {}\n", SPHERE, "empty"),
        ("parameters: [unclosed\n", SPHERE, "not valid YAML"),
        (SPACE, "no_such_module:f", "no_such_module"),
        (SPACE, "propulate.objectives.benchmark:nope", "nope"),
        (
            SPACE,
            "broken_objective:loss",
            "importing objective broken_objective:loss failed: ZeroDivisionError",
        ),
    ],
)
def test_bad_input_fails_fast_with_a_message_naming_it(
    tmp_path: Path, space_text: str, objective: str, message: str, capsys: Any, monkeypatch: Any
) -> None:
    (tmp_path / "s.yaml").write_text(space_text)
    (tmp_path / "broken_objective.py").write_text("x = 1 / 0\n\ndef loss(p):\n    return 0.0\n")
    monkeypatch.chdir(tmp_path)  # the objective's module is found in the working directory
    monkeypatch.setattr(sys, "path", list(sys.path))
    assert (
        main(
            evolve_args(
                tmp_path / "s.yaml",
                tmp_path / "out",
                "--max-evaluations",
                "10",
                objective=objective,
            )
        )
        == 2
    )
    assert message in one_error_line(capsys.readouterr().err)
    assert not (tmp_path / "out").exists()


def test_out_that_is_a_file_or_not_writable(tmp_path: Path, space: Path, capsys: Any) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x")
    assert main(evolve_args(space, afile, "--max-evaluations", "5")) == 2
    assert "--out " + str(afile) + " is a file, not a directory" in one_error_line(
        capsys.readouterr().err
    )
    if os.geteuid() == 0:  # root writes everywhere except where the kernel forbids it
        readonly = Path("/sys/kernel")
        if not readonly.is_dir() or os.access(readonly, os.W_OK) and _writable(readonly):
            pytest.skip("no read-only directory for root here")
    else:
        readonly = tmp_path / "ro"
        readonly.mkdir()
        readonly.chmod(0o500)
    assert main(evolve_args(space, readonly, "--max-evaluations", "5")) == 2
    assert "is not a writable directory" in one_error_line(capsys.readouterr().err)
    assert main(evolve_args(space, readonly / "run", "--max-evaluations", "5")) == 2
    assert "cannot be created" in one_error_line(capsys.readouterr().err)


def _writable(path: Path) -> bool:
    try:
        (path / ".propulate-probe").write_text("")
    except OSError:
        return False
    (path / ".propulate-probe").unlink()
    return True


@pytest.mark.mpi
@pytest.mark.parametrize("case", ["option", "out is a file", "changed space"])
def test_errors_are_printed_once_and_every_rank_exits_2(
    tmp_path: Path, space: Path, case: str
) -> None:
    out = tmp_path / "out"
    extra = ["--max-evaluations", "5"]
    if case == "option":
        extra = ["--max-evaluations", "0"]
    elif case == "out is a file":
        out.write_text("")
    else:
        out.mkdir()
        write_run_metadata(
            out,
            RunMetadata(
                objective=SPHERE,
                space={
                    "parameters": {"a": {"type": "float", "low": -1.0, "high": 1.0, "log": False}}
                },
                method="propulate",
                run="seed0",
                seed=0,
            ),
        )
    proc = run_mpi(2, ["-m", "propulate", *evolve_args(space, out, *extra)], check=False)
    assert proc.returncode == 2, proc.stderr
    assert one_error_line(proc.stderr).startswith("propulate evolve: error: ")
    assert "MPI_Abort" not in proc.stdout + proc.stderr


# ------------------------------------------------------------------ resume checks


def _started(tmp_path: Path, space: Path) -> tuple[Path, bytes]:
    """A run directory as a first start leaves it: run.json and one log file."""
    from propulate.space import SearchSpace

    out = tmp_path / "run"
    out.mkdir()
    write_run_metadata(
        out,
        RunMetadata(
            objective=SPHERE,
            space=SearchSpace.from_yaml(space).to_dict(),
            method="propulate",
            run="seed0",
            seed=0,
            max_evaluations=5,
        ),
    )
    (out / "evals").mkdir()
    log = out / "evals" / "abcd-r00000.jsonl"
    log.write_text('{"params":{"a":1.0,"b":2.0},"loss":5.0,"status":"ok"}\n')
    return out, log.read_bytes()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"space": SPACE.replace("[-5.12, 5.12]", "[-5.12, 6]")},
            "parameter b was in [-5.12, 5.12], now in [-5.12, 6]",
        ),
        (
            {"space": SPACE + "  c: {type: int, low: 1, high: 128}\n"},
            "parameter c in [1, 128] (integer) was added",
        ),
        (
            {"objective": "propulate.objectives.benchmark:rastrigin"},
            f"objective changed from {SPHERE} to propulate.objectives.benchmark:rastrigin",
        ),
        ({"args": ["--seed", "2"]}, "run changed from seed0 (seed 0) to seed2 (seed 2)"),
        ({"args": ["--method", "random"]}, "method changed from propulate to random"),
    ],
)
def test_a_changed_resume_is_refused_before_any_evaluation(
    tmp_path: Path, space: Path, capsys: Any, change: dict[str, Any], message: str
) -> None:
    out, before = _started(tmp_path, space)
    stored = (out / "run.json").read_bytes()
    if "space" in change:
        space.write_text(change["space"])
    argv = evolve_args(
        space,
        out,
        "--max-evaluations",
        "10",
        *change.get("args", []),
        objective=change.get("objective", SPHERE),
    )
    assert main(argv) == 2
    line = one_error_line(capsys.readouterr().err)
    assert line.startswith(f"propulate evolve: error: run directory {out}: {message}")
    assert (out / "run.json").read_bytes() == stored
    assert [p.name for p in (out / "evals").iterdir()] == ["abcd-r00000.jsonl"]
    assert (out / "evals" / "abcd-r00000.jsonl").read_bytes() == before


# ------------------------------------------------------------------ real runs (one rank)


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


@pytest.mark.parametrize("method", ["optuna", pytest.param("propulate", marks=needs_engine)])
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


@pytest.mark.parametrize("method", ["optuna", pytest.param("propulate", marks=needs_engine)])
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


@needs_engine
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


# ------------------------------------------------------------------ MPI runs (island model)


@pytest.mark.mpi
@needs_engine
def test_evolve_writes_logs_summary_and_progress(tmp_path: Path, space: Path) -> None:
    proc = run_mpi(
        2,
        [
            "-m",
            "propulate",
            *evolve_args(
                space, tmp_path / "out", "--max-evaluations", "300", "--seed", "3", "--islands", "2"
            ),
        ],
    )
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["evaluations"] == 300 and summary["ranks"] == 2
    assert summary["run"] == "seed3" and summary["method"] == "propulate"
    assert summary["seed"] == 3 and summary["parameters"] == ["a", "b"]
    assert summary["best_loss"] < 1.0 and set(summary["best_params"]) == {"a", "b"}
    assert summary["failures"] == 0 and summary["wall_time"] > 0
    df = read_history(tmp_path / "out")
    assert len(df) == 300 and abs(df["loss"].min() - summary["best_loss"]) < 1e-12
    assert "evaluations 300/300" in proc.stdout


@pytest.mark.mpi
@needs_engine
def test_task_objective_gets_the_task_and_constraint(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text("parameters:\n  x: {type: float, low: 0.0, high: 1.0}\n")
    (tmp_path / "t.json").write_text(json.dumps({"id": "demo07", "task": {"t": 0.7}}))
    run_mpi(
        2,
        [
            "-m",
            "propulate",
            "evolve",
            "--objective",
            "propulate.objectives.demo:demo_loss",
            "--space",
            str(tmp_path / "s.yaml"),
            "--task",
            str(tmp_path / "t.json"),
            "--out",
            str(tmp_path / "out"),
            "--max-evaluations",
            "200",
        ],
    )
    df = read_history(tmp_path / "out")
    assert set(df["task"]) == {"demo07"}
    assert json.loads((tmp_path / "out" / "task.json").read_text())["task"] == {"t": 0.7}
    from propulate.objectives.demo import demo_true_optimum

    _, fstar = demo_true_optimum(0.7)
    assert df["loss"].min() - fstar < 0.05


@pytest.mark.mpi
@needs_engine
def test_a_rank_that_exits_ends_the_whole_job(tmp_path: Path, space: Path) -> None:
    # Rank 0's objective exits; rank 1 would otherwise wait on it (budget window) forever.
    (tmp_path / "exiting.py").write_text(
        "import sys\nimport time\nfrom mpi4py import MPI\n\n"
        "def loss(p):\n    if MPI.COMM_WORLD.rank == 0:\n        sys.exit(3)\n"
        "    time.sleep(0.01)\n    return p['a'] ** 2\n"
    )
    proc = run_mpi(
        2,
        [
            "-m",
            "propulate",
            *evolve_args(
                space, tmp_path / "out", "--max-evaluations", "1000", objective="exiting:loss"
            ),
        ],
        timeout=60,
        cwd=tmp_path,
        check=False,
    )
    # The job ended (within the timeout) with the objective's status. MPICH's own
    # "MPI_Abort(MPI_COMM_WORLD, 3)" line is not asserted: mpiexec can tear the job down before
    # it forwards that rank's stderr (seen once under load). test_cli_abort.py checks the abort.
    assert proc.returncode == 3
