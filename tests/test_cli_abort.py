"""A failing rank ends the whole MPI job: ``main`` aborts COMM_WORLD with the failure's status.

The MPI test in ``test_cli_evolve_mpi.py`` shows that such a job ends; which process ended it is
not visible there (MPICH's own ``MPI_Abort`` message can be lost when mpiexec tears the job
down), so these tests check the abort itself, with a stand-in for ``mpi4py.MPI``.
"""

from __future__ import annotations

import argparse
import sys
import types
from collections.abc import Callable

import pytest

import propulate.cli as cli


class FakeWorld:
    def __init__(self, size: int) -> None:
        self.size = size
        self.aborted: list[int] = []

    def Get_size(self) -> int:  # noqa: N802 - mpi4py's name
        return self.size

    def Get_rank(self) -> int:  # noqa: N802 - mpi4py's name
        return 0

    def Abort(self, code: int) -> None:  # noqa: N802 - mpi4py's name
        self.aborted.append(code)


def exits_with(code: int) -> Callable[[argparse.Namespace], int]:
    """A command that ends with ``SystemExit(code)`` (as an objective calling ``sys.exit``)."""

    def command(_: argparse.Namespace) -> int:
        raise SystemExit(code)

    return command


def run_failing(
    monkeypatch: pytest.MonkeyPatch, fail: Callable[[argparse.Namespace], int], size: int = 2
) -> tuple[object, list[int]]:
    """``main`` with a command that runs ``fail``, in a fake ``size``-rank MPI job."""
    world = FakeWorld(size)
    mpi = types.SimpleNamespace(
        COMM_WORLD=world, Is_initialized=lambda: True, Is_finalized=lambda: False
    )
    monkeypatch.setitem(sys.modules, "mpi4py.MPI", mpi)
    parser = argparse.ArgumentParser()
    parser.set_defaults(command="evolve", func=fail)
    monkeypatch.setattr(cli, "build_parser", lambda command=None: parser)
    try:
        result: object = cli.main([])
    except BaseException as err:  # noqa: BLE001 - what main lets through is the result
        result = err
    return result, world.aborted


def test_an_objective_that_exits_aborts_the_job_with_its_status(monkeypatch) -> None:
    result, aborted = run_failing(monkeypatch, exits_with(3))
    assert aborted == [3]
    assert isinstance(result, SystemExit) and result.code == 3


@pytest.mark.parametrize(
    ("error", "code", "reraised"),
    [(RuntimeError("boom"), 1, True), (ValueError("bad space"), 2, False)],
)
def test_an_error_aborts_the_job(
    monkeypatch, capsys, error: Exception, code: int, reraised: bool
) -> None:
    def raises(_: argparse.Namespace) -> int:
        raise error

    result, aborted = run_failing(monkeypatch, raises)
    assert aborted == [code]
    # a bug is re-raised after the abort (with its traceback); a user error is a status
    assert result is error if reraised else result == code
    assert str(error) in capsys.readouterr().err


def test_interrupt_aborts_with_130(monkeypatch) -> None:
    def interrupted(_: argparse.Namespace) -> int:
        raise KeyboardInterrupt

    result, aborted = run_failing(monkeypatch, interrupted)
    assert aborted == [cli.INTERRUPTED] and result == cli.INTERRUPTED


def test_a_clean_exit_or_a_single_rank_aborts_nothing(monkeypatch) -> None:
    assert run_failing(monkeypatch, exits_with(0))[1] == []
    assert run_failing(monkeypatch, exits_with(3), size=1)[1] == []
