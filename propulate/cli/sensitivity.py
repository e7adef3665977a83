"""``sensitivity``: which parameters matter, per task.

    python -m propulate sensitivity --model results/lapack_qr/model/lcm.json [--task m=1400,n=400]
    python -m propulate sensitivity --runs results/lapack_qr/runs/t0 [--log-loss]

With ``--model``: Sobol indices (first order S1 with its confidence interval, total ST, second
order S2 with ``--second-order``) of the fitted LCM's posterior mean, per task: every training
task, or the tasks given with ``--task`` (a task the model was not trained on gets the model's
prediction for it). Sampled with SALib; the model is not refitted.

With ``--runs``: importance from the run directories' records without a model (any method),
per task, by Optuna's fANOVA (or ``--evaluator ped-anova|mdi``).

Prints a table, or one JSON object with ``--json``. Needs the ``sensitivity`` extra (SALib,
scikit-learn, Optuna).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from propulate.cli.argtypes import HelpFormatter
from propulate.cli.settings_args import add_settings, settings_from_args
from propulate.settings import SensitivitySettings


def _model(args: argparse.Namespace, settings: SensitivitySettings) -> dict[str, Any]:
    from propulate.models.lcm import LCM
    from propulate.sensitivity.model import model_sensitivity, model_spaces
    from propulate.sensitivity.tables import sobol_table
    from propulate.tuningdb.suggest import check_task, parse_task

    path = Path(args.model)
    if not path.is_file():
        raise FileNotFoundError(f"model file not found: {path}")
    model = LCM.load(path)
    tasks = None
    if args.task:
        task_space = model_spaces(model)[1]
        if task_space is None:
            raise ValueError(f"{path}: the model has no task space, so --task has no meaning")
        tasks = [check_task(parse_task(t), task_space, args.extrapolate) for t in args.task]
    results = model_sensitivity(model, tasks, settings)
    return {
        "model": str(path),
        "tasks": [r.to_dict() for r in results],
        "text": sobol_table(results),
    }


def _runs(args: argparse.Namespace, settings: SensitivitySettings) -> dict[str, Any]:
    from propulate.sensitivity.records import records_importance
    from propulate.sensitivity.tables import importance_table
    from propulate.space import SearchSpace

    space = SearchSpace.from_yaml(args.space) if args.space else None
    results = records_importance(args.runs, space, settings, args.log_loss)
    return {
        "runs": list(args.runs),
        "tasks": [r.to_dict() for r in results],
        "text": importance_table(results),
    }


def cmd_sensitivity(args: argparse.Namespace) -> int:
    """Run ``sensitivity``."""
    from propulate.sensitivity.sobol import check_samples

    settings = settings_from_args(args, SensitivitySettings)
    check_samples(settings.samples)
    if args.model is None and (args.task or args.extrapolate):
        raise ValueError("--task and --extrapolate need --model")
    if args.runs is None and (args.space or args.log_loss):
        raise ValueError("--space and --log-loss need --runs")
    out = _model(args, settings) if args.model is not None else _runs(args, settings)
    text = out.pop("text")
    print(json.dumps(out) if args.json else text)
    return 0


def register(subparsers: Any) -> None:
    """Add ``sensitivity`` to the command line."""
    p = subparsers.add_parser(
        "sensitivity",
        help="which parameters matter: Sobol indices of the LCM, importance from records",
        description=__doc__,
        formatter_class=HelpFormatter,
    )
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--model", metavar="LCM.json", help="a fitted model (fit-lcm, mla)")
    source.add_argument(
        "--runs", nargs="+", metavar="DIR", help="run directories, or folders of them"
    )
    p.add_argument(
        "--task",
        action="append",
        metavar="NAME=VALUE,...",
        help="with --model: a task's values (repeatable; default: every training task)",
    )
    p.add_argument(
        "--extrapolate",
        action="store_true",
        help="with --model: accept a task outside the task space",
    )
    p.add_argument(
        "--space",
        metavar="FILE.yaml",
        help="with --runs: the parameter space (default: each run's run.json)",
    )
    p.add_argument(
        "--log-loss", action="store_true", help="with --runs: analyse log(loss) (runtimes)"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead")
    add_settings(p.add_argument_group("estimates"), SensitivitySettings)
    p.set_defaults(func=cmd_sensitivity)
