"""``python -m propulate evolve``: bad input (space, objective, ``--out``) fails fast with one
error line, printed once on every rank, and a resume whose space, objective, seed or method
changed is refused before any evaluation.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from propulate.cli import main
from propulate.runs.metadata import RunMetadata, write_run_metadata
from tests.evolve_utils import SPACE, SPHERE, evolve_args, one_error_line
from tests.mpi_utils import run_mpi


@pytest.mark.parametrize(
    ("space_text", "objective", "message"),
    [
        ("parameters:\n  a: {type: float, low: 3, high: 1}\n", SPHERE, "parameter 'a'"),
        ("parameters: {}\n", SPHERE, "empty"),
        ("parameters: [unclosed\n", SPHERE, "not valid YAML"),
        (SPACE, "no_such_module:f", "no_such_module"),
        (SPACE, "propulate.problems.benchmark:nope", "nope"),
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
            {"objective": "propulate.problems.benchmark:rastrigin"},
            f"objective changed from {SPHERE} to propulate.problems.benchmark:rastrigin",
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
