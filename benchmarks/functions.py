"""Best loss of the island model on the paper's nine benchmark functions.

Every run goes through the command line, as a user runs it::

    mpiexec -n 2 python -m propulate evolve --objective propulate.problems.benchmark:NAME \\
        --space NAME.yaml --out TMP/NAME-sSEED --generations 2000 --seed SEED

(2 ranks x 2,000 generations per worker = 4,000 evaluations per run, one island, default
propagator), 5 seeds per function. Prints per function the median, min and max over the seeds
of the best loss found, next to the known global minimum (quartic's is the expectation of its
noise term's minimum, 0). Usage::

    python benchmarks/functions.py                       # all nine, seeds 0..4
    python benchmarks/functions.py --functions sphere rastrigin --seeds 3

Run directories go to a temporary folder on ``/dev/shm`` when it exists (``--tmp`` to choose):
the same place for every method in :mod:`compare_methods`, so no method pays for a slow disk.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from propulate.campaign.files import suite_spec, write_campaign_file
from propulate.engine.launch import find_mpiexec
from propulate.problems.benchmark import FUNCTIONS, ND_FUNCTIONS

#: The paper's nine n-dimensional functions (table of the Propulate paper), in its order.
PAPER_FUNCTIONS: tuple[str, ...] = ND_FUNCTIONS


def mpiexec() -> str:
    """The local MPI launcher (:func:`propulate.engine.launch.find_mpiexec`)."""
    try:
        return find_mpiexec()
    except FileNotFoundError as err:
        raise SystemExit(str(err)) from None


def default_tmp() -> str | None:
    """``/dev/shm`` when it is a writable folder (tmpfs), else the system default."""
    shm = Path("/dev/shm")
    return str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None


def write_space(name: str, directory: Path) -> Path:
    """Write the space file of benchmark ``name`` (its registry limits), as a campaign suite does.

    Parameters
    ----------
    name : str
        A key of :data:`propulate.problems.benchmark.FUNCTIONS`.
    directory : Path
        Where to write ``<name>.yaml``.

    Returns
    -------
    Path
        The file.
    """
    return write_campaign_file(directory / f"{name}.yaml", suite_spec(name))


def run_evolve(
    name: str,
    space: Path,
    out: Path,
    seed: int,
    options: Sequence[str],
    ranks: int = 2,
    timeout: float = 3600.0,
) -> dict[str, Any]:
    """One ``evolve`` run of benchmark ``name`` under mpiexec; returns its summary.

    Parameters
    ----------
    name : str
        Benchmark name (the loss is ``propulate.problems.benchmark:<name>``).
    space : Path
        Its space YAML (:func:`write_space`).
    out : Path
        Run directory (must not hold an earlier run, or the run resumes).
    seed : int
        ``--seed``.
    options : sequence of str
        Further ``evolve`` options (method, stopping criterion).
    ranks : int
        MPI ranks.
    timeout : float
        Seconds before the run is killed (raises ``subprocess.TimeoutExpired``).

    Returns
    -------
    dict
        ``summary.json`` of the run plus ``process_seconds``, the wall time of the whole
        ``mpiexec`` call (start-up included).
    """
    cmd = [
        mpiexec(),
        "-n",
        str(ranks),
        sys.executable,
        "-m",
        "propulate",
        "evolve",
        "--objective",
        f"propulate.problems.benchmark:{name}",
        "--space",
        str(space),
        "--out",
        str(out),
        "--seed",
        str(seed),
        "--progress-interval",
        "1e9",
        *options,
    ]
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    seconds = time.perf_counter() - t
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    summary: dict[str, Any] = json.loads((out / "summary.json").read_text())
    summary["process_seconds"] = seconds
    return summary


def _fmt(x: float) -> str:
    return f"{x:.3e}" if x != 0 and (abs(x) < 1e-2 or abs(x) >= 1e4) else f"{x:.4f}"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print the table."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--functions",
        nargs="+",
        default=list(PAPER_FUNCTIONS),
        choices=list(PAPER_FUNCTIONS),
        metavar="NAME",
    )
    p.add_argument("--seeds", type=int, default=5, help="seeds 0..N-1 per function")
    p.add_argument("--generations", type=int, default=2000, help="generations per worker")
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--tmp", default=default_tmp(), help="folder for the run directories")
    args = p.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="propulate-functions-", dir=args.tmp))
    rows = []
    try:
        print(
            f"island model, {args.ranks} ranks x {args.generations} generations per worker, "
            f"{args.seeds} seeds, runs in {root}",
            flush=True,
        )
        for name in args.functions:
            space = write_space(name, root)
            best, walls = [], []
            for seed in range(args.seeds):
                s = run_evolve(
                    name,
                    space,
                    root / f"{name}-s{seed}",
                    seed,
                    ["--generations", str(args.generations)],
                    ranks=args.ranks,
                )
                best.append(float(s["best_loss"]))
                walls.append(float(s["wall_time"]))
            rows.append(
                (
                    name,
                    FUNCTIONS[name].dims,
                    statistics.median(best),
                    min(best),
                    max(best),
                    FUNCTIONS[name].minimum,
                    statistics.median(walls),
                )
            )
            print(f"  {name}: done ({statistics.median(walls):.2f} s per run)", flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print()
    print(
        f"{'function':<12} {'dims':>4} {'median best':>12} {'min':>12} {'max':>12} "
        f"{'known min':>10} {'run s':>6}"
    )
    for name, dims, med, lo, hi, known, wall in rows:
        print(
            f"{name:<12} {dims:>4} {_fmt(med):>12} {_fmt(lo):>12} {_fmt(hi):>12} "
            f"{_fmt(known):>10} {wall:>6.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
