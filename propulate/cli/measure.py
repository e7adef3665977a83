"""``measure``: evaluate given configurations on one task, as a run directory.

    python -m propulate measure --space campaign.yaml --task tasks/t.json --out DIR \\
        (--params JSON [JSON ...] | --grid NAME=V1,V2 [NAME=...] [--fixed JSON] | --random N)

The baselines a tuned result is compared with: ``--params`` evaluates named configurations
(e.g. the campaign's untuned default; method ``default``), ``--grid`` the Cartesian product of
the listed values with the other parameters from ``--fixed`` (a runtime landscape; method
``grid``), ``--random`` N distinct feasible configurations drawn uniformly (random search at a
given budget; method ``random``). A configuration outside the space or violating its constraint
is never evaluated: it is listed on stdout as skipped, with the reason when the constraint gives
one. The objective is the campaign file's ``objective`` (``module:function`` or a command
mapping) unless ``--objective`` names one. Re-running completes what a killed run left undone.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from propulate.campaign.files import read_objectives
from propulate.cli.argtypes import whole
from propulate.cli.tasks import load_campaign
from propulate.models.loop import ModelGuidedLoop, TaskRun, resolve_objective
from propulate.models.loop_settings import LoopSettings
from propulate.remeasure import paired
from propulate.space import SearchSpace, load_callable
from propulate.user_objective import bind_task, objective_from_config, read_task

#: The first lines of ``paired --help``; its module's docstring follows.
PAIRED_USAGE = (
    "python -m propulate paired --space campaign.yaml --task tasks/t.json --default JSON "
    "--runs DIR [DIR ...] --out FILE.json [--rounds N]\n\n"
)

#: Method names written into the records of each mode.
METHODS = {"params": "default", "grid": "grid", "random": "random"}


def _value(text: str) -> Any:
    """A grid value: an int, else a float, else the text itself (a categorical choice)."""
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def parse_grid(items: list[str]) -> dict[str, list[Any]]:
    """``["mb=8,16", "nb=8,16"]`` -> ``{"mb": [8, 16], "nb": [8, 16]}``.

    Raises
    ------
    ValueError
        On an item without ``=`` or without values.
    """
    grid: dict[str, list[Any]] = {}
    for item in items:
        name, sep, values = item.partition("=")
        if not sep or not name or not values.strip(","):
            raise ValueError(f"--grid expects NAME=V1,V2,..., got {item!r}")
        grid[name] = [_value(v) for v in values.split(",") if v]
    return grid


def grid_configurations(grid: Mapping[str, list[Any]], fixed: Mapping[str, Any]) -> list[dict]:
    """Every combination of the grid's values (first name slowest), with ``fixed`` added."""
    names = list(grid)
    return [
        {**fixed, **dict(zip(names, combo, strict=True))}
        for combo in itertools.product(*(grid[n] for n in names))
    ]


def random_configurations(
    space: SearchSpace, task: Mapping[str, Any], n: int, seed: int
) -> list[dict]:
    """``n`` distinct feasible configurations drawn uniformly (fewer if the space is smaller),
    by the method ``random``'s propagator (:class:`~propulate.propagators.random_search.RandomSearch`)."""
    from propulate.propagators.random_search import RandomSearch

    return RandomSearch(space, random.Random(seed)).draw(n, task)


def _why(space: SearchSpace, params: Mapping[str, Any], task: Mapping[str, Any]) -> str:
    if not space.in_bounds(params):
        return "outside the parameter space"
    # a constraint's module may explain a rejection with infeasibility(params, task) -> str
    module = sys.modules.get(getattr(space.constraint, "__module__", ""), None)
    reason = getattr(module, "infeasibility", None)
    return f"infeasible: {reason(params, task)}" if callable(reason) else "infeasible"


def _objective(args: argparse.Namespace, space: SearchSpace, task: dict[str, Any]) -> Any:
    """The objective of ``--objective``, else the campaign file's."""
    value: Any = args.objective
    if value is None:
        spec = yaml.safe_load(Path(args.space).read_text())
        value = spec.get("objective") if isinstance(spec, Mapping) else None
        if value is None:
            raise ValueError(f"{args.space}: no objective (give --objective)")
    if isinstance(value, str) and ":" in value and not Path(value).exists():
        load_callable(value)  # fail now on a reference that does not import
        return value
    return objective_from_config(value, task, space_names=space.names)


def cmd_measure(args: argparse.Namespace) -> int:
    """Run ``measure``."""
    space, _ = load_campaign(args.space)
    spec = read_task(args.task)
    tid, task = str(spec["id"]), dict(spec["task"])
    if args.params is not None:
        mode, configs = "params", [json.loads(p) for p in args.params]
    elif args.grid is not None:
        mode = "grid"
        configs = grid_configurations(parse_grid(args.grid), json.loads(args.fixed or "{}"))
    else:
        mode = "random"
        if args.random < 1:
            raise ValueError("--random must be >= 1")
        configs = random_configurations(space, task, args.random, args.seed)
    valid = []
    for params in configs:
        if not isinstance(params, dict) or set(params) != set(space.names):
            raise ValueError(f"configuration {params!r} must set exactly {', '.join(space.names)}")
        if space.is_valid(params, task):
            valid.append(params)
        else:
            print(json.dumps({"skipped": params, "reason": _why(space, params, task)}))
    method = args.method or METHODS[mode]
    summaries = []
    if valid:
        loop = ModelGuidedLoop(
            space,
            _objective(args, space, task),
            [TaskRun(tid, task, Path(args.out))],
            LoopSettings(budget=len(valid), initial=len(valid), seed=args.seed, method=method),
            initial_design=lambda i: valid,
            fit_model=lambda data, previous: None,
            objectives=read_objectives(args.space),
        )
        summaries = loop.run()
    else:
        Path(args.out).mkdir(parents=True, exist_ok=True)
    for s in summaries:
        print(s.json_line("task", "method", "best_params", "best_loss", "evaluations"))
    return 0


def cmd_paired(args: argparse.Namespace) -> int:
    """Run ``paired``: re-measure the default and the runs' best configurations in rounds."""
    space, _ = load_campaign(args.space)
    spec = read_task(args.task)
    tid, task = str(spec["id"]), dict(spec["task"])
    default = json.loads(args.default)
    if not isinstance(default, dict) or not space.is_valid(default, task):
        raise ValueError(f"--default {args.default}: not a valid configuration on task {tid}")
    tuned = paired.contenders(args.runs)
    loss = bind_task(resolve_objective(_objective(args, space, task)), task)

    def progress(m: Any, label: str) -> None:
        print(json.dumps({"round": m.round, "config": label, "loss": m.loss}), flush=True)

    objectives = read_objectives(args.space)
    compared = paired.paired_comparison(loss, default, tuned, args.rounds, progress, objectives)
    result = {"task": tid, **compared}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    for row in result["speedups"]:
        print(
            f"{tid} {row['label']}: speedup {row['speedup']:.3f} "
            f"[{row['low']:.3f}, {row['high']:.3f}] over {row['pairs']} pairs"
        )
    return 0


def register(subparsers: Any) -> None:
    """Add ``measure`` and ``paired`` to the command line."""
    p = subparsers.add_parser(
        "measure",
        help="evaluate given configurations (baselines)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--space", required=True, help="campaign YAML (parameters, constraint)")
    p.add_argument("--task", required=True, help="the task's spec file")
    p.add_argument("--out", required=True, help="output run directory")
    p.add_argument(
        "--objective",
        help="module:function or a command objective file (default: the campaign file's objective)",
    )
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--params", nargs="+", metavar="JSON", help="configurations to evaluate")
    mode.add_argument("--grid", nargs="+", metavar="NAME=V1,V2", help="values per parameter")
    mode.add_argument("--random", type=int, metavar="N", help="N random feasible configurations")
    p.add_argument("--fixed", metavar="JSON", help="the other parameters' values (--grid)")
    p.add_argument(
        "--seed", type=int, default=0, help="seed of --random (and the run id) (default: 0)"
    )
    p.add_argument("--method", help="records' method (default: default, grid or random)")
    p.set_defaults(func=cmd_measure)

    q = subparsers.add_parser(
        "paired",
        help="speedup over a default, re-measured in interleaved rounds",
        description=PAIRED_USAGE + (paired.__doc__ or ""),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    q.add_argument("--space", required=True, help="campaign YAML (parameters, constraint)")
    q.add_argument("--task", required=True, help="the task's spec file")
    q.add_argument("--default", required=True, metavar="JSON", help="the default configuration")
    q.add_argument(
        "--runs", nargs="+", required=True, metavar="DIR", help="tuning runs of this task"
    )
    q.add_argument(
        "--rounds",
        type=whole(1),
        default=paired.PAIRED_ROUNDS,
        help=f"measurements of each configuration (default: {paired.PAIRED_ROUNDS})",
    )
    q.add_argument("--out", required=True, metavar="FILE.json", help="the comparison to write")
    q.add_argument(
        "--objective",
        help="module:function or a command objective file (default: the campaign file's objective)",
    )
    q.set_defaults(func=cmd_paired)
