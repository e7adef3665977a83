"""What the suite benchmarks (``bbob.py``, ``biobj.py``) share: a COCO problem with its optimal
parameters, their command-line ranges, one timed optimization on every rank, the ``mpiexec`` of
their engine side, and their resumable JSON-lines result files."""

from __future__ import annotations

import contextlib
import json
import random
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from propulate.space import SearchSpace


def coco_problem(suite: str, function: int, instance: int, dim: int) -> tuple[Any, np.ndarray]:
    """A problem of COCO's ``suite`` (``bbob``, ``bbob-biobj``) and its optimal parameters, one
    row per objective (cocoex writes them into a file of the working directory: a temporary
    one here)."""
    import cocoex

    problems = cocoex.Suite(suite, f"instances: {instance}", f"dimensions: {dim}")
    p = problems.get_problem_by_function_dimension_instance(function, dim, instance)
    name = f"._{suite.replace('-', '_')}_problem_best_parameter.txt"
    with tempfile.TemporaryDirectory() as folder, contextlib.chdir(folder):
        p._best_parameter("print")
        return p, np.loadtxt(name, ndmin=2)


def int_ranges(text: str) -> list[int]:
    """``"1-5,8"`` -> ``[1, 2, 3, 4, 5, 8]``."""
    out: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def load(path: Path) -> list[dict[str, Any]]:
    """The result lines of a ``--results`` file."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def recorder(
    rows: list[dict[str, Any]], path: Path | None, line: Callable[[dict[str, Any]], str]
) -> Callable[[dict[str, Any]], None]:
    """``emit(row)``: keep a result row, append it to the JSON-lines file ``path`` (resumable
    runs) and print its ``line``."""

    def emit(r: dict[str, Any]) -> None:
        rows.append(r)
        if path:
            with path.open("a") as fh:
                fh.write(json.dumps(r) + "\n")
        print(line(r), flush=True)

    return emit


def stream_results(cmd: list[str], emit: Callable[[dict[str, Any]], None]) -> None:
    """Run ``cmd`` (an ``mpiexec`` of this script's engine side) and ``emit`` each JSON line
    it prints, as it prints it; exit naming the command when it fails."""
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("{"):
                emit(json.loads(line))
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd[:8])} ... exited {proc.returncode}")


def timed_run(
    comm: Any,
    loss: Callable[..., Any],
    propagator: Any,
    rng: random.Random,
    space: SearchSpace,
    budget: int,
    trace: list[Any],
    tmp: str | None,
    **islands: Any,
) -> tuple[list[Any], float] | None:
    """One optimization of ``budget`` evaluations on every rank of ``comm`` (logs in a
    temporary folder, removed after). On rank 0: every rank's ``trace`` entries merged in
    time order (each starts with its time stamp) and the slowest rank's seconds; ``None`` on
    the other ranks."""
    from mpi4py import MPI

    from propulate import Islands

    folder = comm.bcast(tempfile.mkdtemp(prefix="bench-", dir=tmp) if comm.rank == 0 else None)
    opt = Islands(
        loss,
        propagator,
        rng,
        max_evaluations=budget,
        checkpoint_path=folder,
        progress_interval=1e9,
        space=space,
        failure_limit=0,
        **islands,
    )
    comm.Barrier()
    t0 = time.perf_counter()
    opt.propulate()
    seconds = comm.allreduce(time.perf_counter() - t0, op=MPI.MAX)
    traces = comm.gather(trace, root=0)
    if comm.rank != 0:
        return None
    shutil.rmtree(folder, ignore_errors=True)
    return sorted((e for tr in traces for e in tr), key=lambda e: e[0]), seconds
