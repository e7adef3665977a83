"""Command objectives as processes: timeouts and leftovers kill the whole process group, a
signal to the tuner kills its running program, and MPI programs launch from MPI ranks."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from propulate.runs.outcome import EvaluationError
from propulate.user_objective import Command
from tests.command_utils import REGEX
from tests.mpi_utils import mpiexec, run_mpi

REPO = Path(__file__).resolve().parents[1]


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not yet reaped by its new parent, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def _gone(pids: list[int], within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while any(_alive(p) for p in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _read_pids(path: Path, within: float = 30.0) -> list[int]:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().endswith("\n"):
            return [int(p) for p in path.read_text().split()]
        time.sleep(0.05)
    raise AssertionError(f"{path} was not written within {within} s")


def test_timeout_kills_the_grandchildren(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    cmd = Command(
        "bash -c 'sleep 100 & echo $! $$ > {pidfile}; sleep 100'",
        result=REGEX,
        timeout=1.0,
        kill_grace=1.0,
    )
    t0 = time.monotonic()
    with pytest.raises(
        EvaluationError, match=r"timed out after 1 s \(process group killed\)"
    ) as info:
        cmd({"pidfile": str(pidfile)})
    assert time.monotonic() - t0 < 30
    assert info.value.details["timed_out"] is True
    assert info.value.details["exit_code"] in (-signal.SIGTERM, -signal.SIGKILL)
    pids = _read_pids(pidfile)
    assert _gone(pids), f"processes {pids} survived the timeout"


def test_leftovers_of_a_finished_run_are_killed(tmp_path: Path) -> None:
    """A background grandchild holding stdout open neither blocks the tuner nor survives."""
    pidfile = tmp_path / "pids"
    cmd = Command(
        "bash -c 'sleep 100 & echo $! > {pidfile}; echo time: 0.5'", result=REGEX, timeout=60.0
    )
    t0 = time.monotonic()
    assert cmd({"pidfile": str(pidfile)}) == 0.5
    assert time.monotonic() - t0 < 30
    assert _gone(_read_pids(pidfile))


WAITER = """\
import signal, sys
from propulate.user_objective import Command

if sys.argv[2] == "raise":  # an engine-style handler that turns SIGTERM into an exception
    def stop(signum, frame):
        raise SystemExit(7)
    signal.signal(signal.SIGTERM, stop)
cmd = Command("bash -c 'sleep 100 & echo $! $$ > {pidfile}; sleep 100'", result="t: (.*)")
cmd({"pidfile": sys.argv[1]})
"""


@pytest.mark.parametrize(("mode", "exit_code"), [("default", -signal.SIGTERM), ("raise", 7)])
def test_sigterm_to_the_tuner_kills_its_program(tmp_path: Path, mode: str, exit_code: int) -> None:
    """With the default disposition the tuner still dies of SIGTERM, after killing the group;
    with a handler that raises, the exception propagates after the group was killed."""
    pidfile = tmp_path / "pids"
    script = tmp_path / "waiter.py"
    script.write_text(WAITER)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        [sys.executable, str(script), str(pidfile), mode],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        pids = _read_pids(pidfile)
        assert all(_alive(p) for p in pids)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == exit_code, err
        assert _gone(pids), f"processes {pids} survived SIGTERM to the tuner"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


NESTED = """\
import json, shlex, sys
from mpi4py import MPI
from propulate.user_objective import Command

mpiexec, out = sys.argv[1], sys.argv[2]
rank = MPI.COMM_WORLD.Get_rank()
# one write per line: two inner ranks share the pipe, and print() writes the newline apart
inner = ("from mpi4py import MPI; c = MPI.COMM_WORLD; "
         "v = c.Get_size() * 100 + c.Get_rank() + int(sys.argv[1]) * 1000; "
         "sys.stdout.write('size: %d' % v + chr(10)); sys.stdout.flush()")
cmd = Command(f"{shlex.quote(mpiexec)} -n 2 {shlex.quote(sys.executable)} -c "
              f"{shlex.quote('import sys; ' + inner)} {{x}}", result="size: ([0-9]+)",
              timeout=90)
values = [cmd({"x": rank}) for _ in range(2)]
# no launcher: an MPI program started directly must be a singleton, not a confused member of
# the tuner's job (the launcher's PMI variables are not inherited)
single = Command(f"{shlex.quote(sys.executable)} -c {shlex.quote('import sys; ' + inner)} {{x}}",
                 result="size: ([0-9]+)", timeout=90)
values.append(single({"x": rank}))
with open(f"{out}.{rank}", "w") as fh:
    json.dump(values, fh)
"""


def test_nested_mpiexec_from_a_two_rank_tuner(tmp_path: Path) -> None:
    """Each rank of ``mpiexec -n 2 python`` runs ``mpiexec -n 2 python`` as its objective: the
    inner job is a world of its own (size 2), not a part of the tuner's; and an MPI program run
    without a launcher is a singleton."""
    pytest.importorskip("mpi4py")
    script = tmp_path / "nested.py"
    script.write_text(NESTED)
    run_mpi(
        2,
        [str(script), mpiexec(), str(tmp_path / "out")],
        timeout=240,
        env={"PYTHONPATH": str(REPO)},
    )
    for rank in (0, 1):
        values = json.loads((tmp_path / f"out.{rank}").read_text())
        # the last line wins: rank 0 or 1 of the inner world of size 2, tagged by outer rank
        assert len(values) == 3
        assert all(v in (rank * 1000 + 200, rank * 1000 + 201) for v in values[:2]), values
        assert values[2] == rank * 1000 + 100, values  # a singleton: size 1, rank 0


def test_a_shell_script_sees_quoted_values_through_a_launcher(tmp_path: Path) -> None:
    """``LAUNCHER bash -c SCRIPT``: the script is still found and its values quoted."""
    out = tmp_path / "w"
    cmd = Command("bash -c 'printf %s {v} > {out}; echo time: 1'", result=REGEX, launcher="env A=1")
    assert cmd({"v": "a b;c", "out": str(out)}) == 1.0
    assert out.read_text() == "a b;c"
    assert shlex.split(cmd.argv({"v": "x y", "out": "o"})[-1])[2] == "x y"
