"""``transfer tla1|tla2``: carry a fitted LCM over to a new task.

    python -m propulate transfer tla1 --model results/model.json --space campaign.yaml \\
        --task results/tasks/new00.json --out results/tla1/new00 [--objective M:F]
    python -m propulate transfer tla2 --model results/model.json --space campaign.yaml \\
        --task results/tasks/new00.json --objective M:F --budget 5 --seed 0 \\
        --out results/tla2/new00

``tla1`` writes ``DIR/prediction.json`` = ``{"task", "params", "std"}`` (``std`` per parameter in
unit-cube units); with ``--objective`` it also evaluates the prediction once, as a run
directory (method ``tla1``). ``tla2`` writes a run directory (method ``tla2``), resumable.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from propulate.campaign.files import read_objectives
from propulate.cli.argtypes import HelpFormatter
from propulate.cli.model import world
from propulate.cli.settings_args import add_settings, settings_from_args
from propulate.cli.tasks import load_campaign
from propulate.models.lcm import LCM
from propulate.models.loop import ModelGuidedLoop, TaskRun
from propulate.models.loop_settings import LoopSettings
from propulate.models.transfer import run_tla2, tla1
from propulate.objective import read_task
from propulate.settings import TransferSettings


def _inputs(args: argparse.Namespace) -> tuple[Any, ...]:
    space, task_space = load_campaign(args.space)
    if task_space is None:
        raise ValueError(f"{args.space}: no task_space defined")
    spec = read_task(args.task)
    return LCM.load(args.model), space, task_space, str(spec["id"]), dict(spec["task"])


def cmd_tla1(args: argparse.Namespace) -> int:
    """Run ``transfer tla1``."""
    model, space, task_space, tid, task = _inputs(args)
    settings = settings_from_args(args, TransferSettings)
    params, std = tla1(model, space, task_space, task, settings.seed, basin=settings.tla1_basin)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    prediction = {"task": tid, "params": params, "std": std}
    (out / "prediction.json").write_text(json.dumps(prediction, indent=1) + "\n")
    if args.objective:
        loop = ModelGuidedLoop(
            space,
            args.objective,
            [TaskRun(tid, task, out)],
            LoopSettings(budget=1, initial=1, seed=settings.seed, method="tla1"),
            initial_design=lambda i: [params],
            fit_model=lambda d, p: model,
            objectives=read_objectives(args.space),
        )
        prediction["loss"] = loop.run()[0].best_loss
    print(json.dumps(prediction))
    return 0


def cmd_tla2(args: argparse.Namespace) -> int:
    """Run ``transfer tla2``."""
    model, space, task_space, tid, task = _inputs(args)
    settings = settings_from_args(args, TransferSettings)
    summaries = run_tla2(
        model,
        space,
        task_space,
        tid,
        task,
        args.objective,
        args.out,
        settings,
        comm=world(),
        objectives=read_objectives(args.space),
    )
    for s in summaries:
        print(s.json_line("task", "best_params", "best_loss", "evaluations"))
    return 0


def register(subparsers: Any) -> None:
    """Add ``transfer tla1`` and ``transfer tla2`` to the command line."""
    p = subparsers.add_parser(
        "transfer",
        help="transfer a fitted LCM to a new task",
        description=__doc__,
        formatter_class=HelpFormatter,
    )
    sub = p.add_subparsers(dest="algorithm", metavar="ALGORITHM", required=True)
    for name, func, text in (
        ("tla1", cmd_tla1, "predict the optimum (zero evaluations)"),
        ("tla2", cmd_tla2, "frozen LCM + model-guided search"),
    ):
        q = sub.add_parser(name, help=text, description=__doc__, formatter_class=HelpFormatter)
        q.add_argument("--model", required=True, help="model file from fit-lcm or mla")
        q.add_argument("--space", required=True, help="campaign YAML (parameters, task_space)")
        q.add_argument("--task", required=True, help="the new task's spec file")
        q.add_argument("--out", required=True, help="output directory")
        add_settings(q, TransferSettings, ("seed", f"{name}_basin"))
        if name == "tla1":
            q.add_argument(
                "--objective",
                help="also evaluate the prediction once (module:function, or a YAML/JSON file "
                "holding a command objective); default: no evaluation",
            )
        else:
            q.add_argument(
                "--objective",
                required=True,
                help="loss as module:function, or a YAML/JSON file holding a command objective",
            )
            add_settings(q, TransferSettings, ("tla2_budget", "tla2_share"))
        q.set_defaults(func=func)
