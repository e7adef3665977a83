"""``tuningdb update|revalidate|show``: maintain a campaign's tuning database.

Usage::

    python -m propulate tuningdb update --db results/lapack_qr --campaign results/campaign.yaml \\
        --runs results/runs/*/* results/transfer/*/* [--model results/model/lcm.json] \\
        [--config config/config.yaml | --config-hash HASH] [--seed 0]
    python -m propulate tuningdb revalidate --db results/lapack_qr [--repeats 3] \\
        [--threshold 0.2] [--retune-dir results/lapack_qr/retune] [--budget 5] [--seed 0]
    python -m propulate tuningdb show --db results/lapack_qr [--all]

``update`` offers each task's best run to the database (a task gains a version only when the
result is better than its current row or that row was measured on another machine) and stores
the campaign's spaces and model, so ``suggest`` can answer from the database alone.
``revalidate`` re-measures the rows measured on another machine (other CPU, cores, BLAS, MPI
or host pattern), records their drift, and re-tunes with TLA2 those whose loss moved by more
than the threshold (relative, 0.2 = 20 %). ``show`` prints the current rows (``--all``: every
version) as JSON lines.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import yaml

from propulate.cli.settings_args import add_settings, settings_from_args
from propulate.settings import RevalidateSettings, TransferSettings


def cmd_update(args: argparse.Namespace) -> int:
    """Run ``tuningdb update``."""
    from propulate.tuningdb.ingest import update

    campaign = yaml.safe_load(Path(args.campaign).read_text())
    if not isinstance(campaign, dict) or "parameters" not in campaign:
        raise ValueError(f"{args.campaign}: not a campaign file (no 'parameters')")
    missing = [r for r in args.runs if not Path(r).is_dir()]
    if missing:
        raise FileNotFoundError(f"run directory {missing[0]} does not exist")
    result = update(
        args.db,
        campaign,
        args.runs,
        config=args.config or campaign,
        model=args.model,
        seed=args.seed,
        chash=args.config_hash,
        paired=args.paired or (),
        transfer_model=args.transfer_model,
    )
    print(json.dumps(result))
    return 0


def cmd_revalidate(args: argparse.Namespace) -> int:
    """Run ``tuningdb revalidate``."""
    from propulate.tuningdb.revalidate import revalidate

    check = settings_from_args(args, RevalidateSettings)
    retune = settings_from_args(args, TransferSettings, ("tla2_budget", "seed"))
    result = revalidate(
        args.db,
        args.objective,
        check.repeats,
        check.threshold,
        retune_dir=args.retune_dir,
        budget=retune.tla2_budget,
        seed=retune.seed,
    )
    print(json.dumps(result))
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    """Run ``tuningdb show``."""
    from propulate.tuningdb.store import TuningDB

    with TuningDB(args.db, readonly=True) as db, db.snapshot():
        rows = db.versions() if args.all else db.current()
    for row in rows:
        print(json.dumps(row.to_dict()))
    return 0


def register(subparsers: Any) -> None:
    """Add ``tuningdb update|revalidate|show`` to the command line."""
    from propulate.cli.argtypes import HelpFormatter as fmt  # appends every default to its help

    p = subparsers.add_parser(
        "tuningdb",
        help="maintain a campaign's tuning database",
        description=__doc__,
        formatter_class=fmt,
    )
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    db_help = "the campaign's results directory (holding tuning.sqlite) or the database file"

    q = sub.add_parser(
        "update", help="ingest run directories", description=__doc__, formatter_class=fmt
    )
    q.add_argument("--db", required=True, help=db_help)
    q.add_argument("--campaign", required=True, help="campaign file (parameters, task_space)")
    q.add_argument("--runs", nargs="+", required=True, help="run directories")
    q.add_argument("--model", help="the campaign's LCM file (for suggest on unseen tasks)")
    q.add_argument(
        "--paired",
        nargs="*",
        metavar="FILE",
        help="paired re-measurement files (propulate paired): a task's row is the "
        "configuration their rounds found fastest, with that evidence, when it is not the "
        "best by tuning loss",
    )
    q.add_argument(
        "--transfer-model",
        choices=("auto", "joint", "lcm"),
        default="auto",
        help="the campaign's transfer.model: suggest predicts unseen tasks on the joint model "
        "with joint, else on the LCM (default: auto)",
    )
    q.add_argument("--config", help="config file whose hash is recorded (default: --campaign)")
    q.add_argument("--config-hash", help="the config hash to record (instead of --config's)")
    q.add_argument(
        "--seed",
        type=int,
        default=TransferSettings.seed,
        help="seed of TLA1 (the campaign's transfer seed)",
    )
    q.set_defaults(func=cmd_update)

    q = sub.add_parser(
        "revalidate",
        help="re-measure rows from another machine",
        description=__doc__,
        formatter_class=fmt,
    )
    q.add_argument("--db", required=True, help=db_help)
    q.add_argument("--objective", help="loss as module:function (default: the campaign's)")
    add_settings(q, RevalidateSettings)
    q.add_argument("--retune-dir", help="re-tune drifted tasks with TLA2 into this directory")
    add_settings(q, TransferSettings, ("tla2_budget", "seed"))
    q.set_defaults(func=cmd_revalidate)

    q = sub.add_parser(
        "show",
        help="print the current rows as JSON lines",
        description=__doc__,
        formatter_class=fmt,
    )
    q.add_argument("--db", required=True, help=db_help)
    q.add_argument("--all", action="store_true", help="every version, oldest first")
    q.set_defaults(func=cmd_show)
