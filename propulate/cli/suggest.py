"""``suggest``: the configuration to run a task with, from a campaign's tuning database.

    python -m propulate suggest --campaign results/lapack_qr --task m=1234,n=567

Prints one JSON object: ``task``, ``params``, ``loss`` and ``source``. ``source`` is
``measured`` for a tuned task (its stored best, with ``loss_std`` over its repeated
measurements) and ``tla1`` for an unseen one (the campaign model's prediction, with
``loss_low``/``loss_high`` one standard deviation either side of the expected loss and
``params_std`` per parameter as a fraction of its range). A task outside the task space is
refused unless ``--extrapolate`` is given. ``--explain`` adds ``explain``: the parameters that
drive the model's prediction for the task, by their Sobol indices. Needs neither MPI nor GPy.
"""

from __future__ import annotations

import argparse
import json
from typing import Any


def cmd_suggest(args: argparse.Namespace) -> int:
    """Run ``suggest``."""
    from propulate.tuningdb.pareto import parse_values
    from propulate.tuningdb.suggest import suggest

    preference = {
        "prefer": args.prefer,
        "weights": parse_values(args.weights, "--weights"),
        "upper": parse_values(",".join(args.max or []), "--max"),
        "lower": parse_values(",".join(args.min or []), "--min"),
    }
    answer = suggest(args.campaign, args.task, args.extrapolate, args.explain, preference)
    print(json.dumps(answer))
    return 0


def register(subparsers: Any) -> None:
    """Add ``suggest`` to the command line."""
    p = subparsers.add_parser(
        "suggest",
        help="the configuration for a task (tuning database)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--campaign",
        required=True,
        help="the campaign's results directory (holding tuning.sqlite) or the file",
    )
    p.add_argument("--task", required=True, help="task values as name=value,... (m=1234,n=567)")
    p.add_argument(
        "--extrapolate",
        action="store_true",
        help="predict for a task outside the task space instead of refusing it",
    )
    p.add_argument(
        "--explain",
        action="store_true",
        help="add which parameters drive the model's prediction for the task (their Sobol "
        "indices, stored by tuningdb update; computed for a task the model was not trained on)",
    )
    pick = p.add_argument_group(
        "several objectives",
        "A task tuned for several objectives (evolve --objectives) has a Pareto set; these "
        "pick one of its points (default: the best in the first objective). The answer "
        "gains 'objectives' (the point's values) and 'pick' (the preference in words).",
    )
    pick.add_argument("--prefer", metavar="NAME", help="the point best in this objective")
    pick.add_argument(
        "--weights",
        metavar="NAME=W,...",
        help="the point of least weighted sum of the objectives, each scaled to [0, 1] over "
        "the Pareto set (signed for minimisation)",
    )
    pick.add_argument(
        "--max",
        action="append",
        metavar="NAME=VALUE",
        help="only points with this objective at most VALUE (repeatable)",
    )
    pick.add_argument(
        "--min",
        action="append",
        metavar="NAME=VALUE",
        help="only points with this objective at least VALUE (repeatable)",
    )
    p.set_defaults(func=cmd_suggest)
