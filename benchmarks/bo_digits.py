"""The ``bo`` propagator on a training objective: the digits network at a small budget, beside
Optuna's default TPE, seed by seed in one run.

Every method runs ``python -m propulate evolve`` on the digits network
(:func:`propulate.problems.digits_mlp.digits_mlp`, six parameters, four of them on a log scale;
``examples/digits_mlp/space.yaml``) under ``mpiexec -n --ranks`` for ``--evaluations``
evaluations and each ``--seeds``, no pruner:

* ``bo``: ``--propagator bo`` (or ``--bo-spec``, e.g. ``bo:acquisition=ucb``);
* ``optuna``: ``--method optuna`` (Optuna's default ``TPESampler``, the ranks on one study).

It prints each run's best validation loss, then per method the median, the spread and on how
many seeds it is at or below the other method's median. ``--results`` keeps one JSON line per
(method, seed) and skips those already in it.

Usage::

    python benchmarks/bo_digits.py --seeds 300-309 --results bo_digits.jsonl

Develop on seeds below 100; report seeds never run before.
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

REPO = Path(__file__).resolve().parents[1]
SPACE = REPO / "examples" / "digits_mlp" / "space.yaml"
OBJECTIVE = "propulate.problems.digits_mlp:digits_mlp"
METHODS = ("bo", "optuna")


def run(method: str, seed: int, args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    """One ``evolve`` run; its best loss and wall seconds."""
    out = folder / f"{method}-{seed}"
    how = ["--method", "optuna"] if method == "optuna" else ["--propagator", args.bo_spec]
    cmd = [find_mpiexec(), "-n", str(args.ranks), sys.executable, "-m", "propulate", "evolve"]
    cmd += ["--objective", OBJECTIVE, "--space", str(SPACE), "--out", str(out), *how]
    cmd += ["--max-evaluations", str(args.evaluations), "--seed", str(seed)]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    t = time.time()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"{method} seed {seed} failed:\n{done.stderr[-2000:]}")
    summary = json.loads((out / "summary.json").read_text())
    return {
        "method": method,
        "spec": args.bo_spec if method == "bo" else "optuna",
        "seed": seed,
        "best_loss": summary["best_loss"],
        "evaluations": summary["evaluations"],
        "ranks": args.ranks,
        "seconds": time.time() - t,
    }


def table(rows: Sequence[dict[str, Any]], seeds: Sequence[int]) -> None:
    """Per seed the best losses, per method the median and the spread."""
    best = {(r["method"], r["seed"]): r["best_loss"] for r in rows}
    methods = [m for m in METHODS if any((m, s) in best for s in seeds)]
    print(f"\n{'seed':>6} " + " ".join(f"{m:>9}" for m in methods))
    for s in seeds:
        cells = " ".join(f"{best[m, s]:>9.4f}" if (m, s) in best else f"{'-':>9}" for m in methods)
        print(f"{s:>6} {cells}")
    medians = {}
    for m in methods:
        values = [best[m, s] for s in seeds if (m, s) in best]
        medians[m] = statistics.median(values)
        print(
            f"{m}: median {medians[m]:.4f} over {len(values)} seeds "
            f"(range {min(values):.4f}-{max(values):.4f})"
        )
    if len(methods) == 2:
        a, b = methods
        at = sum(1 for s in seeds if (a, s) in best and best[a, s] <= medians[b])
        print(f"{a} at or below {b}'s median on {at} of {len(seeds)} seeds")
        print(f"{a} median / {b} median: {medians[a] / medians[b]:.3f}")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the methods on the seeds (skipping those in ``--results``) and print the table."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", type=int_ranges, default=int_ranges("300-309"))
    p.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    p.add_argument("--evaluations", type=int, default=50)
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--bo-spec", default="bo", help="the propagator spec of the bo runs")
    p.add_argument("--results", type=Path, help="append result lines here; skip those present")
    args = p.parse_args(argv)
    rows = load(args.results) if args.results else []
    have = {(r["method"], r["seed"]) for r in rows}
    with tempfile.TemporaryDirectory() as tmp:
        for seed in args.seeds:
            for method in args.methods:
                if (method, seed) in have:
                    continue
                r = run(method, seed, args, Path(tmp))
                rows.append(r)
                print(f"{method:<7} seed {seed}: best {r['best_loss']:.4f} ({r['seconds']:.0f} s)")
                if args.results:
                    with args.results.open("a") as fh:
                        fh.write(json.dumps(r) + "\n")
    table(rows, args.seeds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
