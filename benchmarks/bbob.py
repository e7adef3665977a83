"""Search methods on COCO's ``bbob`` suite: the share of (problem, target) pairs reached.

Every method runs on the same problems -- COCO's ``bbob`` functions and instances, in the
dimension given, its search domain ``[-5, 5]^D`` -- with a budget of ``budget multiplier x D``
evaluations, and the script prints per method the share of (problem, target) pairs reached at
``10 x D``, ``100 x D``, ... evaluations for COCO's 51 targets ``10^2 ... 10^-8`` above the
optimum, the problems solved to ``1e-8``, and per function the share at the full budget.

Methods:

* every propagator of the registry (``propulate.propagators.registry.PROPAGATORS``: ``ga``,
  ``cma``, ``pso``, ``nm``, ``tpe``, ``bo``, ``portfolio``, ... -- one registered later appears
  by itself) but ``random``: propulate's island model with that propagator (``evolve
  --propagator``), run under ``mpiexec -n WORKERS`` on one island (``portfolio``: one island
  per propagator of its plan, which needs at least as many workers); a problem's evaluations
  are counted in the order they started; the propagator is built with the run's facts (its
  budget of evaluations, its ranks), so ``auto`` chooses as it would in ``evolve``;
* ``cma-package``: IPOP-CMA-ES of the ``cma`` package (``cma.fmin2`` with restarts and doubling
  population, ``x0`` uniform in ``[-4, 4]^D``, ``sigma0 = 2``, as COCO's examples), one process;
* ``random``: uniform random search in the domain;
* ``optuna-tpe``, ``optuna-cma``: Optuna's TPE and CMA-ES samplers, one process, at most
  ``--optuna-budget-multiplier x D`` evaluations (default 100: their time per trial grows);
* ``optuna-default``: the sampler ``optuna.create_study()`` uses when given none (Optuna 5.1:
  ``TPESampler`` with its defaults, so the same as ``optuna-tpe`` there), its class built
  with ``seed=`` so runs repeat; budget capped as the other Optuna methods;
* ``ngopt``: Nevergrad's ``NGOpt`` (``num_workers=1``, seeded), one process of the interpreter
  ``--ngopt-python`` (a venv of its own: Nevergrad needs ``numpy < 2.3``; see
  :mod:`bbob_ngopt`).

Usage (the benchmark extra installs ``coco-experiment``, ``cma``, ``cmaes``)::

    python benchmarks/bbob.py --functions 1-24 --instances 1-5 --budget-multiplier 1000 \\
        --methods cma cma-package --workers 2
    python benchmarks/bbob.py --from-results runs.jsonl      # the tables of earlier runs

``--eval-seconds S`` makes every evaluation of the engine's methods take ``S`` seconds of
sleep (the reference methods run one process and are unaffected: the tables count
evaluations, not time). With zero-cost evaluations, more workers than cores are time-sliced by
the operating system: a worker evaluates hundreds of children in its slice before its peers
run, and receives theirs in bursts, many generations old. With a cost per evaluation the
workers evaluate side by side, as the workers of a real objective do, and each child is
at most about ``workers`` evaluations old when the others see it.

``--results FILE`` appends one JSON line per (method, problem) and skips those already in it
(same dimension and budget), so an interrupted measurement goes on where it stopped; one file
may hold several dimensions and budgets, the tables take those of ``--dim`` and
``--budget-multiplier``. A line names method, function, instance, dim, budget, seed, the
evaluations made, the best ``f - f_opt``, the evaluation at which each of the 51 targets was
first reached (``hits``: the COCO share at any budget up to the line's) and the wall seconds. The same command with the same
``--seed`` gives the same figures (up to the asynchronous order of the workers).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from suite_runs import coco_problem, int_ranges, load, recorder, stream_results, timed_run

from propulate.propagators.registry import PROPAGATORS
from propulate.settings import EvolveSettings

#: COCO's targets: 51 values from 1e2 down to 1e-8, five per decade.
TARGETS = 10.0 ** np.linspace(2, -8, 51)
REFERENCE_METHODS = ("cma-package", "random", "optuna-tpe", "optuna-cma", "optuna-default", "ngopt")
#: Where ``ngopt`` finds an interpreter with Nevergrad (``--ngopt-python``), if it exists.
NGOPT_PYTHON = Path("/tmp/ngvenv/bin/python")
#: Every registered propagator (a newly registered one appears by itself) but those a reference
#: method of the same name measures (``random``: uniform random search needs no engine).
ENGINE_METHODS = tuple(name for name in PROPAGATORS if name not in REFERENCE_METHODS)
METHODS = ENGINE_METHODS + REFERENCE_METHODS


# ------------------------------------------------------------------ problems and traces
def problem(function: int, instance: int, dim: int) -> tuple[Any, float]:
    """A ``bbob`` problem and its optimal value (bbob's optima are multiples of 0.01)."""
    p, xopt = coco_problem("bbob", function, instance, dim)
    value = float(p(xopt[0]))
    fopt = round(value, 2)
    assert abs(value - fopt) < 1e-6, f"f{function} i{instance}: f(x_opt) = {value}"
    return p, fopt


def first_hits(deltas: Iterable[float]) -> list[int | None]:
    """Per target, the 1-based evaluation at which ``f - f_opt`` first reached it."""
    hits: list[int | None] = [None] * len(TARGETS)
    best, k = math.inf, 0
    for i, d in enumerate(deltas, 1):
        if d < best:
            best = d
            while k < len(TARGETS) and best <= TARGETS[k]:
                hits[k] = i
                k += 1
    return hits


def row(
    method: str, f: int, inst: int, dim: int, budget: int, deltas: Sequence[float], seconds: float
) -> dict[str, Any]:
    """One result line."""
    return {
        "method": method,
        "function": f,
        "instance": inst,
        "dim": dim,
        "budget": budget,
        "evaluations": len(deltas),
        "best": float(min(deltas)) if deltas else math.inf,
        "hits": first_hits(deltas),
        "seconds": seconds,
    }


# ------------------------------------------------------------------ reference methods
def run_reference(method: str, f: int, inst: int, dim: int, budget: int, seed: int) -> list[float]:
    """The ``f - f_opt`` of every evaluation of a reference method, in order."""
    p, fopt = problem(f, inst, dim)
    deltas: list[float] = []
    rng = np.random.default_rng(seed)

    def fun(x: Any) -> float:
        d = float(p(np.asarray(x, dtype=float))) - fopt
        deltas.append(d)
        return d

    if method == "random":
        for x in rng.uniform(-5, 5, (budget, dim)):
            fun(x)
    elif method == "cma-package":
        import cma

        opts = {"maxfevals": budget, "verbose": -9, "seed": seed + 1, "ftarget": 1e-8}
        while len(deltas) < budget and min(deltas, default=math.inf) > 1e-8:
            left = {**opts, "maxfevals": budget - len(deltas)}
            cma.fmin2(fun, rng.uniform(-4, 4, dim), 2.0, left, restarts=9, incpopsize=2)
    else:
        import optuna

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        sampler = optuna_sampler(method, seed)
        study = optuna.create_study(sampler=sampler)

        def objective(trial: Any) -> float:
            return fun([trial.suggest_float(f"x{i}", -5.0, 5.0) for i in range(dim)])

        study.optimize(objective, n_trials=budget, callbacks=[_stop_at_target])
    return deltas[:budget]


def optuna_sampler(method: str, seed: int) -> Any:
    """The seeded Optuna sampler of ``optuna-tpe``, ``optuna-cma`` or ``optuna-default``
    (the class ``optuna.create_study()`` chooses when given no sampler, with ``seed``)."""
    import optuna

    if method == "optuna-tpe":
        return optuna.samplers.TPESampler(seed=seed)
    if method == "optuna-cma":
        return optuna.samplers.CmaEsSampler(seed=seed)
    if method == "optuna-default":
        return type(optuna.create_study().sampler)(seed=seed)
    raise ValueError(f"not an Optuna method: {method}")


def run_ngopt(
    todo: list[tuple[int, int]],
    dim: int,
    budget: int,
    seed: int,
    python: Path,
    emit: Callable[[dict[str, Any]], None],
) -> None:
    """Run Nevergrad's NGOpt (:mod:`bbob_ngopt`, under the interpreter ``python``) on the
    problems ``todo``; ``emit`` each result line."""
    if not python.exists():
        raise SystemExit(
            f"ngopt: no interpreter {python}; make a venv with Nevergrad "
            "(python3.11 -m venv /tmp/ngvenv; /tmp/ngvenv/bin/pip install nevergrad "
            "'numpy<2.3' coco-experiment) or give --ngopt-python"
        )
    fopts = {(f, inst): problem(f, inst, dim)[1] for f, inst in todo}
    jobs = [
        [f, inst, dim, budget, fopts[f, inst], seed * 100_003 + f * 1009 + inst] for f, inst in todo
    ]
    script = Path(__file__).with_name("bbob_ngopt.py")

    def convert(r: dict[str, Any]) -> None:
        f, inst = r["function"], r["instance"]
        deltas = [v - fopts[f, inst] for v in r["values"]]
        emit(row("ngopt", f, inst, dim, budget, deltas, r["seconds"]))

    stream_results([str(python), str(script), json.dumps(jobs)], convert)


def _stop_at_target(study: Any, trial: Any) -> None:
    if trial.value is not None and trial.value <= 1e-8:
        study.stop()


# ------------------------------------------------------------------ the engine (under MPI)
def engine_propagator(space: Any, settings: EvolveSettings, rng: random.Random, ranks: int) -> Any:
    """The propagator of ``settings.propagator`` for one rank, built as ``evolve`` builds it:
    with the facts of the run (its evaluation budget ``settings.max_evaluations`` and its
    ``ranks``), which ``auto`` chooses from (without them it would see no budget)."""
    from propulate.plugins.facts import RunFacts
    from propulate.propagators.registry import build_propagator, propagator_spec

    facts = RunFacts.of(settings, space, ranks)
    return build_propagator(propagator_spec(settings), space, rng, facts)


def engine_main(args: argparse.Namespace) -> None:
    """Run one propagator on every problem (every rank); rank 0 prints JSON lines."""

    from mpi4py import MPI

    from propulate.propagators.portfolio import portfolio_islands
    from propulate.settings import EvolveSettings
    from propulate.space import SearchSpace

    comm = MPI.COMM_WORLD
    dim, method = args.dim, args.engine
    islands = portfolio_islands(method, comm.Get_size(), args.portfolio)
    if method == "portfolio" and args.portfolio_islands:
        islands = args.portfolio_islands
    budget = args.budget_multiplier * dim
    settings = EvolveSettings(
        islands=islands, propagator=method, portfolio=args.portfolio, max_evaluations=budget
    )
    space = SearchSpace({f"x{i}": (-5.0, 5.0) for i in range(dim)})
    keys = space.names
    for f, inst in args.problems:
        p, fopt = problem(f, inst, dim)
        trace: list[tuple[float, float]] = []

        def loss(params: Any, p: Any = p, fopt: float = fopt, trace: list = trace) -> float:
            t = time.time()
            d = float(p(np.fromiter((params[k] for k in keys), float, dim))) - fopt
            trace.append((t, d))
            if args.eval_seconds:
                time.sleep(args.eval_seconds)  # an evaluation that takes time, not CPU
            return d

        seed = args.seed * 100_003 + f * 1009 + inst
        rng = random.Random(seed * 1_000_003 + comm.Get_rank())
        # the run's seed, as evolve --seed gives it (auto's landscape probe derives from it)
        run_settings = dataclasses.replace(settings, seed=seed)
        prop = engine_propagator(space, run_settings, rng, comm.Get_size())
        done = timed_run(comm, loss, prop, rng, space, budget, trace, args.tmp, num_islands=islands)
        if done is not None:
            merged, seconds = done
            out = row(method, f, inst, dim, budget, [d for _, d in merged], seconds)
            if args.eval_seconds:
                out["eval_seconds"] = args.eval_seconds
            print(json.dumps(out), flush=True)


def run_engine(
    method: str,
    todo: list[tuple[int, int]],
    args: argparse.Namespace,
    emit: Callable[[dict[str, Any]], None],
) -> None:
    """Run ``method`` on the problems ``todo`` under mpiexec; ``emit`` each result line."""
    from propulate.engine.launch import find_mpiexec

    cmd = [
        find_mpiexec(),
        "-n",
        str(args.workers),
        sys.executable,
        __file__,
        "--engine",
        method,
        "--dim",
        str(args.dim),
        "--budget-multiplier",
        str(args.budget_multiplier),
        "--seed",
        str(args.seed),
        "--portfolio",
        args.portfolio,
        "--portfolio-islands",
        str(args.portfolio_islands),
        "--problems",
        json.dumps(todo),
    ]
    if args.tmp:
        cmd += ["--tmp", args.tmp]
    if args.eval_seconds:
        cmd += ["--eval-seconds", str(args.eval_seconds)]
    stream_results(cmd, emit)


# ------------------------------------------------------------------ tables
def share(rows: list[dict[str, Any]], evals: int) -> float:
    """The share of (problem, target) pairs reached within ``evals`` evaluations."""
    n = sum(1 for r in rows for h in r["hits"] if h is not None and h <= evals)
    return n / (len(rows) * len(TARGETS)) if rows else math.nan


def report(rows: list[dict[str, Any]], methods: Sequence[str], dim: int) -> None:
    """Print the tables."""
    by: dict[str, list[dict[str, Any]]] = {
        m: [r for r in rows if r["method"] == m] for m in methods
    }
    by = {m: rs for m, rs in by.items() if rs}
    if not by:
        print("no results")
        return
    top = max(r["budget"] for rs in by.values() for r in rs) // dim
    mults = [10**k for k in range(1, 7) if 10**k <= top]
    probs = sorted({(r["function"], r["instance"]) for rs in by.values() for r in rs})
    insts = sorted({i for _, i in probs})
    print(f"\nbbob, {dim}-D, {len(probs)} problems (instances {insts}), 51 targets 1e2..1e-8")
    head = " ".join(f"{f'{m}xD':>9}" for m in mults)
    print(f"{'method':<14} {'probs':>6} {head} {'full':>7} {'solved':>7} {'seconds':>8}")
    for m, rs in by.items():
        cells = " ".join(
            f"{share(rs, mu * dim):>9.3f}"
            if max(r["budget"] for r in rs) >= mu * dim
            else f"{'-':>9}"
            for mu in mults
        )
        full = share(rs, max(r["budget"] for r in rs))
        solved = sum(r["hits"][-1] is not None for r in rs) / len(rs)
        secs = sum(r["seconds"] for r in rs)
        print(f"{m:<14} {len(rs):>6} {cells} {full:>7.3f} {solved:>7.1%} {secs:>8.0f}")
    funcs = sorted({f for f, _ in probs})
    print("\nper function: share of targets at each method's full budget")
    print(f"{'f':>3} " + " ".join(f"{m[:11]:>11}" for m in by))
    for f in funcs:
        cells = []
        for rs in by.values():
            fr = [r for r in rs if r["function"] == f]
            cells.append(
                f"{share(fr, max(r['budget'] for r in fr)):>11.3f}" if fr else f"{'-':>11}"
            )
        print(f"{f:>3} " + " ".join(cells))
    f8 = {m: [r["hits"][-1] for r in rs if r["function"] == 8] for m, rs in by.items()}
    if any(f8.values()):
        print("\nf8 (Rosenbrock): evaluations to reach 1e-8, median over instances (unsolved: inf)")
        for m, hs in f8.items():
            if hs:
                med = statistics.median(h if h is not None else math.inf for h in hs)
                print(f"  {m:<12} {med:>9.0f}   {[h for h in hs]}")


def budget_of(method: str, args: argparse.Namespace) -> int:
    """The evaluations ``method`` gets: ``--budget-multiplier x D``, for the Optuna methods at
    most ``--optuna-budget-multiplier x D``."""
    mult = args.budget_multiplier
    if method.startswith("optuna"):
        mult = min(mult, args.optuna_budget_multiplier)
    return mult * args.dim


def main(argv: Sequence[str] | None = None) -> int:
    """Run the methods and print the tables."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--functions", type=int_ranges, default=int_ranges("1-24"), metavar="1-24")
    p.add_argument("--instances", type=int_ranges, default=int_ranges("1-5"), metavar="1-5")
    p.add_argument("--dim", type=int, default=10, help="dimension (COCO's: 2 3 5 10 20 40)")
    p.add_argument("--budget-multiplier", type=int, default=1000, help="evaluations / D")
    p.add_argument(
        "--optuna-budget-multiplier", type=int, default=100, help="the Optuna methods' cap"
    )
    p.add_argument(
        "--methods",
        nargs="+",
        default=["ga", "cma", "portfolio", "cma-package", "random"],
        choices=METHODS,
        metavar="METHOD",
    )
    p.add_argument("--workers", type=int, default=2, help="MPI ranks of the engine's runs")
    p.add_argument(
        "--eval-seconds",
        type=float,
        default=0.0,
        help="the engine's evaluations sleep this long (0: zero-cost); see the docstring",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--portfolio",
        default=EvolveSettings().portfolio,
        help="the portfolio's plan (one island per entry, at most one per worker)",
    )
    p.add_argument(
        "--portfolio-islands",
        type=int,
        default=0,
        help="islands of the portfolio (default: one per plan entry); 1: the plan's "
        "propagators on the workers of one island",
    )
    p.add_argument(
        "--ngopt-python",
        type=Path,
        default=NGOPT_PYTHON,
        help=f"the interpreter with Nevergrad that runs ngopt (default {NGOPT_PYTHON})",
    )
    p.add_argument("--results", type=Path, help="append result lines here; skip those present")
    p.add_argument("--from-results", type=Path, metavar="RUNS.jsonl", help="print tables only")
    p.add_argument("--tmp", default="/dev/shm" if os.access("/dev/shm", os.W_OK) else None)
    p.add_argument("--engine", help=argparse.SUPPRESS)
    p.add_argument("--problems", type=json.loads, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.engine:
        engine_main(args)
        return 0
    problems = [(f, i) for f in args.functions for i in args.instances]

    def wanted(r: dict[str, Any]) -> bool:
        """A line of these problems, this dimension and its method's budget."""
        return (
            (r["function"], r["instance"]) in set(problems)
            and r["dim"] == args.dim
            and r["budget"] == budget_of(r["method"], args)
            and r.get("seed", args.seed) == args.seed
        )

    if args.from_results:
        rows = [r for r in load(args.from_results) if wanted(r)]
        report(rows, [m for m in METHODS if m in args.methods], args.dim)
        return 0
    rows = [r for r in load(args.results) if wanted(r)] if args.results else []
    t0 = time.time()
    for method in args.methods:
        budget = budget_of(method, args)
        done = {(r["function"], r["instance"]) for r in rows if r["method"] == method}
        todo = [pr for pr in problems if pr not in done]

        emit = recorder(
            rows,
            args.results,
            lambda r: (
                f"  {r['method']:<12} f{r['function']:<2} i{r['instance']:<3} best "
                f"{r['best']:.3e}  {r['seconds']:.1f} s"
            ),
        )

        def seeded(r: dict[str, Any], emit: Callable[[dict[str, Any]], None] = emit) -> None:
            emit({**r, "seed": args.seed})

        if not todo:
            continue
        if method in ENGINE_METHODS:
            run_engine(method, todo, args, seeded)
        elif method == "ngopt":
            run_ngopt(todo, args.dim, budget, args.seed, args.ngopt_python, seeded)
        else:
            for f, inst in todo:
                t = time.perf_counter()
                seed = args.seed * 100_003 + f * 1009 + inst
                deltas = run_reference(method, f, inst, args.dim, budget, seed)
                seeded(row(method, f, inst, args.dim, budget, deltas, time.perf_counter() - t))
    report(rows, args.methods, args.dim)
    print(f"\nwall time {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
