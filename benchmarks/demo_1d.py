"""Methods on the one-parameter demo function: how often a run ends near the task's optimum.

The demo function ``f(t, x)`` (:func:`propulate.problems.demo.demo_loss`) oscillates ``(t + 2)^3``
times over ``x`` in [0, 1]: one parameter, many local minima, the landscape of the default
campaign. Every (method, task, seed) runs ``python -m propulate evolve`` under ``mpiexec -n
--ranks`` with ``--evaluations`` evaluations; a method is a propagator spec (``bo``, ``cma``,
``ga``, ``auto``) or ``optuna`` (``--method optuna``, Optuna's default TPE). Per method it prints
the share of runs whose best loss is within ``--gap`` of the task's optimum
(:func:`propulate.problems.demo.demo_true_optimum`), the median gap and the worst.

Usage::

    python benchmarks/demo_1d.py --methods bo cma ga --tasks 0.1 0.4 0.7 1.0 1.3 --seeds 1-8 \\
        --evaluations 200 --results demo_1d.jsonl

Develop on seeds below 100 and these tasks; report other seeds and tasks.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from suite_runs import int_ranges, load

from propulate.engine.launch import find_mpiexec
from propulate.problems.demo import demo_true_optimum

OBJECTIVE = "propulate.problems.demo:demo_loss"
SPACE = "parameters:\n  x: {type: float, low: 0.0, high: 1.0}\n"


def run(method: str, t: float, seed: int, args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    """One ``evolve`` run of ``method`` on task ``t``; its best loss, gap and wall seconds."""
    out = folder / f"{method}-{t}-{seed}"
    out.mkdir(parents=True)
    (out / "space.yaml").write_text(SPACE)
    (out / "task.json").write_text(json.dumps({"id": f"t{t}", "task": {"t": t}}))
    how = ["--method", "optuna"] if method == "optuna" else ["--propagator", method]
    cmd = [find_mpiexec(), "-n", str(args.ranks), sys.executable, "-m", "propulate", "evolve"]
    cmd += ["--objective", OBJECTIVE, "--space", str(out / "space.yaml")]
    cmd += ["--task", str(out / "task.json"), "--out", str(out / "run"), *how]
    cmd += ["--max-evaluations", str(args.evaluations), "--seed", str(seed)]
    start = time.time()
    done = subprocess.run(
        cmd, capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS="1")
    )
    if done.returncode != 0:
        raise SystemExit(f"{method} t={t} seed {seed} failed:\n{done.stderr[-2000:]}")
    best = json.loads((out / "run" / "summary.json").read_text())["best_loss"]
    return {
        "method": method,
        "t": t,
        "seed": seed,
        "evaluations": args.evaluations,
        "ranks": args.ranks,
        "best_loss": best,
        "gap": best - demo_true_optimum(t)[1],
        "seconds": time.time() - start,
    }


def table(rows: Sequence[dict[str, Any]], methods: Sequence[str], gap: float) -> None:
    """Per method: runs within ``gap`` of the optimum, the median and the worst gap."""
    for m in methods:
        gaps = [r["gap"] for r in rows if r["method"] == m]
        if not gaps:
            continue
        near = sum(g < gap for g in gaps)
        print(
            f"{m:<8} within {gap} of the optimum on {near} of {len(gaps)} runs "
            f"({near / len(gaps):.0%}); median gap {statistics.median(gaps):.4f}, "
            f"worst {max(gaps):.3f}"
        )


def main(argv: Sequence[str] | None = None) -> int:
    """Run every (method, task, seed) not in ``--results`` and print the table."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--methods", nargs="+", default=["bo", "cma", "ga"])
    p.add_argument("--tasks", nargs="+", type=float, default=[0.1, 0.4, 0.7, 1.0, 1.3])
    p.add_argument("--seeds", type=int_ranges, default=int_ranges("1-8"))
    p.add_argument("--evaluations", type=int, default=200)
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--gap", type=float, default=0.05, help="a run ends near the optimum below it")
    p.add_argument("--results", type=Path, help="append result lines here; skip those present")
    args = p.parse_args(argv)
    rows = [
        r
        for r in (load(args.results) if args.results else [])
        if r["evaluations"] == args.evaluations and r["ranks"] == args.ranks
    ]
    have = {(r["method"], r["t"], r["seed"]) for r in rows}
    with tempfile.TemporaryDirectory() as tmp:
        for t in args.tasks:
            for seed in args.seeds:
                for method in args.methods:
                    if (method, t, seed) in have:
                        continue
                    r = run(method, t, seed, args, Path(tmp))
                    rows.append(r)
                    print(
                        f"{method:<8} t={t} seed {seed}: gap {r['gap']:.4f} ({r['seconds']:.0f} s)"
                    )
                    if args.results:
                        with args.results.open("a") as fh:
                            fh.write(json.dumps(r) + "\n")
    wanted = {(t, s) for t in args.tasks for s in args.seeds}
    table([r for r in rows if (r["t"], r["seed"]) in wanted], args.methods, args.gap)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
