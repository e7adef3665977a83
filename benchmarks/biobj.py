"""Several objectives: propulate's Pareto GA against pymoo's NSGA-II, by hypervolume.

Problems:

* COCO's ``bbob-biobj`` suite (``cocoex``): 55 bi-objective functions, the instances and the
  dimension given, searched in ``[-5, 5]^D`` (COCO's region of interest, as
  ``benchmarks/bbob.py`` searches ``bbob``), ``budget multiplier x D`` evaluations. Each
  problem's objectives are normalised by its ideal point (each objective's optimum, at the two
  optimal parameters cocoex gives) and its nadir point (cocoex's
  ``largest_fvalues_of_interest``): ``(f - ideal) / (nadir - ideal)``; the hypervolume is
  taken in that space with the reference point ``(1.1, 1.1)``.
* ``--zdt1``: ZDT1 in 30-D, 20,000 evaluations, hypervolume of the raw objectives with
  respect to ``(1.1, 1.1)`` (the true front's: ``1.21 - 1/3 = 0.8767``).

The hypervolume of a run is that of every solution it evaluated (its archive), after exactly
the budget: the same measure for both methods (COCO measures archives too).

Methods:

* ``propulate``: the island model's GA with Pareto selection (``evolve --objectives``,
  :class:`propulate.propagators.pareto_selection.ParetoPool`), one island, under
  ``mpiexec -n WORKERS`` (default 2 ranks), a global budget; ``--pop-size`` its pool;
* ``nsga2``: pymoo's ``NSGA2`` (its defaults: SBX crossover and polynomial mutation), one
  process, the population size ``--nsga2-pop-size`` (default 100), stopped after the budget.

Usage::

    python benchmarks/biobj.py --functions 1-55 --instances 6 --seeds 1 2 3 --results r.jsonl
    python benchmarks/biobj.py --zdt1 --seeds 1 2 3
    python benchmarks/biobj.py --from-results r.jsonl --instances 6    # the table only

``--results FILE`` appends one JSON line per (method, problem, seed) and skips those already
in it. The table gives per problem the median hypervolume over the seeds of each method and
their ratio, and the share of problems where propulate's median reaches ``0.98 x`` NSGA-II's.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from suite_runs import (  # noqa: E402
    coco_problem,
    int_ranges,
    load,
    recorder,
    stream_results,
    timed_run,
)

from propulate.runs.dominance import hypervolume  # noqa: E402

REFERENCE = (1.1, 1.1)
ZDT1_DIM, ZDT1_BUDGET = 30, 20_000


# ------------------------------------------------------------------ problems
def biobj_problem(function: int, instance: int, dim: int) -> tuple[Any, np.ndarray, np.ndarray]:
    """A ``bbob-biobj`` problem with its ideal and nadir points."""
    p, xopt = coco_problem("bbob-biobj", function, instance, dim)
    ideal = np.array([p(xopt[0])[0], p(xopt[1])[1]])
    nadir = np.asarray(p.largest_fvalues_of_interest, dtype=float)
    return p, ideal, nadir


def zdt1(x: np.ndarray) -> tuple[float, float]:
    """ZDT1 of a point of ``[0, 1]^n``."""
    g = 1.0 + 9.0 * float(np.mean(x[1:]))
    return float(x[0]), g * (1.0 - float(np.sqrt(x[0] / g)))


def problem_of(key: tuple[str, int, int], dim: int) -> tuple[Callable[[np.ndarray], Any], Any]:
    """``(evaluate, normalise, low, high)`` of a problem key ``("biobj", f, i)`` or
    ``("zdt1", 0, 0)``."""
    if key[0] == "zdt1":
        return zdt1, (None, None, 0.0, 1.0)
    p, ideal, nadir = biobj_problem(key[1], key[2], dim)
    return p, (ideal, nadir, -5.0, 5.0)


def measure(points: np.ndarray, ideal: Any, nadir: Any) -> float:
    """The hypervolume of ``points`` (normalised when the ideal and nadir are given)."""
    f = np.asarray(points, dtype=float)
    if ideal is not None:
        f = (f - ideal) / (nadir - ideal)
    return hypervolume(f, REFERENCE)


def row(
    method: str, key: Any, dim: int, budget: int, seed: int, hv: float, seconds: float
) -> dict[str, Any]:
    return {
        "method": method,
        "suite": key[0],
        "function": key[1],
        "instance": key[2],
        "dim": dim,
        "budget": budget,
        "seed": seed,
        "hv": hv,
        "seconds": seconds,
    }


# ------------------------------------------------------------------ pymoo's NSGA-II
def run_nsga2(key: Any, dim: int, budget: int, seed: int, pop_size: int) -> float:
    """Hypervolume of the first ``budget`` solutions pymoo's NSGA-II evaluates."""
    from pymoo.algorithms.moo.nsga2 import NSGA2
    from pymoo.core.problem import Problem
    from pymoo.optimize import minimize

    evaluate, (ideal, nadir, low, high) = problem_of(key, dim)
    archive: list[Any] = []

    class Wrapped(Problem):
        def _evaluate(self, x: np.ndarray, out: dict[str, Any], *args: Any, **kw: Any) -> None:
            f = np.array([evaluate(xi) for xi in x], dtype=float)
            archive.extend(f)
            out["F"] = f

    problem = Wrapped(n_var=dim, n_obj=2, xl=low, xu=high)
    minimize(problem, NSGA2(pop_size=pop_size), ("n_eval", budget), seed=seed, verbose=False)
    return measure(np.asarray(archive[:budget]), ideal, nadir)


# ------------------------------------------------------------------ the engine (under MPI)
def engine_main(args: argparse.Namespace) -> None:
    """Run the Pareto GA on every (problem, seed) (every rank); rank 0 prints JSON lines."""
    import random

    from mpi4py import MPI

    from propulate import get_default_propagator
    from propulate.runs.declared_objectives import Objectives
    from propulate.space import SearchSpace

    comm = MPI.COMM_WORLD
    declared = Objectives.parse("f1:min,f2:min")
    for key, dim, seed in args.problems:
        key = tuple(key)
        evaluate, (ideal, nadir, low, high) = problem_of(key, dim)
        budget = ZDT1_BUDGET if key[0] == "zdt1" else args.budget_multiplier * dim
        space = SearchSpace({f"x{i}": (low, high) for i in range(dim)})
        names = space.names
        trace: list[tuple[float, float, float]] = []

        def loss(
            params: Any, evaluate: Any = evaluate, trace: list = trace, names: Any = names
        ) -> dict[str, float]:
            f = evaluate(np.fromiter((params[k] for k in names), float, len(names)))
            trace.append((time.time(), float(f[0]), float(f[1])))
            return {"f1": float(f[0]), "f2": float(f[1])}

        rng = random.Random(seed * 1_000_003 + comm.Get_rank())
        if args.propagator:  # a registered propagator by spec (auto: what a user gets)
            from propulate.plugins.facts import RunFacts
            from propulate.propagators.registry import build_propagator

            facts = RunFacts.of(None, space, comm.Get_size())
            facts = dataclasses.replace(facts, max_evaluations=budget, objectives=declared)
            prop = build_propagator(args.propagator, space, rng, facts)
        else:
            prop = get_default_propagator(
                args.pop_size,
                space,
                crossover_prob=args.crossover_prob,
                mutation_prob=args.mutation_prob,
                random_init_prob=args.random_init_prob,
                sigma_factor=args.sigma_factor,
                rng=rng,
                objectives=declared,
            )
        done = timed_run(comm, loss, prop, rng, space, budget, trace, args.tmp, objectives=declared)
        if done is not None:
            merged, seconds = done
            points = np.array([e[1:] for e in merged[:budget]])
            hv = measure(points, ideal, nadir)
            print(json.dumps(row("propulate", key, dim, budget, seed, hv, seconds)), flush=True)


def run_engine(
    todo: list[Any], args: argparse.Namespace, emit: Callable[[dict[str, Any]], None]
) -> None:
    """Run the Pareto GA on ``todo`` under mpiexec; ``emit`` each result line."""
    from propulate.engine.launch import find_mpiexec

    cmd = [find_mpiexec(), "-n", str(args.workers), sys.executable, __file__, "--engine"]
    for name in ("budget_multiplier", "pop_size", "crossover_prob", "mutation_prob"):
        cmd += ["--" + name.replace("_", "-"), str(getattr(args, name))]
    cmd += ["--random-init-prob", str(args.random_init_prob)]
    cmd += ["--sigma-factor", str(args.sigma_factor), "--problems", json.dumps(todo)]
    if args.propagator:
        cmd += ["--propagator", args.propagator]
    if args.tmp:
        cmd += ["--tmp", args.tmp]
    stream_results(cmd, emit)


# ------------------------------------------------------------------ tables
def report(rows: list[dict[str, Any]]) -> None:
    """Per problem the median hypervolumes and their ratio; the share reaching 0.98."""
    by: dict[tuple[Any, ...], dict[str, list[float]]] = {}
    for r in rows:
        key = (r["suite"], r["function"], r["instance"], r["dim"])
        by.setdefault(key, {}).setdefault(r["method"], []).append(r["hv"])
    print(f"\n{'problem':<22} {'seeds':>5} {'propulate':>20} {'nsga2':>20} {'ratio':>7}")
    ratios = []
    for key in sorted(by):
        hv = by[key]
        if "propulate" not in hv or "nsga2" not in hv:
            continue
        a, b = statistics.median(hv["propulate"]), statistics.median(hv["nsga2"])
        ratio = a / b if b > 0 else (1.0 if a >= b else 0.0)
        ratios.append(ratio)
        name = "zdt1 30-D" if key[0] == "zdt1" else f"f{key[1]:02d} i{key[2]:02d} {key[3]}-D"
        spread = f"[{min(hv['propulate']):.3f}, {max(hv['propulate']):.3f}]"
        nspread = f"[{min(hv['nsga2']):.3f}, {max(hv['nsga2']):.3f}]"
        print(
            f"{name:<22} {len(hv['propulate']):>5} {a:.4f} {spread:>13} "
            f"{b:.4f} {nspread:>13} {ratio:>7.3f}"
        )
    if ratios:
        share = sum(r >= 0.98 for r in ratios) / len(ratios)
        print(
            f"\nproblems {len(ratios)}: median(propulate) >= 0.98 x median(nsga2) on "
            f"{share:.0%}; median ratio {statistics.median(ratios):.3f}, "
            f"quartiles {np.percentile(ratios, 25):.3f} .. {np.percentile(ratios, 75):.3f}"
        )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the methods and print the table."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--functions", type=int_ranges, default=int_ranges("1-55"), metavar="1-55")
    p.add_argument("--instances", type=int_ranges, default=int_ranges("1-5"), metavar="1-5")
    p.add_argument("--dim", type=int, default=5)
    p.add_argument("--zdt1", action="store_true", help="ZDT1 30-D, 20,000 evaluations instead")
    p.add_argument("--budget-multiplier", type=int, default=1000, help="evaluations / D")
    p.add_argument("--seeds", type=int, nargs="+", default=[1])
    p.add_argument("--methods", nargs="+", default=["propulate", "nsga2"])
    p.add_argument("--workers", type=int, default=2, help="MPI ranks of propulate's runs")
    p.add_argument("--pop-size", type=int, default=40, help="propulate's Pareto pool")
    p.add_argument(
        "--propagator",
        help="propulate's runs use this registered propagator spec (e.g. auto) instead of the "
        "Pareto GA of --pop-size and the breeding options",
    )
    p.add_argument("--crossover-prob", type=float, default=0.7)
    p.add_argument("--mutation-prob", type=float, default=0.4)
    p.add_argument("--random-init-prob", type=float, default=0.1)
    p.add_argument("--sigma-factor", type=float, default=0.05)
    p.add_argument("--nsga2-pop-size", type=int, default=100)
    p.add_argument("--results", type=Path, help="append result lines here; skip those present")
    p.add_argument("--from-results", type=Path, metavar="RUNS.jsonl", help="print the table only")
    p.add_argument("--tmp", default="/dev/shm" if os.access("/dev/shm", os.W_OK) else None)
    p.add_argument("--engine", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--problems", type=json.loads, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.engine:
        engine_main(args)
        return 0
    if args.zdt1:
        keys, dim = [("zdt1", 0, 0)], ZDT1_DIM
    else:
        keys = [("biobj", f, i) for f in args.functions for i in args.instances]
        dim = args.dim
    wanted = {(*k, dim) for k in keys}

    def ident(r: dict[str, Any]) -> tuple[Any, ...]:
        return (r["suite"], r["function"], r["instance"], r["dim"])

    source = args.from_results or args.results
    rows = [r for r in load(source) if ident(r) in wanted] if source else []
    if args.from_results:
        report(rows)
        return 0
    t0 = time.time()

    emit = recorder(
        rows,
        args.results,
        lambda r: (
            f"  {r['method']:<10} {r['suite']} f{r['function']:<2} i{r['instance']:<3} "
            f"seed {r['seed']}: hv {r['hv']:.4f}  {r['seconds']:.1f} s"
        ),
    )

    for method in args.methods:
        done = {(*ident(r), r["seed"]) for r in rows if r["method"] == method}
        todo = [(k, dim, s) for k in keys for s in args.seeds if (*k, dim, s) not in done]
        if method == "propulate" and todo:
            run_engine(todo, args, emit)
        elif method == "nsga2":
            for key, d, seed in todo:
                budget = ZDT1_BUDGET if key[0] == "zdt1" else args.budget_multiplier * d
                t = time.perf_counter()
                hv = run_nsga2(key, d, budget, seed, args.nsga2_pop_size)
                emit(row("nsga2", key, d, budget, seed, hv, time.perf_counter() - t))
    report(rows)
    print(f"\nwall time {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
