"""Strong and weak scaling of the engine, simulated with sleeping evaluations.

Every evaluation sleeps a lognormal time (mean ``--mean`` seconds, seeded per rank), so many
ranks can be oversubscribed on a few cores: sleeping ranks leave the CPU to the others.

    python benchmarks/scaling.py --ranks 8 16 32 64 --png scaling.png
    python benchmarks/scaling.py --ranks 128/32 64/16 32/1 --modes strong   # ranks/islands

For each rank count it launches ``mpiexec -n N python benchmarks/scaling.py --worker ...`` twice:

* strong: a shared budget of ``--per-worker`` evaluations per rank (the total is fixed by the
  budget, the ranks share it);
* weak: each rank evaluates for ``--seconds`` (a time limit; the running evaluation is
  interrupted at the limit and counted up to then).

Printed per run: efficiency = evaluation seconds / (ranks x span), where the span runs from the
first evaluation's start to the last one's end over all ranks; what the ranks lost of ranks x
span (the shares add up to 1 with the efficiency): before their first evaluation, between their
evaluations (the engine's work and waits), and after their last one (the budget ran out while
the others' last evaluations still ran: with many ranks the longest of them sets the end);
the time from launch to the
first evaluation; the drain (last record's end to the end of the run on the slowest rank); and
the CPU share of the ranks (CPU seconds / (ranks x wall seconds): idle ranks do not spin).
Then the time between evaluations, per evaluation and split by cause (the worker loop's
phases, ``propulate.engine.phases.PHASES``, averaged over the ranks): waiting for a slot of
the budget, taking in messages, breeding, the evaluation's bookkeeping (record written), sending
the child to the island's peers and emigration; and the CPU milliseconds per evaluation spent
by the whole machine inside the loop (all ranks' CPU over the evaluations).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def worker(
    out: str,
    mode: str,
    per_worker: int,
    seconds: float,
    mean: float,
    seed: int,
    launched: float,
    islands: int,
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
    opt = Islands(
        loss,
        prop,
        rng,
        num_islands=islands,
        checkpoint_path=out,
        progress_interval=1e9,
        **kwargs,
    )
    cpu = time.process_time()
    opt.propulate()
    end = time.time()
    w = opt.worker
    phases = w.phases.seconds if hasattr(w, "phases") else {}  # (versions before the phases)
    mine = (time.process_time() - cpu, w.wall_time, end, w.evaluations, phases)
    stats = comm.gather(mine, root=0)
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
    evaluations = sum(s[3] for s in stats["ranks"])
    # Where the rest of ranks x span went, per rank (the four shares add up to 1): before its
    # first evaluation, between its evaluations, and after its last one (the budget ran out
    # while the others' last evaluations were still running).
    t0, t1 = min(starts), max(ends)
    by_rank: dict[int, list[tuple[float, float]]] = {}
    for r in recs:
        by_rank.setdefault(r["rank"], []).append((r["start"], r["start"] + r["seconds"]))
    before = sum(min(a for a, _ in v) - t0 for v in by_rank.values())
    after = sum(t1 - max(b for _, b in v) for v in by_rank.values())
    phases = {
        k: 1000 * sum(s[4][k] for s in stats["ranks"]) / max(evaluations, 1)
        for k in stats["ranks"][0][4]
        if k != "objective"
    }
    return {
        **{f"{k} ms": v for k, v in phases.items()},
        "cpu ms": 1000 * cpu / max(evaluations, 1),
        "ranks": n,
        "evaluations": len(recs),
        "efficiency": busy / (n * span),
        "lost before": before / (n * span),
        "lost between": (n * span - busy - before - after) / (n * span),
        "lost after": after / (n * span),
        "span": span,
        "first_eval": min(starts) - stats["launched"],
        "drain": max(s[2] for s in stats["ranks"]) - max(ends),
        "cpu_share": cpu / (n * wall),
    }


def launch(n: int, islands: int, mode: str, args: argparse.Namespace) -> dict[str, float]:
    """Run one simulated run on ``n`` ranks in ``islands`` islands and measure it."""
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
        str(islands),
    ]
    try:
        subprocess.run(cmd, check=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
        return measure(out, n)
    finally:
        shutil.rmtree(out, ignore_errors=True)


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
        out, mode, per, sec, mean, seed, launched, islands = sys.argv[2:10]
        worker(
            out, mode, int(per), float(sec), float(mean), int(seed), float(launched), int(islands)
        )
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--ranks",
        nargs="+",
        default=["8", "16", "32", "64"],
        help="rank counts, each N or N/ISLANDS (default: one island)",
    )
    ap.add_argument("--modes", nargs="+", default=["strong", "weak"], choices=["strong", "weak"])
    ap.add_argument("--per-worker", type=int, default=50, help="strong: evaluations per rank")
    ap.add_argument("--seconds", type=float, default=10.0, help="weak: time limit, seconds")
    ap.add_argument("--mean", type=float, default=0.2, help="mean evaluation time, seconds")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--png", help="write the efficiency figure here")
    args = ap.parse_args()
    rows: list[dict] = []
    # the loop's phases (propulate.engine.phases.PHASES) less the objective, and the CPU
    causes = [
        f"{k} ms" for k in ("claim", "receive", "breed", "bookkeeping", "share", "migrate", "cpu")
    ]
    print(
        f"{'mode':>6} {'ranks':>5} {'islands':>7} {'evals':>6} {'efficiency':>10} "
        f"{'lost: before':>12} {'between':>7} {'after':>6} {'span s':>7} "
        f"{'1st eval s':>10} {'drain s':>7} {'cpu share':>9}   per evaluation: "
        + " ".join(f"{c:>14}" for c in causes),
        flush=True,
    )
    for spec in args.ranks:
        n, _, islands = spec.partition("/")
        n, islands = int(n), int(islands or 1)
        for mode in args.modes:
            row = {"mode": mode, "islands": islands, **launch(n, islands, mode, args)}
            rows.append(row)
            print(
                f"{mode:>6} {n:>5} {islands:>7} {row['evaluations']:>6} "
                f"{row['efficiency']:>10.3f} {row['lost before']:>12.3f} "
                f"{row['lost between']:>7.3f} {row['lost after']:>6.3f} "
                f"{row['span']:>7.1f} {row['first_eval']:>10.1f} "
                f"{row['drain']:>7.2f} {row['cpu_share']:>9.3f}                   "
                + " ".join(f"{row.get(c, float('nan')):>14.2f}" for c in causes),
                flush=True,
            )
    if args.png:
        plot(rows, args.png)
        print("figure:", args.png)


if __name__ == "__main__":
    main()
