"""``suggest``: the configuration to run a task with, from a campaign's tuning database.

    python -m propulate suggest --campaign results/lapack_qr --task m=1234,n=567

Prints one JSON object: ``task``, ``params``, ``loss`` and ``source``. ``source`` is
``measured`` for a tuned task (its stored best, with ``loss_std`` over its repeated
measurements and ``why`` it was chosen: least tuning loss, or the paired re-measurement's
verdict, detailed under ``paired``), ``runs`` for a campaign without tasks (no database: the
best configuration of its runs, and the paired verdict when there is one), and ``tla1`` for an
unseen one (the campaign model's prediction, with the band
``loss_low``/``loss_high`` around the expected loss, calibrated on the training tasks to hold
90 % of unseen tasks' losses, and ``params_std`` per parameter as a fraction of its range). A task outside the task space is
refused unless ``--extrapolate`` is given. ``--explain`` adds ``explain``: the parameters that
drive the model's prediction for the task, by their Sobol indices. Needs neither MPI nor GPy.
"""

from __future__ import annotations

import argparse
import json
from typing import Any


def cmd_suggest(args: argparse.Namespace) -> int:
    """Run ``suggest``."""
    from propulate.tuningdb.pareto_set import parse_values
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
    p.add_argument(
        "--task",
        help="task values as name=value,... (m=1234,n=567); may be left out when the database "
        "holds one task, or for a campaign without tasks (answered from its runs)",
    )
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
        "pick one of its points. Default: the stored configuration, least in the campaign's "
        "loss (the weighted sum under the campaign's weights, else its first objective). The "
        "answer has 'pareto_size', 'objectives' (the point's values, each in its own sign) "
        "and 'pick' (how the point was chosen, in words); 'loss' is always the campaign's "
        "loss of the point.",
    )
    pick.add_argument("--prefer", metavar="NAME", help="the point best in this objective")
    pick.add_argument(
        "--weights",
        metavar="NAME=W,...",
        help="the point of least weighted sum of the objectives in their natural units, "
        "each signed for minimisation (the meaning of a campaign's evolve.weights)",
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
