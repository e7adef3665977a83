"""``transfer tla1|tla2``: carry a fitted model over to a new task.

    python -m propulate transfer tla1 --model results/model.json --space campaign.yaml \\
        --task results/tasks/new00.json --out results/tla1/new00 [--objective M:F]
    python -m propulate transfer tla2 --model results/model.json --space campaign.yaml \\
        --task results/tasks/new00.json --objective M:F --budget 5 --seed 0 \\
        --out results/tla2/new00

``tla1`` writes ``DIR/prediction.json`` = ``{"task", "params", "std", "model"}`` (``std`` per
parameter in unit-cube units; on the joint model also the predicted ``loss`` with its band
``loss_low`` .. ``loss_high``); with ``--objective`` it also evaluates the prediction once, as a
run directory (method ``tla1``), and ``measured`` is the loss. ``tla2`` writes a run directory
(method ``tla2``), resumable.

The model (``--transfer-model``, ``TransferSettings.model``): ``joint`` transfers on the joint GP
over task values and parameters (:mod:`propulate.models.joint_transfer`), fitted on the
``--model`` file's training points (with several training tasks); ``lcm`` and ``auto`` on the LCM
itself (:mod:`propulate.models.transfer`), which transferred better on held-out demo seeds
200-204 (docs/mla-paper.md); a joint model file (MLA's) is transferred as it is.
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
from propulate.models import model_file
from propulate.models.joint_gp import KIND as JOINT_KIND
from propulate.models.joint_gp import JointGP
from propulate.models.joint_transfer import as_joint, joint_tla1, run_joint_tla2
from propulate.models.lcm import LCM
from propulate.models.loop import ModelGuidedLoop, TaskRun
from propulate.models.loop_settings import LoopSettings
from propulate.models.transfer import run_tla2, tla1
from propulate.settings import TransferSettings
from propulate.user_objective import read_task


def _inputs(args: argparse.Namespace) -> tuple[Any, ...]:
    space, task_space = load_campaign(args.space)
    if task_space is None:
        raise ValueError(f"{args.space}: no task_space defined")
    spec = read_task(args.task)
    return load_model(args.model_file), space, task_space, str(spec["id"]), dict(spec["task"])


def load_model(path: str) -> LCM | JointGP:
    """The model file of ``fit-lcm`` (an LCM) or of ``mla`` (an LCM or MLA's joint model)."""
    data = model_file.read(path)
    return JointGP.from_dict(data) if data.get("model") == JOINT_KIND else LCM.from_dict(data)


def uses_joint(settings: TransferSettings, model: Any) -> bool:
    """Whether to transfer on the joint model: ``joint`` with several training tasks, or a joint
    model file (which cannot be transferred as an LCM). ``auto`` is the LCM: on held-out demo
    seeds the joint model transferred worse (docs/mla-paper.md)."""
    if isinstance(model, JointGP):
        if settings.model == "lcm":
            raise ValueError("--transfer-model lcm needs an LCM model file (fit-lcm's)")
        return True
    return settings.model == "joint" and model.n_tasks > 1


def cmd_tla1(args: argparse.Namespace) -> int:
    """Run ``transfer tla1``."""
    model, space, task_space, tid, task = _inputs(args)
    settings = settings_from_args(args, TransferSettings)
    prediction: dict[str, Any]
    if uses_joint(settings, model):
        model = as_joint(model, space, task_space, settings.seed)
        params, std, band = joint_tla1(model, space, task_space, task, settings.seed)
        prediction = {"task": tid, "params": params, "std": std, "model": "joint", **band}
    else:
        params, std = tla1(model, space, task_space, task, settings.seed, basin=settings.tla1_basin)
        prediction = {"task": tid, "params": params, "std": std, "model": "lcm"}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
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
        prediction["measured"] = loop.run()[0].best_loss
    print(json.dumps(prediction))
    return 0


def cmd_tla2(args: argparse.Namespace) -> int:
    """Run ``transfer tla2``."""
    model, space, task_space, tid, task = _inputs(args)
    settings = settings_from_args(args, TransferSettings)
    if uses_joint(settings, model):
        summaries = run_joint_tla2(
            as_joint(model, space, task_space, settings.seed),
            space,
            task_space,
            tid,
            task,
            args.objective,
            args.out,
            settings.tla2_budget,
            settings.tla2_share,
            settings.seed,
            comm=world(),
            objectives=read_objectives(args.space),
        )
        for s in summaries:
            print(s.json_line("task", "best_params", "best_loss", "evaluations"))
        return 0
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
        help="transfer a fitted model to a new task",
        description=__doc__,
        formatter_class=HelpFormatter,
    )
    sub = p.add_subparsers(dest="algorithm", metavar="ALGORITHM", required=True)
    for name, func, text in (
        ("tla1", cmd_tla1, "predict the optimum (zero evaluations)"),
        ("tla2", cmd_tla2, "frozen model + model-guided search"),
    ):
        q = sub.add_parser(name, help=text, description=__doc__, formatter_class=HelpFormatter)
        q.add_argument(
            "--model", dest="model_file", required=True, help="model file from fit-lcm or mla"
        )
        q.add_argument("--space", required=True, help="campaign YAML (parameters, task_space)")
        q.add_argument("--task", required=True, help="the new task's spec file")
        q.add_argument("--out", required=True, help="output directory")
        add_settings(q, TransferSettings, ("seed", f"{name}_basin", "model"))
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
