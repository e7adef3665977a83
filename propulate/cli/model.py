"""``fit-lcm`` (an LCM from run logs) and ``mla`` (model-guided tuning of several tasks).

    python -m propulate fit-lcm --space campaign.yaml --runs results/evolve/train* \\
        --out results/model.json --latent 2 --restarts 2 --max-points 50 --seed 0
    mpiexec -n 2 python -m propulate mla --space campaign.yaml --objective M:F \\
        --tasks results/tasks/train*.json --out results/mla --budget 20 --initial 10 --seed 0

``mla`` writes one run directory per task (``DIR/<task id>/``: ``evals/``, ``task.json``,
``summary.json``) and the last fitted model ``DIR/model.json``; re-running it with the same
``--out`` resumes from the logs.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from propulate.cli.argtypes import HelpFormatter
from propulate.cli.tasks import load_campaign
from propulate.models.mla import run_mla
from propulate.models.sampling import build_lcm, training_set_from_runs
from propulate.objective import read_task
from propulate.settings import LCMSettings, MLASettings


def world() -> Any:
    """``MPI.COMM_WORLD`` when started by ``mpiexec`` with several ranks, else ``None``."""
    try:
        from mpi4py import MPI
    except ImportError:
        return None
    return MPI.COMM_WORLD if MPI.COMM_WORLD.Get_size() > 1 else None


def add_model_options(p: argparse.ArgumentParser) -> None:
    """The LCM options shared by ``fit-lcm`` and ``mla`` (defaults: ``LCMSettings``)."""
    p.add_argument(
        "--latent", type=int, default=LCMSettings.latent, help="number Q of latent functions"
    )
    p.add_argument(
        "--restarts", type=int, default=LCMSettings.restarts, help="L-BFGS starts of the fit"
    )
    p.add_argument(
        "--max-points",
        type=int,
        default=LCMSettings.max_points,
        help="cap of the training set (each task's history subsampled to its share)",
    )
    p.add_argument(
        "--log-output",
        action=argparse.BooleanOptionalAction,
        default=LCMSettings.log_output,
        help="model log(loss) (runtimes)",
    )


def cmd_fit_lcm(args: argparse.Namespace) -> int:
    """Run ``fit-lcm``."""
    space, task_space = load_campaign(args.space)
    data = training_set_from_runs(args.runs, space)
    model = build_lcm(data, space, task_space, args.latent, args.max_points, args.log_output)
    model.fit(restarts=args.restarts, seed=args.seed)
    model.save(args.out)
    print(
        json.dumps(
            {
                "out": args.out,
                "tasks": model.n_tasks,
                "points": len(model.y),
                "log_likelihood": model.log_likelihood_value,
            }
        )
    )
    return 0


def cmd_mla(args: argparse.Namespace) -> int:
    """Run ``mla``."""
    space, task_space = load_campaign(args.space)
    specs = [read_task(p) for p in args.tasks]
    tasks = [(str(s["id"]), dict(s["task"])) for s in specs]
    if len({t[0] for t in tasks}) != len(tasks):
        raise ValueError("task ids must be distinct")
    if args.initial < 1 or args.budget < args.initial:
        raise ValueError("need 1 <= --initial <= --budget")
    if args.local_every < 0 or args.local_radius <= 0:
        raise ValueError("need --local-every >= 0 and --local-radius > 0")
    summaries = run_mla(
        space,
        args.objective,
        tasks,
        args.out,
        args.budget,
        args.initial,
        args.seed,
        task_space,
        args.latent,
        args.restarts,
        args.max_points,
        args.log_output,
        world(),
        share=args.share,
        local_every=args.local_every,
        local_radius=args.local_radius,
    )
    for s in summaries:
        print(s.json_line("task", "best_loss", "evaluations", "failures"))
    return 0


def register(subparsers: Any) -> None:
    """Add ``fit-lcm`` and ``mla`` to the command line."""
    p = subparsers.add_parser(
        "fit-lcm",
        help="fit the multitask LCM on run logs",
        description=__doc__,
        formatter_class=HelpFormatter,
    )
    p.add_argument("--space", required=True, help="campaign YAML (parameters, task_space)")
    p.add_argument("--runs", nargs="+", required=True, help="run directories (one task each)")
    p.add_argument("--out", required=True, help="model file to write (JSON)")
    add_model_options(p)
    p.add_argument(
        "--seed", type=int, default=LCMSettings.seed, help="seed of the fit's random starts"
    )
    p.set_defaults(func=cmd_fit_lcm)

    p = subparsers.add_parser(
        "mla",
        help="model-guided multitask tuning (MLA)",
        description=__doc__,
        formatter_class=HelpFormatter,
    )
    p.add_argument("--space", required=True, help="campaign YAML (parameters, task_space)")
    p.add_argument("--objective", required=True, help="loss as module:function")
    p.add_argument("--tasks", nargs="+", required=True, help="task spec files")
    p.add_argument("--out", required=True, help="output directory (one run dir per task)")
    p.add_argument(
        "--budget",
        type=int,
        default=MLASettings.budget,
        help="evaluations per task, initial design included",
    )
    p.add_argument(
        "--initial",
        type=int,
        default=MLASettings.initial,
        help="initial Latin-hypercube samples per task",
    )
    add_model_options(p)
    p.add_argument(
        "--share",
        type=int,
        default=MLASettings.share,
        help="each task tries the best configurations of this many nearest tasks (0: off)",
    )
    p.add_argument(
        "--local-every",
        type=int,
        default=MLASettings.local_every,
        help="every N-th guided evaluation of a task comes from its own one-task GP, searched "
        "near the other tasks' best configurations (0: never)",
    )
    p.add_argument(
        "--local-radius",
        type=float,
        default=MLASettings.local_radius,
        help="unit-cube radius of that search around each other task's best",
    )
    p.add_argument(
        "--seed", type=int, default=MLASettings.seed, help="seed of the designs, proposals and fits"
    )
    p.set_defaults(func=cmd_mla)
