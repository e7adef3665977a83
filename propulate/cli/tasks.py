"""``sample-tasks``: training (or new) task specs by Latin hypercube over the task space.

    python -m propulate sample-tasks --space campaign.yaml --n 10 --seed 0 --prefix train \\
        --out results/tasks
    python -m propulate sample-tasks --space campaign.yaml --listed new.yaml --prefix new \\
        --out results/tasks

writes ``DIR/<prefix><NN>.json`` = ``{"id": "<prefix><NN>", "task": {...}}`` (``docs/contracts.md``).
A listed file is a YAML/JSON list of task mappings (or of ``{"id", "task"}`` specs), or a
mapping of id to task values; listed tasks are checked against the task space.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from propulate.campaign.files import read_campaign_file, write_task_file
from propulate.models.sampling import sample_tasks

#: The reader of a campaign file (kept under its former name for existing callers).
load_campaign = read_campaign_file


def read_listed(path: str | Path, prefix: str) -> list[tuple[str, dict[str, Any]]]:
    """``(id, task)`` pairs of a listed-tasks file (see the module docstring)."""
    data = yaml.safe_load(Path(path).read_text())
    if isinstance(data, Mapping) and "tasks" in data:
        data = data["tasks"]
    if isinstance(data, Mapping):
        return [(str(k), dict(v)) for k, v in data.items()]
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a list or mapping of tasks")
    out = []
    for i, item in enumerate(data):
        if not isinstance(item, Mapping):
            raise ValueError(f"{path}: task {i} is not a mapping")
        if "task" in item:
            out.append((str(item.get("id", f"{prefix}{i:02d}")), dict(item["task"])))
        else:
            out.append((f"{prefix}{i:02d}", dict(item)))
    return out


def write_tasks(tasks: list[tuple[str, dict[str, Any]]], out: str | Path) -> list[Path]:
    """Write one ``<id>.json`` task spec per task into ``out``."""
    folder = Path(out)
    return [write_task_file(folder / f"{tid}.json", tid, values) for tid, values in tasks]


def cmd_sample_tasks(args: argparse.Namespace) -> int:
    """Run ``sample-tasks``."""
    _, task_space = read_campaign_file(args.space)
    if task_space is None:
        raise ValueError(f"{args.space}: no task_space defined")
    if args.listed:
        tasks = read_listed(args.listed, args.prefix)
        for tid, values in tasks:
            if not task_space.in_bounds(values):
                raise ValueError(f"listed task {tid} {values} is outside the task space")
            values.update(task_space.canonical(values))
    else:
        if args.n is None or args.n < 1:
            raise ValueError("give --n N (>= 1) or --listed FILE")
        sampled = sample_tasks(task_space, args.n, args.seed)
        tasks = [(f"{args.prefix}{i:02d}", dict(t)) for i, t in enumerate(sampled)]
    for path in write_tasks(tasks, args.out):
        print(path)
    return 0


def register(subparsers: Any) -> None:
    """Add ``sample-tasks`` to the command line."""
    p = subparsers.add_parser(
        "sample-tasks",
        help="task specs by Latin hypercube (or listed)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--space", required=True, help="campaign YAML with a task_space")
    p.add_argument("--n", type=int, help="number of tasks to sample")
    p.add_argument("--seed", type=int, default=0, help="seed of the Latin hypercube (default: 0)")
    p.add_argument(
        "--prefix", default="train", help="task id prefix (ids are PREFIX00, ...) (default: train)"
    )
    p.add_argument("--listed", help="YAML/JSON file listing the tasks instead of sampling")
    p.add_argument("--out", required=True, help="output directory of the task specs")
    p.set_defaults(func=cmd_sample_tasks)
