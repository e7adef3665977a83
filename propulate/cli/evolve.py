"""``python -m propulate evolve``: one optimization run under ``mpiexec``/``srun``."""

from __future__ import annotations

import argparse
import json
import logging
import random
import time
from pathlib import Path
from typing import Any

from propulate.objective import bind_task, read_task
from propulate.space import SearchSpace, load_callable

METHODS = ("propulate", "random", "optuna")

DESCRIPTION = """\
Minimize an objective over a search space with the asynchronous island model (or a baseline),
on all MPI ranks of the job:

  mpiexec -n 4 python -m propulate evolve --objective propulate.objectives.benchmark:sphere \\
      --space space.yaml --out results/run --max-evaluations 2000

Writes one evaluation log per rank under OUT/evals/ (read them with
propulate.history.read_history), OUT/summary.json (best parameters and loss, evaluations,
failures, wall time) and OUT/task.json for a task. Re-running with the same --out resumes: no
completed evaluation is lost or repeated, whatever the number of ranks. SIGTERM or SIGUSR1
(Slurm's warning before its time limit) stops the run cleanly.
"""


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``evolve`` subcommand."""
    p = sub.add_parser("evolve", help="run the asynchronous evolutionary optimizer (MPI)",
                       description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    req = p.add_argument_group("what to tune")
    req.add_argument("--objective", required=True, metavar="MODULE:FUNCTION",
                     help="loss to minimize: loss(params) or loss(params, task)")
    req.add_argument("--space", required=True, type=Path, metavar="SPACE.yaml",
                     help="parameter space (YAML: 'parameters' and optional 'constraint')")
    req.add_argument("--out", required=True, type=Path, metavar="DIR", help="run directory")
    req.add_argument("--task", type=Path, metavar="TASK.json",
                     help="task spec {'id': ..., 'task': {...}} handed to the objective")
    stop = p.add_argument_group("stopping (at least one)")
    stop.add_argument("--max-evaluations", type=int, metavar="N",
                      help="evaluation budget over all ranks (resumed ones count)")
    stop.add_argument("--generations", type=int, metavar="N", help="generations per worker")
    stop.add_argument("--time-limit", type=float, metavar="SECONDS",
                      help="wall-clock limit: no evaluation starts after it")
    alg = p.add_argument_group("algorithm")
    alg.add_argument("--method", choices=METHODS, default="propulate",
                     help="optimizer: the island model, uniform random search, or Optuna TPE")
    alg.add_argument("--seed", type=int, default=0, help="random seed (per-rank streams derive from it)")
    alg.add_argument("--run-id", help="run id in the records (default: seed<SEED>)")
    alg.add_argument("--islands", type=int, default=1, help="number of islands")
    alg.add_argument("--pop-size", type=int, default=8, help="breeding-pool size per island")
    alg.add_argument("--migration-probability", type=float, default=0.7,
                     help="probability per generation of sending emigrants (islands > 1)")
    alg.add_argument("--migration", action="store_true",
                     help="real migration (emigrants leave home) instead of pollination (copies)")
    alg.add_argument("--crossover-prob", type=float, default=0.7)
    alg.add_argument("--mutation-prob", type=float, default=0.4)
    alg.add_argument("--random-init-prob", type=float, default=0.1,
                     help="probability that a bred child is replaced by a random one")
    alg.add_argument("--sigma-factor", type=float, default=0.05,
                     help="interval-mutation std as a fraction of each range")
    alg.add_argument("--ranks-per-worker", type=int, default=1,
                     help="MPI ranks per evaluation; the loss gets (params, comm)")
    p.add_argument("--progress-interval", type=float, default=10.0, metavar="SECONDS",
                   help="seconds between progress lines on rank 0")
    p.set_defaults(func=run)


def _load(args: argparse.Namespace) -> tuple[Any, SearchSpace, dict[str, Any] | None]:
    space = SearchSpace.from_yaml(args.space)
    task_spec = read_task(args.task) if args.task else None
    fn = load_callable(args.objective)
    loss = bind_task(fn, task_spec["task"] if task_spec else None)
    if args.max_evaluations is None and args.generations is None and args.time_limit is None:
        raise ValueError("give a stopping criterion: --max-evaluations, --generations or --time-limit")
    return loss, space, task_spec


def run(args: argparse.Namespace) -> int:
    """Run ``evolve`` on every rank; rank 0 writes the summary."""
    loss, space, task_spec = _load(args)  # fail before MPI starts work
    from mpi4py import MPI

    from propulate.logging_config import set_logger_config

    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    set_logger_config(level=logging.INFO if rank == 0 else logging.WARNING)
    out: Path = args.out
    task = task_spec["task"] if task_spec else None
    meta = {"task": task_spec["id"] if task_spec else None,
            "run": args.run_id or f"seed{args.seed}", "method": args.method}
    if rank == 0:
        out.mkdir(parents=True, exist_ok=True)
        if task_spec:
            (out / "task.json").write_text(json.dumps(task_spec, indent=2) + "\n")
    comm.Barrier()  # set-up only: the directory exists before any rank writes into it
    t0 = time.monotonic()
    if args.method == "optuna":
        from propulate.baselines.optuna_worker import run_optuna

        result = run_optuna(loss, space, task, out, meta, args, comm)
    else:
        result = _run_engine(loss, space, task, out, meta, args, comm)
    if rank == 0:
        result["wall_time"] = result.get("wall_time", time.monotonic() - t0)
        _write_summary(out, meta, result, comm.Get_size())
    return 0


def _run_engine(loss: Any, space: SearchSpace, task: dict[str, Any] | None, out: Path,
                meta: dict[str, Any], args: argparse.Namespace, comm: Any) -> dict[str, Any]:
    from propulate.islands import Islands
    from propulate.propagators import InitUniform, get_default_propagator

    rng = random.Random(args.seed * 1_000_003 + comm.Get_rank())
    if args.method == "random":
        propagator = InitUniform(space, rng=rng)
    else:
        propagator = get_default_propagator(args.pop_size, space, args.crossover_prob,
                                            args.mutation_prob, args.random_init_prob,
                                            args.sigma_factor, rng=rng)
    islands = Islands(loss, propagator, rng, generations=args.generations or -1,
                      num_islands=args.islands, migration_probability=args.migration_probability,
                      pollination=not args.migration, checkpoint_path=out,
                      ranks_per_worker=args.ranks_per_worker,
                      max_evaluations=args.max_evaluations, time_limit=args.time_limit,
                      space=space, task=task, meta=meta, progress_interval=args.progress_interval,
                      comm=comm)
    islands.propulate()
    best = [b[0] for b in islands.summarize(top_n=1) if b]
    w = islands.worker
    evals = comm.allreduce(w.evaluations if w.is_leader else 0)
    # Failures over the whole run, resumed ones included, from the island populations' counts.
    failures = comm.allreduce(
        w.population.failures if w.is_leader and w.island_index == 0 else 0)
    top = min(best, key=lambda i: i.loss) if best else None
    return {"best_params": dict(top) if top else None, "best_loss": top.loss if top else None,
            "session_evaluations": evals, "failures": failures,
            "wall_time": w.wall_time, "stop_reason": w.stop_reason}


def _write_summary(out: Path, meta: dict[str, Any], result: dict[str, Any], ranks: int) -> None:
    from propulate.history import iter_records

    previous = {}
    if (out / "summary.json").exists():
        try:
            previous = json.loads((out / "summary.json").read_text())
        except json.JSONDecodeError:
            previous = {}
    records = sum(1 for _ in iter_records(out))
    wall = float(result["wall_time"]) + float(previous.get("wall_time", 0.0) or 0.0)
    summary = {
        **meta,
        "best_params": result["best_params"],
        "best_loss": result["best_loss"],
        "evaluations": records,
        "failures": result["failures"],
        "wall_time": wall,
        "evaluations_per_second": result["session_evaluations"] / max(result["wall_time"], 1e-9),
        "ranks": ranks,
        "stop_reason": result.get("stop_reason"),
    }
    tmp = out / "summary.json.tmp"
    tmp.write_text(json.dumps(summary, indent=2) + "\n")
    tmp.replace(out / "summary.json")
    logging.getLogger("propulate").info("summary written to %s", out / "summary.json")
