"""The ``bo`` propagator: its time per proposal, and its share of COCO bbob targets at small
budgets beside Optuna's default TPE and the project's single-task GP-EI, in one run.

Two measurements, each printed as a table:

* ``timing``: one worker's time per proposal (breed one child, then observe its evaluation)
  with ``--at`` observations of a ``--dim``-dimensional problem (bbob f1, instance 1) already
  known: the first proposal (a hyperparameter fit and a fresh factor, as after a resume) and
  the mean and largest of the next ``--proposals`` (bordered factor updates and the refits
  they are due), wall seconds, and the mean in CPU seconds of the process (on a loaded machine
  the wall time counts the other processes' turns too). With ``--deephyper-python PY``, also a run of ``--deephyper-evaluations``
  from scratch, and DeepHyper's ``CBO`` (its defaults, one worker) on a zero-cost sphere of the
  same dimension for as many evaluations, run by ``PY`` (a Python with ``deephyper``, not a
  dependency of the project: ``benchmarks/bo_deephyper.py``), their seconds per proposal and
  the ratio;
* ``quality``: every method on every (function, instance) of bbob in ``--dim`` dimensions at
  ``max(--multipliers) x D`` evaluations; the share of (problem, target) pairs (COCO's 51
  targets ``1e2 .. 1e-8``, :mod:`bbob`) reached within each ``m x D`` of ``--multipliers``:

  - ``bo``: ``evolve --propagator bo``'s engine under ``mpiexec -n --workers`` (:mod:`bbob`);
  - ``optuna-tpe``: Optuna's default ``TPESampler`` (one process, :mod:`bbob`);
  - ``gp-ei``: the project's single-task GP-EI (MLA's loop on one task with a one-task model,
    :func:`multitask.gp_ei_run`), its first ``--gp-initial`` evaluations a Latin hypercube;
    it refits its model on every evaluation, so it runs at ``--gp-multiplier x D`` at most;
  - ``cbo``: DeepHyper's ``CBO`` (its defaults, one worker, ``random_state=--seed``) run by
    ``--deephyper-python`` (``benchmarks/bo_deephyper.py --bbob``); about 3 s per proposal here,
    so it runs at ``--cbo-multiplier x D`` at most.

* ``scale``: ``bo`` and ``tpe`` under ``mpiexec -n --workers`` (8 by default, oversubscribed
  is fine) on bbob problems whose every evaluation also sleeps ``--eval-seconds`` (1 s): the
  share of targets at ``--multiplier x D`` evaluations and the utilisation, evaluation seconds
  over ``workers x`` the slowest worker's wall seconds of the run.

Usage::

    python benchmarks/bo.py timing --dim 10 --at 200 1000
    python benchmarks/bo.py scale --functions 1,8,15,21 --instances 71 --workers 8
    python benchmarks/bo.py quality --functions 1,2,3,5,6,7,8,10,13,15,17,20,21 \\
        --instances 71-72 --multipliers 20 50 --results bo_runs.jsonl

Develop on instances 1-5 and report held-out ones (71-75). ``--results`` appends one JSON line
per (method, problem) and skips those already in it.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from bbob import TARGETS, problem, row, run_engine, run_reference, share
from suite_runs import int_ranges, load

from propulate.population import Individual
from propulate.propagators.bo import BO
from propulate.settings import EvolveSettings
from propulate.space import SearchSpace

#: The methods ``quality`` runs unless told (``cbo`` needs ``--deephyper-python``).
DEFAULT_QUALITY = ("bo", "optuna-tpe", "gp-ei")
QUALITY_METHODS = (*DEFAULT_QUALITY, "cbo")


def box(dim: int) -> SearchSpace:
    """bbob's search domain ``[-5, 5]^dim``."""
    return SearchSpace({f"x{i}": (-5.0, 5.0) for i in range(dim)})


# ------------------------------------------------------------------ timing
def time_proposals(dim: int, known: int, proposals: int, seed: int = 0) -> dict[str, float]:
    """Seconds per proposal of one ``bo`` worker that knows ``known`` evaluations."""
    p, fopt = problem(1, 1, dim)
    space = box(dim)
    prop = BO(space, random.Random(seed))
    gen = np.random.default_rng(seed)
    for u in gen.random((known, dim)):
        ind = Individual(space.decode(u))
        ind.loss = float(p(np.array(list(ind.values())))) - fopt
        prop.observe(ind)
    times, cpu = [], []
    for _ in range(proposals + 1):
        t, c = time.perf_counter(), time.process_time()
        child = prop([])
        times.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
        child.loss = float(p(np.array(list(child.values())))) - fopt
        prop.observe(child)
    steady = times[1:]
    return {
        "known": known,
        "first": times[0],
        "mean": float(np.mean(steady)),
        "max": max(steady),
        "cpu": float(np.mean(cpu[1:])),
    }


def run_seconds(dim: int, evaluations: int, seed: int = 0) -> float:
    """Mean seconds per proposal of one ``bo`` worker over a run of ``evaluations`` from
    scratch (its initial design included) on bbob f1 in ``dim`` dimensions."""
    p, fopt = problem(1, 1, dim)
    prop = BO(box(dim), random.Random(seed))
    spent = 0.0
    for _ in range(evaluations):
        t = time.perf_counter()
        child = prop([])
        spent += time.perf_counter() - t
        child.loss = float(p(np.array(list(child.values())))) - fopt
        prop.observe(child)
    return spent / evaluations


def deephyper(python: str, dim: int, evaluations: int) -> dict[str, float]:
    """DeepHyper ``CBO``'s timing (``benchmarks/bo_deephyper.py`` run by ``python``)."""
    script = Path(__file__).with_name("bo_deephyper.py")
    cmd = [python, str(script), "--dim", str(dim), "--evaluations", str(evaluations)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def timing(args: argparse.Namespace) -> None:
    """Print the time per proposal table."""
    print(f"bo: seconds per proposal, one worker, {args.dim}-D (bbob f1), BLAS on one thread")
    print(f"{'known':>6} {'first':>8} {'mean':>8} {'max':>8} {'mean CPU':>9}")
    for known in args.at:
        r = time_proposals(args.dim, known, args.proposals)
        print(
            f"{known:>6} {r['first']:>8.4f} {r['mean']:>8.4f} {r['max']:>8.4f} {r['cpu']:>9.4f}",
            flush=True,
        )
    if args.deephyper_python:
        n = args.deephyper_evaluations
        ours = run_seconds(args.dim, n)
        print(f"bo, a run of {n} evaluations from scratch: {ours:.4f} s per proposal", flush=True)
        dh = deephyper(args.deephyper_python, args.dim, n)
        print(
            f"DeepHyper CBO (defaults, one worker), a run of {dh['evaluations']} evaluations of "
            f"a zero-cost sphere: {dh['per_proposal']:.3f} s per proposal; bo / CBO = "
            f"{ours / dh['per_proposal']:.3f}"
        )


# ------------------------------------------------------------------ quality
def run_gp_ei(f: int, inst: int, dim: int, budget: int, initial: int, seed: int) -> list[float]:
    """The ``f - f_opt`` of every evaluation of single-task GP-EI, in order."""
    from multitask import gp_ei_run

    p, fopt = problem(f, inst, dim)
    space = box(dim)
    deltas: list[float] = []

    def loss(params: dict[str, Any]) -> float:
        d = float(p(np.array([params[k] for k in space.names]))) - fopt
        deltas.append(d)
        return d

    with tempfile.TemporaryDirectory() as folder:
        gp_ei_run(space, loss, "t", {}, Path(folder), budget, initial, seed)
    return deltas[:budget]


def run_cbo(python: str, f: int, inst: int, dim: int, budget: int, seed: int) -> list[float]:
    """The ``f - f_opt`` of every evaluation of DeepHyper's ``CBO``, in order."""
    _, fopt = problem(f, inst, dim)
    script = Path(__file__).with_name("bo_deephyper.py")
    cmd = [python, str(script), "--dim", str(dim), "--evaluations", str(budget)]
    cmd += ["--seed", str(seed), "--bbob", str(f), "--instance", str(inst)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return [v - fopt for v in json.loads(out.strip().splitlines()[-1])["values"]]


def quality(args: argparse.Namespace) -> None:
    """Run the methods on the problems (skipping those in ``--results``) and print the table."""
    dim, top = args.dim, max(args.multipliers)
    done = load(args.results) if args.results else []
    have = {(r["method"], r["function"], r["instance"]) for r in done}
    rows = list(done)

    def emit(r: dict[str, Any]) -> None:
        rows.append(r)
        if args.results:
            with args.results.open("a") as fh:
                fh.write(json.dumps(r) + "\n")
        print(
            f"{r['method']:<11} f{r['function']:<3} i{r['instance']:<3} best {r['best']:.3g} "
            f"({r['seconds']:.0f} s)",
            file=sys.stderr,
            flush=True,
        )

    problems = [(f, i) for f in args.functions for i in args.instances]
    for method in args.methods:
        todo = [(f, i) for f, i in problems if (method, f, i) not in have]
        if not todo or args.from_results:
            continue
        if method == "bo":
            engine = argparse.Namespace(
                workers=args.workers,
                dim=dim,
                budget_multiplier=top,
                seed=args.seed,
                portfolio=EvolveSettings().portfolio,
                portfolio_islands=0,
                tmp=None,
                eval_seconds=0.0,
            )
            run_engine("bo", todo, engine, emit)
            continue
        for f, i in todo:
            t = time.time()
            if method == "gp-ei":
                budget = min(top, args.gp_multiplier) * dim
                deltas = run_gp_ei(f, i, dim, budget, args.gp_initial, args.seed)
            elif method == "cbo":
                if not args.deephyper_python:
                    raise SystemExit("--methods cbo needs --deephyper-python")
                budget = min(top, args.cbo_multiplier) * dim
                deltas = run_cbo(args.deephyper_python, f, i, dim, budget, args.seed)
            else:
                budget = top * dim
                deltas = run_reference(method, f, i, dim, budget, args.seed)
            emit(row(method, f, i, dim, budget, deltas, time.time() - t))
    table(rows, args.methods, dim, args.multipliers, problems)
    have = {(r["method"], r["function"], r["instance"]) for r in rows}
    common = [fi for fi in problems if all((m, *fi) in have for m in args.methods)]
    if common != problems:
        print("\nthe problems every method has finished:")
        table(rows, args.methods, dim, args.multipliers, common)


def scale(args: argparse.Namespace) -> None:
    """Run ``bo`` and ``tpe`` on slow evaluations with many workers; print share and
    utilisation."""
    dim = args.dim
    done = load(args.results) if args.results else []
    have = {(r["method"], r["function"], r["instance"]) for r in done}
    rows = [r for r in done if r.get("workers") == args.workers]
    problems = [(f, i) for f in args.functions for i in args.instances]
    engine = argparse.Namespace(
        workers=args.workers,
        dim=dim,
        budget_multiplier=args.multiplier,
        seed=args.seed,
        portfolio=EvolveSettings().portfolio,
        portfolio_islands=0,
        tmp=None,
        eval_seconds=args.eval_seconds,
    )

    def emit(r: dict[str, Any]) -> None:
        r["workers"] = args.workers
        rows.append(r)
        if args.results:
            with args.results.open("a") as fh:
                fh.write(json.dumps(r) + "\n")

    for method in ("bo", "tpe"):
        todo = [(f, i) for f, i in problems if (method, f, i) not in have]
        if todo:
            run_engine(method, todo, engine, emit)
    print(
        f"\nbbob {dim}-D, {args.workers} workers, evaluations of {args.eval_seconds} s, "
        f"{args.multiplier} x D evaluations, {len(problems)} problems"
    )
    print(f"{'method':<8} {'share':>7} {'utilisation':>12} {'lowest':>8}")
    for method in ("bo", "tpe"):
        rs = [
            r for r in rows if r["method"] == method and (r["function"], r["instance"]) in problems
        ]
        if not rs:
            continue
        use = [r["evaluations"] * args.eval_seconds / (args.workers * r["seconds"]) for r in rs]
        print(
            f"{method:<8} {share(rs, args.multiplier * dim):>7.3f} {float(np.mean(use)):>12.3f} "
            f"{min(use):>8.3f}"
        )


def table(
    rows: list[dict[str, Any]],
    methods: Sequence[str],
    dim: int,
    multipliers: Sequence[int],
    problems: Sequence[tuple[int, int]],
) -> None:
    """Share of (problem, target) pairs per method at each budget, on ``problems``."""
    wanted = set(problems)
    print(
        f"\nbbob {dim}-D, {len(wanted)} problems (functions "
        f"{sorted({f for f, _ in wanted})}, instances {sorted({i for _, i in wanted})}), "
        f"{len(TARGETS)} targets 1e2..1e-8: share of (problem, target) pairs reached"
    )
    head = " ".join(f"{f'{m} x D':>9}" for m in multipliers)
    print(f"{'method':<11} {'problems':>8} {head} {'seconds':>8}")
    for m in methods:
        rs = [r for r in rows if r["method"] == m and (r["function"], r["instance"]) in wanted]
        if not rs:
            continue
        cells = " ".join(
            f"{share(rs, mu * dim):>9.3f}"
            if min(r["budget"] for r in rs) >= mu * dim
            else f"{'-':>9}"
            for mu in multipliers
        )
        secs = sum(r["seconds"] for r in rs)
        print(f"{m:<11} {len(rs):>8} {cells} {secs:>8.0f}")


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the command line and run the measurement."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="what", required=True)
    t = sub.add_parser("timing", help="seconds per proposal")
    t.add_argument("--dim", type=int, default=10)
    t.add_argument("--at", type=int, nargs="+", default=[200, 1000], help="known evaluations")
    t.add_argument("--proposals", type=int, default=20, help="proposals timed after the first")
    t.add_argument(
        "--deephyper-python",
        help="a Python with deephyper installed: also time DeepHyper's CBO (bo_deephyper.py)",
    )
    t.add_argument("--deephyper-evaluations", type=int, default=60)
    q = sub.add_parser("quality", help="share of bbob targets")
    q.add_argument("--functions", type=int_ranges, default=int_ranges("1-24"))
    q.add_argument("--instances", type=int_ranges, default=int_ranges("71-72"))
    q.add_argument("--dim", type=int, default=10)
    q.add_argument("--multipliers", type=int, nargs="+", default=[20, 50])
    q.add_argument("--methods", nargs="+", default=list(DEFAULT_QUALITY), choices=QUALITY_METHODS)
    q.add_argument("--workers", type=int, default=2, help="MPI ranks of the bo runs")
    q.add_argument("--gp-initial", type=int, default=20, help="GP-EI's Latin hypercube size")
    q.add_argument("--gp-multiplier", type=int, default=20, help="GP-EI's budget / D at most")
    q.add_argument("--deephyper-python", help="a Python with deephyper and cocoex (for cbo)")
    q.add_argument("--cbo-multiplier", type=int, default=20, help="CBO's budget / D at most")
    q.add_argument("--seed", type=int, default=0)
    q.add_argument("--results", type=Path, help="append result lines here; skip those present")
    q.add_argument("--from-results", action="store_true", help="only print the tables of --results")
    s = sub.add_parser("scale", help="many workers on slow evaluations")
    s.add_argument("--functions", type=int_ranges, default=int_ranges("1,8,15,21"))
    s.add_argument("--instances", type=int_ranges, default=int_ranges("71"))
    s.add_argument("--dim", type=int, default=10)
    s.add_argument("--multiplier", type=int, default=20, help="evaluations / D")
    s.add_argument("--workers", type=int, default=8)
    s.add_argument("--eval-seconds", type=float, default=1.0)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--results", type=Path, help="append result lines here; skip those present")
    args = p.parse_args(argv)
    {"timing": timing, "quality": quality, "scale": scale}[args.what](args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
