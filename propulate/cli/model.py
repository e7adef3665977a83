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

from propulate.campaign.files import read_objectives
from propulate.cli.argtypes import HelpFormatter
from propulate.cli.settings_args import add_settings, settings_from_args
from propulate.cli.tasks import load_campaign
from propulate.models.mla import run_mla
from propulate.models.sampling import build_lcm, training_set_from_runs
from propulate.settings import LCMSettings, MLASettings
from propulate.user_objective import read_task


def world() -> Any:
    """``MPI.COMM_WORLD`` when started by ``mpiexec`` with several ranks, else ``None``."""
    try:
        from mpi4py import MPI
    except ImportError:
        return None
    return MPI.COMM_WORLD if MPI.COMM_WORLD.Get_size() > 1 else None


#: The LCM settings both commands take (``--seed`` is each command's own).
MODEL_OPTIONS = ("latent", "restarts", "max_points", "log_output")


def add_model_options(p: argparse.ArgumentParser) -> None:
    """The LCM options shared by ``fit-lcm`` and ``mla`` (from ``LCMSettings``)."""
    add_settings(p, LCMSettings, MODEL_OPTIONS)


def cmd_fit_lcm(args: argparse.Namespace) -> int:
    """Run ``fit-lcm``."""
    space, task_space = load_campaign(args.space)
    lcm = settings_from_args(args, LCMSettings)
    data = training_set_from_runs(args.runs, space)
    model = build_lcm(data, space, task_space, lcm.latent, lcm.max_points, lcm.log_output)
    model.fit(restarts=lcm.restarts, seed=lcm.seed)
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
    mla = settings_from_args(args, MLASettings)
    if mla.budget < mla.initial:
        raise ValueError("need --initial <= --budget")
    lcm = settings_from_args(args, LCMSettings, MODEL_OPTIONS)
    summaries = run_mla(
        space,
        args.objective,
        tasks,
        args.out,
        mla,
        lcm,
        task_space=task_space,
        comm=world(),
        objectives=read_objectives(args.space),
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
    add_settings(p, LCMSettings, ("seed",))
    p.set_defaults(func=cmd_fit_lcm)

    p = subparsers.add_parser(
        "mla",
        help="model-guided multitask tuning (MLA)",
        description=__doc__,
        formatter_class=HelpFormatter,
    )
    p.add_argument("--space", required=True, help="campaign YAML (parameters, task_space)")
    p.add_argument(
        "--objective",
        required=True,
        help="loss as module:function, or a YAML/JSON file holding a command objective",
    )
    p.add_argument("--tasks", nargs="+", required=True, help="task spec files")
    p.add_argument("--out", required=True, help="output directory (one run dir per task)")
    add_settings(p, MLASettings, ("budget", "initial"))
    add_model_options(p)
    add_settings(p, MLASettings, exclude=("budget", "initial"))
    p.set_defaults(func=cmd_mla)
