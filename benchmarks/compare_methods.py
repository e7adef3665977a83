"""The island model against uniform random search and Optuna TPE on the paper's nine functions.

For every function, method and seed one run through the command line::

    mpiexec -n 2 python -m propulate evolve --objective propulate.problems.benchmark:NAME \\
        --space NAME.yaml --out TMP/... --method METHOD --seed SEED --max-evaluations 2000

(2 ranks, 2,000 evaluations per run over both ranks; Optuna with every rank a TPE worker on
one journal-file study, see :mod:`propulate.baselines.optuna_worker`). Prints per function and
method the median best loss over the seeds with its min and max, the median wall time of the
optimization (``summary.json``'s ``wall_time``: MPI start-up and imports excluded) and the
median evaluations per second, then checks the targets:

* propulate's median best loss <= optuna's on at least 6 of the 9 functions;
* propulate's median best loss <= random's on all 9;
* propulate's evaluations per second >= 50 x optuna's (medians over all runs).

Usage::

    python benchmarks/compare_methods.py                              # 9 x 3 x 5 seeds
    python benchmarks/compare_methods.py --functions sphere step --seeds 3
    python benchmarks/compare_methods.py --methods random optuna \
        --variant "ga=--sigma-factor 0.02" --variant "cma=--propagator cma" --first-seed 6

``--variant LABEL=OPTIONS`` runs the island model with further ``evolve`` options under the
name ``LABEL`` (repeatable; every variant is checked against the targets like ``propulate``).
    python benchmarks/compare_methods.py --results runs.jsonl         # keep every run

Targets on a subset of functions are scaled (``ceil(6/9 * n)`` wins against optuna). Run
directories go to ``/dev/shm`` when it exists: Optuna's journal storage fsyncs every write,
which on a slow shared disk costs more than TPE itself, and the comparison is between
algorithms, not disks (``--tmp`` to choose another folder).
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import statistics
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from functions import PAPER_FUNCTIONS, default_tmp, run_evolve, write_space  # noqa: E402

METHODS: tuple[str, ...] = ("propulate", "random", "optuna")


def _fmt(x: float) -> str:
    return f"{x:.3e}" if x != 0 and (abs(x) < 1e-2 or abs(x) >= 1e4) else f"{x:.4f}"


def run_all(
    functions: Sequence[str],
    methods: Sequence[str],
    seeds: int,
    evaluations: int,
    ranks: int,
    root: Path,
    results: Path | None,
    timeout: float,
    first_seed: int = 0,
    variants: dict[str, list[str]] | None = None,
) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """Run every (function, method, seed); returns the summaries by (function, method).

    ``variants`` maps a method name to ``evolve`` options of the island model (``propulate``
    with none unless given)."""
    runs: dict[tuple[str, str], list[dict[str, Any]]] = {}
    variants = variants or {}
    for name in functions:
        space = write_space(name, root)
        for method in methods:
            if method in variants or method not in ("random", "optuna"):
                options = ["--method", "propulate", *variants.get(method, [])]
            else:
                options = ["--method", method]
            for seed in range(first_seed, first_seed + seeds):
                out = root / f"{name}-{method}-s{seed}"
                s = run_evolve(
                    name,
                    space,
                    out,
                    seed,
                    [*options, "--max-evaluations", str(evaluations)],
                    ranks=ranks,
                    timeout=timeout,
                )
                shutil.rmtree(out, ignore_errors=True)
                s.update(function=name, seed=seed, method=method)
                runs.setdefault((name, method), []).append(s)
                if results is not None:
                    with results.open("a") as fh:
                        fh.write(json.dumps(s) + "\n")
                print(
                    f"  {name:<12} {method:<9} seed {seed}: best {_fmt(float(s['best_loss']))}"
                    f"  {s['wall_time']:.1f} s  {s['evaluations_per_second']:,.0f} evals/s",
                    flush=True,
                )
    return runs


def report(
    runs: dict[tuple[str, str], list[dict[str, Any]]],
    functions: Sequence[str],
    methods: Sequence[str],
) -> bool:
    """Print the table and the targets; returns whether every target holds."""
    med: dict[tuple[str, str], float] = {}
    print()
    print(
        f"{'function':<12} {'method':<9} {'median best':>12} {'min':>12} {'max':>12} "
        f"{'wall s':>8} {'evals/s':>10}"
    )
    for name in functions:
        for method in methods:
            rs = runs[(name, method)]
            best = [float(r["best_loss"]) for r in rs]
            med[(name, method)] = statistics.median(best)
            wall = statistics.median(float(r["wall_time"]) for r in rs)
            rate = statistics.median(float(r["evaluations_per_second"]) for r in rs)
            print(
                f"{name:<12} {method:<9} {_fmt(med[(name, method)]):>12} {_fmt(min(best)):>12} "
                f"{_fmt(max(best)):>12} {wall:>8.2f} {rate:>10,.0f}"
            )
    rates = {
        m: statistics.median(
            float(r["evaluations_per_second"]) for name in functions for r in runs[(name, m)]
        )
        for m in methods
    }
    print()
    print(
        "median evaluations/s over all runs: " + ", ".join(f"{m} {rates[m]:,.0f}" for m in methods)
    )
    ok = True
    n = len(functions)
    for v in (m for m in methods if m not in ("random", "optuna")):
        if "optuna" in methods:
            wins = [f for f in functions if med[(f, v)] <= med[(f, "optuna")]]
            need = math.ceil(6 * n / 9)
            hit = len(wins) >= need
            ok &= hit
            print(
                f"target {v} <= optuna on >= {need} of {n}: {len(wins)} of {n} "
                f"({', '.join(wins) or 'none'}) -> {'met' if hit else 'NOT met'}"
            )
            ratio = rates[v] / rates["optuna"]
            hit = ratio >= 50
            ok &= hit
            print(
                f"target {v} evals/s >= 50 x optuna's: {ratio:,.0f} x -> "
                f"{'met' if hit else 'NOT met'}"
            )
        if "random" in methods:
            wins = [f for f in functions if med[(f, v)] <= med[(f, "random")]]
            hit = len(wins) == n
            ok &= hit
            losses = [f for f in functions if f not in wins]
            print(
                f"target {v} <= random on all {n}: {len(wins)} of {n}"
                f"{' (worse on ' + ', '.join(losses) + ')' if losses else ''} -> "
                f"{'met' if hit else 'NOT met'}"
            )
    return ok


def report_file(path: Path, functions: Sequence[str], methods: Sequence[str]) -> bool:
    """:func:`report` on the runs of a ``--results`` file, for the (function, method) pairs
    that have runs and are selected; functions missing any selected method are left out."""
    runs: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for line in path.read_text().splitlines():
        if line.strip():
            r = json.loads(line)
            runs.setdefault((r["function"], r["method"]), []).append(r)
    complete = [f for f in functions if all((f, m) in runs for m in methods)]
    seeds = sorted({len(v) for k, v in runs.items() if k[0] in complete and k[1] in methods})
    print(
        f"{len(complete)} functions with every method in {path}: {', '.join(complete)}; "
        f"seeds per (function, method): {seeds}"
    )
    return report(runs, complete, methods)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the comparison; exit status 0 when every target is met."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--functions",
        nargs="+",
        default=list(PAPER_FUNCTIONS),
        choices=list(PAPER_FUNCTIONS),
        metavar="NAME",
    )
    p.add_argument(
        "--methods",
        nargs="+",
        default=None,
        help=f"methods: {', '.join(METHODS)} or --variant labels (default: all three, "
        "plus the variants)",
    )
    p.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="LABEL=OPTIONS",
        help="the island model with these evolve options, reported as LABEL (repeatable)",
    )
    p.add_argument("--first-seed", type=int, default=0, help="seeds FIRST..FIRST+N-1")
    p.add_argument("--seeds", type=int, default=5, help="N seeds per function and method")
    p.add_argument("--max-evaluations", type=int, default=2000, help="evaluations per run")
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--tmp", default=default_tmp(), help="folder for the run directories")
    p.add_argument("--results", type=Path, help="append every run's summary here (JSON lines)")
    p.add_argument("--timeout", type=float, default=3600.0, help="seconds per run")
    p.add_argument(
        "--from-results",
        type=Path,
        metavar="RUNS.jsonl",
        help="run nothing: print the table of a --results file (the functions and "
        "methods with runs in it, as filtered by --functions/--methods)",
    )
    args = p.parse_args(argv)
    variants = {}
    for text in args.variant:
        label, _, options = text.partition("=")
        if not label or label in ("random", "optuna"):
            p.error(f"--variant {text!r}: give LABEL=OPTIONS with a new label")
        variants[label] = options.split()
    if args.methods is None:
        args.methods = list(METHODS) if not variants else ["random", "optuna", *variants]
    elif variants:
        args.methods = [*args.methods, *(v for v in variants if v not in args.methods)]
    if args.from_results is not None:
        return 0 if report_file(args.from_results, args.functions, args.methods) else 1
    root = Path(tempfile.mkdtemp(prefix="propulate-compare-", dir=args.tmp))
    print(
        f"{len(args.functions)} functions x {args.methods} x {args.seeds} seeds, "
        f"{args.ranks} ranks, {args.max_evaluations} evaluations per run, in {root}",
        flush=True,
    )
    try:
        runs = run_all(
            args.functions,
            args.methods,
            args.seeds,
            args.max_evaluations,
            args.ranks,
            root,
            args.results,
            args.timeout,
            args.first_seed,
            variants,
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0 if report(runs, args.functions, args.methods) else 1


if __name__ == "__main__":
    raise SystemExit(main())
