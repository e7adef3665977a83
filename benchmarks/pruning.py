"""Early stopping on a real training objective: the island model with and without ASHA, and
Optuna TPE with its successive-halving pruner, at the same CPU budget.

The objective is :func:`propulate.problems.digits_mlp.digits_mlp` (scikit-learn's
``MLPClassifier`` trained epoch by epoch on the bundled digits data, validation log loss per
epoch, 27 epochs, six hyperparameters). Every run is one worker in this process (BLAS on one
thread), so its CPU time is everything the method does: training, breeding or TPE's sampling,
pruning, the records. A run stops at the first evaluation that starts after its budget is
spent (the stop signal of the engine, a ``SIGUSR1`` to itself); the evaluation running at the
budget finishes. The budget is either CPU seconds (``--budget``; where the budget cuts a run
off moves with the machine's load, so a re-run can differ by an evaluation or two) or training
epochs (``--epochs-budget``: every epoch of every evaluation, pruned ones included, counts;
deterministic, the same command gives the same figures; the CPU seconds are measured
alongside, and since TPE's sampling and the configurations a method prefers cost CPU too, the
methods' CPU seconds at the same epochs differ, see the ``CPU s`` column).

Methods (``--methods``):

``propulate``
    the island model (one worker, the GA), no pruner;
``asha``
    the same with ``--pruner asha:min_steps=1,eta=3`` (rungs at epoch indices 1, 3, 9);
``tpe``, ``asha-tpe``
    the island model with its TPE propagator (``--propagator tpe``), without and with ASHA;
``optuna``
    Optuna TPE with ``SuccessiveHalvingPruner(min_resource=1, reduction_factor=3)`` (the
    ``optuna`` method with the same ``--pruner``).

Prints per method and seed the configurations evaluated (finished or pruned), the CPU
seconds, configurations per CPU-hour, epochs trained and the best validation loss of a
finished run; then the medians over the seeds with their min and max, and the targets:

* ASHA evaluates >= 3 x the configurations per CPU-hour of the unpruned island model;
* ASHA's best validation loss <= 1.01 x the unpruned search's (median over the seeds, and
  per seed);
* ASHA's best validation loss <= Optuna TPE + successive halving's (median, and per seed).

The same targets are checked for ``asha-tpe`` against ``tpe`` and Optuna.

Usage (development seeds 0-4; held-out seeds 100-119 for the reported figures; the runs are
in ``benchmarks/results/pruning_runs_*.jsonl``; ``_cpu30_`` is the CPU-time budget)::

    nice -n 10 python benchmarks/pruning.py --seeds 110 111 112 113 114 --epochs-budget 2000 \\
        --methods asha asha-tpe optuna --results runs.jsonl
    cd benchmarks/results && python ../pruning.py --summarize pruning_runs_100-104.jsonl \\
        pruning_runs_105-109.jsonl pruning_runs_tpe_100-109.jsonl pruning_runs_110-119.jsonl \\
        --json pruning.json
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # before numpy: one core per run, honest CPU time
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import math  # noqa: E402
import signal  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Iterator, Mapping, Sequence  # noqa: E402
from dataclasses import replace  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

PRUNER = "asha:min_steps=1,eta=3"

#: Benchmark method -> (propulate method, pruner, the island model's propagator).
METHODS: dict[str, tuple[str, str | None, str]] = {
    "propulate": ("propulate", None, "ga"),
    "asha": ("propulate", PRUNER, "ga"),
    "tpe": ("propulate", None, "tpe"),
    "asha-tpe": ("propulate", PRUNER, "tpe"),
    "optuna": ("optuna", PRUNER, "ga"),
}

#: (pruned method, the same search unpruned): the targets compare them, and each with Optuna.
PAIRS = (("asha", "propulate"), ("asha-tpe", "tpe"))


class CpuBudget:
    """The objective with a CPU budget: an evaluation that starts after ``seconds`` of this
    process's CPU time since :meth:`reset` raises the run's stop signal instead of training."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.t0 = time.process_time()

    def reset(self) -> None:
        self.t0 = time.process_time()

    def spent(self) -> float:
        return time.process_time() - self.t0

    def __call__(self, params: Mapping[str, Any]) -> Iterator[float]:
        from propulate.problems.digits_mlp import digits_mlp

        if self.spent() >= self.seconds:
            os.kill(os.getpid(), signal.SIGUSR1)  # the run's clean stop
            return
        yield from digits_mlp(params)


class EpochBudget(CpuBudget):
    """The objective with a budget of training epochs: an evaluation that starts after
    ``epochs`` epochs were trained since :meth:`reset` (over all evaluations, pruned ones
    included) raises the run's stop signal instead of training.

    Deterministic (the same seed trains the same epochs, whatever else runs on the machine);
    the CPU seconds are measured alongside (:meth:`spent`), since epochs dominate them.
    """

    def __init__(self, epochs: int) -> None:
        super().__init__(math.inf)  # no CPU limit: CpuBudget only measures the seconds
        self.epochs = epochs
        self.trained = 0

    def reset(self) -> None:
        super().reset()
        self.trained = 0

    def __call__(self, params: Mapping[str, Any]) -> Iterator[float]:
        from propulate.problems.digits_mlp import digits_mlp

        if self.trained >= self.epochs:
            os.kill(os.getpid(), signal.SIGUSR1)  # the run's clean stop
            return
        for value in digits_mlp(params):
            self.trained += 1
            yield value


def one_run(
    method: str,
    seed: int,
    budget: float,
    root: Path,
    pop_size: int = 8,
    epochs_budget: int | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """One run of ``method`` with ``seed``; its figures."""
    from mpi4py import MPI

    from propulate.methods import METHODS as TABLE
    from propulate.methods import Job
    from propulate.problems.digits_mlp import SPACE
    from propulate.runs.log import iter_records
    from propulate.settings import EvolveSettings
    from propulate.space import SearchSpace

    name, pruner, propagator = METHODS[method]
    out = Path(tempfile.mkdtemp(prefix=f"{method}-s{seed}-", dir=root))
    settings = replace(
        EvolveSettings(),
        method=name,
        seed=seed,
        generations=100_000,
        pruner=pruner,
        propagator=propagator,
        pop_size=pop_size,
        **extra,
        progress_interval=3600.0,
    )
    objective = CpuBudget(budget) if epochs_budget is None else EpochBudget(epochs_budget)
    job = Job(
        objective,
        SearchSpace.from_limits(SPACE),
        None,
        out,
        settings,
        {"task": "digits", "run": f"seed{seed}", "method": name},
    )
    objective.reset()
    TABLE[name].run(job, MPI.COMM_SELF)
    cpu = objective.spent()
    records = list(iter_records(out))
    done = [r for r in records if r.get("status") in ("ok", "pruned")]
    ok = [r["loss"] for r in records if r.get("status") == "ok"]
    return {
        "method": method,
        "seed": seed,
        "budget": budget if epochs_budget is None else None,
        "epochs_budget": epochs_budget,
        "configurations": len(done),
        "pruned": sum(r.get("status") == "pruned" for r in records),
        "epochs": sum(len(r.get("curve") or []) for r in done),
        "cpu": cpu,
        "per_hour": 3600.0 * len(done) / cpu if cpu > 0 else 0.0,
        "best": min(ok) if ok else math.inf,
    }


def _median(rows: Sequence[dict[str, Any]], key: str) -> tuple[float, float, float]:
    values = [float(r[key]) for r in rows]
    return statistics.median(values), min(values), max(values)


def summarize(rows: Sequence[dict[str, Any]], methods: Sequence[str]) -> tuple[str, list[Any]]:
    """The medians table as text, and the target checks ``(caption, value, target, ok)``."""
    lines = [
        f"{'method':<10} {'configs/CPU-h':>22} {'best val loss':>30} {'epochs/config':>14} "
        f"{'CPU s':>20}"
    ]
    by = {m: [r for r in rows if r["method"] == m] for m in methods}
    for m in methods:
        if not by[m]:
            continue
        ph, bl, cpu = _median(by[m], "per_hour"), _median(by[m], "best"), _median(by[m], "cpu")
        epc = statistics.median(r["epochs"] / max(r["configurations"], 1) for r in by[m])
        lines.append(
            f"{m:<10} {ph[0]:8.0f} [{ph[1]:5.0f}, {ph[2]:5.0f}] "
            f"{bl[0]:10.5f} [{bl[1]:.5f}, {bl[2]:.5f}] {epc:14.2f} "
            f"{cpu[0]:6.1f} [{cpu[1]:4.1f}, {cpu[2]:4.1f}]"
        )
    checks: list[Any] = []
    seeds = sorted({r["seed"] for r in rows})

    def per_seed(a: str, b: str, key: str) -> dict[int, tuple[float, float]]:
        va = {r["seed"]: r[key] for r in by.get(a, [])}
        vb = {r["seed"]: r[key] for r in by.get(b, [])}
        return {s: (va[s], vb[s]) for s in seeds if s in va and s in vb}

    def best_checks(who: str, against: str, pairs: dict[int, tuple[float, float]], bound: float):
        """``who``'s best over ``against``'s: the median ratio, and the seeds within ``bound``."""
        rel = statistics.median(a / b for a, b in pairs.values())
        wins = sum(a <= bound * b for a, b in pairs.values())
        checks.append(
            (f"{who} best / {against} best (median over seeds)", rel, bound, rel <= bound)
        )
        within = against if bound == 1.0 else f"{bound:g} x {against}"
        caption = f"seeds with {who} best <= {within} best (of {len(pairs)})"
        checks.append((caption, wins, len(pairs), wins == len(pairs)))

    for pruned, unpruned in PAIRS:
        who = "ASHA" if pruned == "asha" else f"ASHA ({METHODS[pruned][2]})"
        if by.get(pruned) and by.get(unpruned):
            pairs = per_seed(pruned, unpruned, "per_hour")
            ratio = statistics.median(a / b for a, b in pairs.values())
            caption = f"{who} / unpruned configurations per CPU-hour (median)"
            checks.append((caption, ratio, 3.0, ratio >= 3.0))
            best_checks(who, "unpruned", per_seed(pruned, unpruned, "best"), 1.01)
        if by.get(pruned) and by.get("optuna"):
            best_checks(who, "Optuna TPE+SHA", per_seed(pruned, "optuna", "best"), 1.0)
    return "\n".join(lines), checks


def main(argv: Sequence[str] | None = None) -> int:
    from propulate.settings import EvolveSettings

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--budget", type=float, default=90.0, help="CPU seconds per run")
    parser.add_argument(
        "--epochs-budget",
        type=int,
        help="training epochs per run instead of CPU seconds (deterministic; --budget ignored)",
    )
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    parser.add_argument("--pop-size", type=int, default=8, help="the island model's pool")
    defaults = EvolveSettings()
    parser.add_argument(
        "--random-init-prob",
        type=float,
        default=defaults.random_init_prob,
        help="the island model's share of random",
    )
    parser.add_argument(
        "--pruned-random-init-prob",
        type=float,
        default=defaults.pruned_random_init_prob,
        help="the island model's share of random under the pruner",
    )
    parser.add_argument(
        "--sigma-factor",
        type=float,
        default=defaults.sigma_factor,
        help="the island model's mutation width",
    )
    parser.add_argument("--json", type=Path, help="write the tables for the report here")
    parser.add_argument("--results", type=Path, help="append every run's figures (JSONL)")
    parser.add_argument(
        "--summarize",
        type=Path,
        nargs="+",
        metavar="JSONL",
        help="run nothing: summarize the runs of --results files (e.g. of parallel parts)",
    )
    args = parser.parse_args(argv)
    logging.getLogger("propulate").setLevel(logging.WARNING)
    logging.getLogger("optuna").setLevel(logging.WARNING)
    root = Path("/dev/shm") if Path("/dev/shm").is_dir() else Path(tempfile.gettempdir())
    if not args.summarize:
        root = Path(tempfile.mkdtemp(prefix="pruning-bench-", dir=root))
    rows: list[dict[str, Any]] = []
    if args.summarize:
        for path in args.summarize:
            rows += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        args.seeds = sorted({r["seed"] for r in rows})
        args.methods = [m for m in METHODS if any(r["method"] == m for r in rows)]
        epochs = {r.get("epochs_budget") for r in rows} - {None}
        args.epochs_budget = max(epochs) if epochs else None
        if args.epochs_budget is None:
            args.budget = max(float(r.get("budget") or args.budget) for r in rows)
    print(
        f"{'method':<10} {'seed':>4} {'configs':>7} {'pruned':>6} {'epochs':>6} "
        f"{'CPU s':>6} {'configs/CPU-h':>13} {'best val loss':>13}",
        flush=True,
    )
    for seed in args.seeds:
        for method in args.methods:
            if args.summarize:
                row = next((r for r in rows if r["seed"] == seed and r["method"] == method), None)
                if row is not None:
                    print(
                        f"{method:<10} {seed:>4} {row['configurations']:>7} {row['pruned']:>6} "
                        f"{row['epochs']:>6} {row['cpu']:>6.1f} {row['per_hour']:>13.0f} "
                        f"{row['best']:>13.5f}"
                    )
                continue
            row = one_run(
                method,
                seed,
                args.budget,
                root,
                args.pop_size,
                args.epochs_budget,
                random_init_prob=args.random_init_prob,
                pruned_random_init_prob=args.pruned_random_init_prob,
                sigma_factor=args.sigma_factor,
            )
            rows.append(row)
            print(
                f"{method:<10} {seed:>4} {row['configurations']:>7} {row['pruned']:>6} "
                f"{row['epochs']:>6} {row['cpu']:>6.1f} {row['per_hour']:>13.0f} "
                f"{row['best']:>13.5f}",
                flush=True,
            )
            if args.results:
                with args.results.open("a") as fh:
                    fh.write(json.dumps(row) + "\n")
    table, checks = summarize(rows, args.methods)
    print(f"\nmedian [min, max] over seeds {args.seeds}, {budget_text(args)}:")
    print(table)
    for caption, value, target, ok in checks:
        print(f"{'MET ' if ok else 'MISSED'} {caption}: {value:.4g} (target {target:g})")
    if args.json:
        write_json(args, rows, checks)
    return 0


def budget_text(args: argparse.Namespace) -> str:
    """The budget of every run, in words."""
    if args.epochs_budget is not None:
        return f"{args.epochs_budget} training epochs per run (CPU seconds measured alongside)"
    return f"{args.budget:g} CPU seconds per run"


def write_json(args: argparse.Namespace, rows: list[dict[str, Any]], checks: list[Any]) -> None:
    """The figures in the report's benchmark format (:mod:`propulate.report.benchmarks`)."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
        ).stdout.strip()
    except OSError:
        commit = ""
    columns = ["method", "seed", "configurations", "pruned", "epochs", "cpu", "per_hour", "best"]
    data = {
        "title": "Early stopping on the digits MLP (ASHA, Optuna TPE + successive halving)",
        "command": "python benchmarks/pruning.py " + " ".join(sys.argv[1:]),
        "commit": commit,
        "date": time.strftime("%Y-%m-%d"),
        "note": f"{budget_text(args)}, one worker, BLAS on one thread",
        "tables": [
            {
                "caption": "per run",
                "columns": columns,
                "rows": [[r[c] for c in columns] for r in rows],
            }
        ],
        "targets": [
            {
                "caption": c,
                "value": v,
                "target": t,
                "better": "higher" if "per CPU-hour" in c or c.startswith("seeds") else "lower",
            }
            for c, v, t, _ in checks
        ],
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(data, indent=1) + "\n")


if __name__ == "__main__":
    sys.exit(main())
