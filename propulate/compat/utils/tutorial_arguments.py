"""The command line of Propulate 1.2's tutorials: ``parse_arguments``.

Propulate 1.2's example scripts read their settings with
``config, hp_set = parse_arguments(comm)`` from :mod:`propulate.compat.utils.benchmark_functions`; this
module gives the same options, with the same names, types and defaults, so those scripts run
unchanged. ``hp_set`` tells which of the particle-swarm coefficients (``inertia``,
``cognitive``, ``social``) were given on the command line, so a script can pick a variant's own
defaults for the others.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Sequence
from typing import Any

from propulate.problems.benchmark import FUNCTIONS

#: The benchmark names ``--function`` accepts (Propulate 1.2's, those
#: :func:`~propulate.compat.utils.benchmark_functions.get_function_search_space` knows).
FUNCTION_CHOICES: tuple[str, ...] = tuple(FUNCTIONS)

#: The particle-swarm variants ``--variant`` accepts (Propulate 1.2's).
PSO_VARIANTS: tuple[str, ...] = ("Basic", "VelocityClamping", "Constriction", "Canonical")

#: The particle-swarm coefficients whose presence on the command line ``hp_set`` reports.
PSO_COEFFICIENTS: tuple[str, ...] = ("inertia", "cognitive", "social")


class _Given(argparse.Action):
    """Store a value and note in ``given`` that the option was on the command line."""

    def __init__(self, *args: Any, given: dict[str, bool], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.given = given

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        setattr(namespace, self.dest, values)
        self.given[self.dest] = True


def build_parser(comm_size: int, given: dict[str, bool] | None = None) -> argparse.ArgumentParser:
    """The tutorials' argument parser.

    Parameters
    ----------
    comm_size : int
        Ranks of the run; the default ``--pop_size`` is twice this.
    given : dict, optional
        Filled with ``True`` for each of :data:`PSO_COEFFICIENTS` that a parse meets.

    Returns
    -------
    argparse.ArgumentParser
        The parser.
    """
    given = {} if given is None else given
    parser = argparse.ArgumentParser(
        description="A Propulate 1.2 tutorial: optimize a benchmark function."
    )
    add = parser.add_argument
    add("--function", type=str, choices=FUNCTION_CHOICES, default="sphere")
    add("--generations", type=int, default=1000, help="generations per worker")
    add("--seed", type=int, default=0, help="seed; rank r uses seed + r")
    add("--verbosity", type=int, default=1, help="debug level of propulate() and summarize()")
    add("--checkpoint", type=str, default="./", help="run directory")
    add("--pop_size", type=int, default=2 * comm_size, help="breeding pool size")
    add("--crossover_probability", type=float, default=0.7)
    add("--mutation_probability", type=float, default=0.4)
    add("--random_init_probability", type=float, default=0.1)
    add("--top_n", type=int, default=1, help="best individuals per island in the summary")
    add("--logging_interval", type=int, default=10)
    add("--logging_level", type=int, default=logging.INFO)
    # island model
    add("--num_islands", type=int, default=2)
    add("--migration_probability", type=float, default=0.9)
    add("--num_migrants", type=int, default=1, help="emigrants per island pair and event")
    add("--pollination", action="store_true", help="send copies instead of migrating")
    # particle swarms
    add("--variant", type=str, choices=PSO_VARIANTS, default="Basic")
    add("--inertia", type=float, default=0.729, action=_Given, given=given)
    add("--cognitive", type=float, default=1.49445, action=_Given, given=given)
    add("--social", type=float, default=1.49445, action=_Given, given=given)
    add("--clamping_factor", type=float, default=0.6)
    # CMA-ES
    add("--adapter", type=str, default="basic", help="basic or active")
    # multi-rank workers
    add("--ranks_per_worker", type=int, default=2)
    return parser


def parse_arguments(
    propulate_comm: Any = None, args: Sequence[str] | None = None
) -> tuple[argparse.Namespace, dict[str, bool]]:
    """Parse a Propulate 1.2 tutorial's command line.

    Parameters
    ----------
    propulate_comm : MPI.Comm, optional
        The run's ranks (default ``MPI.COMM_WORLD``); the default ``--pop_size`` is twice its
        size.
    args : sequence of str, optional
        The arguments (default ``sys.argv[1:]``).

    Returns
    -------
    argparse.Namespace
        The settings, one attribute per option (``config.pop_size``, ``config.num_islands``, ...).
    dict[str, bool]
        For ``"inertia"``, ``"cognitive"`` and ``"social"``: whether it was given.
    """
    if propulate_comm is None:
        from mpi4py import MPI

        propulate_comm = MPI.COMM_WORLD
    given = dict.fromkeys(PSO_COEFFICIENTS, False)
    parser = build_parser(propulate_comm.Get_size(), given)
    config = parser.parse_args(None if args is None else list(args))
    return config, given
