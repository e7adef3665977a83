"""Strong and weak scaling of the engine, simulated with sleeping evaluations.

Every evaluation sleeps a lognormal time (mean ``--mean`` seconds, seeded per rank), so many
ranks can be oversubscribed on a few cores: sleeping ranks leave the CPU to the others.

    python benchmarks/scaling.py --ranks 8 16 32 64 --png scaling.png

For each rank count it launches ``mpiexec -n N python benchmarks/scaling.py --worker ...`` twice:

* strong: a shared budget of ``--per-worker`` evaluations per rank (the total is fixed by the
  budget, the ranks share it);
* weak: each rank evaluates for ``--seconds`` (a time limit; the running evaluation is
  interrupted at the limit and counted up to then).

Printed per run: efficiency = evaluation seconds / (ranks x span), where the span runs from the
first evaluation's start to the last one's end over all ranks; the time from launch to the
first evaluation; the drain (last record's end to the end of the run on the slowest rank); and
the CPU share of the ranks (CPU seconds / (ranks x wall seconds): idle ranks do not spin).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def worker(
    out: str, mode: str, per_worker: int, seconds: float, mean: float, seed: int, launched: float
) -> None:
    """One rank of a simulated run (under mpiexec)."""
    import math
    import random

    from mpi4py import MPI

    from propulate import Islands, get_default_propagator
    from propulate.space import SearchSpace

    comm = MPI.COMM_WORLD
    rng = random.Random(seed * 100_003 + comm.rank)
    sigma = 0.5
    mu = math.log(mean) - sigma * sigma / 2  # lognormal with the given mean

    def loss(p: dict[str, float]) -> float:
        time.sleep(rng.lognormvariate(mu, sigma))
        return sum(v * v for v in p.values())

    space = SearchSpace({f"x{i}": (-5.0, 5.0) for i in range(4)})
    prop = get_default_propagator(8, space, rng=rng)
    kwargs: dict = (
        {"max_evaluations": per_worker * comm.Get_size()}
        if mode == "strong"
        else {"time_limit": seconds}
    )
    opt = Islands(loss, prop, rng, checkpoint_path=out, progress_interval=1e9, **kwargs)
    cpu = time.process_time()
    opt.propulate()
    end = time.time()
    stats = comm.gather((time.process_time() - cpu, opt.worker.wall_time, end), root=0)
    if comm.rank == 0:
        Path(out, "stats.json").write_text(json.dumps({"launched": launched, "ranks": stats}))


def measure(out: Path, n: int) -> dict[str, float]:
    """Efficiency, start-up and drain of one finished run directory."""
    from propulate.runs.log import iter_records

    recs = list(iter_records(out))
    stats = json.loads((out / "stats.json").read_text())
    starts = [r["start"] for r in recs]
    ends = [r["start"] + r["seconds"] for r in recs]
    span = max(ends) - min(starts)
    busy = sum(r["seconds"] for r in recs)
    cpu = sum(s[0] for s in stats["ranks"])
    wall = max(s[1] for s in stats["ranks"])
    return {
        "ranks": n,
        "evaluations": len(recs),
        "efficiency": busy / (n * span),
        "span": span,
        "first_eval": min(starts) - stats["launched"],
        "drain": max(s[2] for s in stats["ranks"]) - max(ends),
        "cpu_share": cpu / (n * wall),
    }


def launch(n: int, mode: str, args: argparse.Namespace) -> dict[str, float]:
    """Run one simulated run on ``n`` ranks and measure it."""
    from propulate.engine.launch import find_mpiexec

    out = Path(tempfile.mkdtemp(prefix=f"propulate-scaling-{mode}-{n}-"))
    cmd = [
        find_mpiexec(),
        "-n",
        str(n),
        sys.executable,
        __file__,
        "--worker",
        str(out),
        mode,
        str(args.per_worker),
        str(args.seconds),
        str(args.mean),
        str(args.seed),
        str(time.time()),
    ]
    subprocess.run(cmd, check=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    return measure(out, n)


def plot(rows: list[dict[str, float | str]], png: str) -> None:
    """Efficiency against ranks, one line per mode."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3.5))
    for mode in ("strong", "weak"):
        sel = [r for r in rows if r["mode"] == mode]
        ax.plot([r["ranks"] for r in sel], [r["efficiency"] for r in sel], "o-", label=mode)
    ax.axhline(0.9, color="grey", ls="--", lw=0.8, label="target 0.90")
    ax.set_xscale("log", base=2)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("MPI ranks (sleeping evaluations, oversubscribed)")
    ax.set_ylabel("efficiency")
    ax.legend()
    fig.tight_layout()
    fig.savefig(png, dpi=120)


def main() -> None:
    """Command line (see the module docstring)."""
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        out, mode, per, sec, mean, seed, launched = sys.argv[2:9]
        worker(out, mode, int(per), float(sec), float(mean), int(seed), float(launched))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, nargs="+", default=[8, 16, 32, 64])
    ap.add_argument("--modes", nargs="+", default=["strong", "weak"], choices=["strong", "weak"])
    ap.add_argument("--per-worker", type=int, default=50, help="strong: evaluations per rank")
    ap.add_argument("--seconds", type=float, default=10.0, help="weak: time limit, seconds")
    ap.add_argument("--mean", type=float, default=0.2, help="mean evaluation time, seconds")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--png", help="write the efficiency figure here")
    args = ap.parse_args()
    rows: list[dict] = []
    print(
        f"{'mode':>6} {'ranks':>5} {'evals':>6} {'efficiency':>10} {'span s':>7} "
        f"{'1st eval s':>10} {'drain s':>7} {'cpu share':>9}",
        flush=True,
    )
    for n in args.ranks:
        for mode in args.modes:
            row = {"mode": mode, **launch(n, mode, args)}
            rows.append(row)
            print(
                f"{mode:>6} {n:>5} {row['evaluations']:>6} {row['efficiency']:>10.3f} "
                f"{row['span']:>7.1f} {row['first_eval']:>10.1f} {row['drain']:>7.2f} "
                f"{row['cpu_share']:>9.3f}",
                flush=True,
            )
    if args.png:
        plot(rows, args.png)
        print("figure:", args.png)


if __name__ == "__main__":
    main()
