"""The ``evolve`` command line: its options, their defaults and checks, and the settings they
give (:class:`propulate.settings.EvolveSettings`)."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import Any

from propulate.cli import UsageError
from propulate.cli.argtypes import real
from propulate.cli.settings_args import add_settings, settings_from_args
from propulate.methods import METHODS, SEARCH_METHODS
from propulate.runs.lease import EXPIRY, HEARTBEAT
from propulate.settings import EvolveSettings, describe

DESCRIPTION = """\
Minimize an objective over a search space with the asynchronous island model (or a baseline),
on all MPI ranks of the job:

  mpiexec -n 4 python -m propulate evolve --objective propulate.problems.benchmark:sphere \\
      --space space.yaml --out results/run --max-evaluations 2000

Writes one evaluation log per rank under OUT/evals/ (read them with
propulate.compat.history.read_history), OUT/summary.json (best parameters and loss, evaluations,
failures, wall time), OUT/run.json (the objective, space, task and method the run was started
with) and OUT/task.json for a task. Re-running with the same --out resumes: no completed
evaluation is lost or repeated, whatever the number of ranks; a resume with another objective,
space, task, method or seed is refused before any evaluation. SIGTERM, SIGUSR1 (Slurm's warning
before its time limit) and Ctrl-C stop the run cleanly and write the summary.

A failed evaluation (an exception, a non-finite loss, a timeout) is recorded and the run goes
on, unless a worker's last --failure-limit evaluations all failed: then the run stops, writes
the summary, prints the first error with its traceback and exits with status 1. Errors in
the input (options, files, objective) print one line and exit with status 2.

Watch runs with: python -m propulate status results/
"""


def add_evolve_parser(sub: argparse._SubParsersAction, func: Any) -> argparse.ArgumentParser:
    """Add the ``evolve`` subcommand, run by ``func``; returns its parser."""
    p = sub.add_parser(
        "evolve",
        help="run the asynchronous evolutionary optimizer (MPI)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    req = p.add_argument_group("what to tune")
    req.add_argument(
        "--objective",
        metavar="MODULE:FUNCTION",
        help="loss to minimize: loss(params) or loss(params, task); a module in "
        "the current directory is found; or a YAML/JSON file describing a command "
        "objective (see --objective-command)",
    )
    req.add_argument(
        "--space",
        required=True,
        type=Path,
        metavar="SPACE.yaml",
        help="parameter space (YAML: 'parameters' and optional 'constraint')",
    )
    req.add_argument("--out", required=True, type=Path, metavar="DIR", help="run directory")
    req.add_argument(
        "--task",
        type=Path,
        metavar="TASK.json",
        help="task spec {'id': ..., 'task': {...}} handed to the objective",
    )
    req.add_argument(
        "--task-id",
        metavar="ID",
        help="task id in the records and summary of a run without --task (an "
        "objective without task values, e.g. one function of a benchmark suite)",
    )
    stop = p.add_argument_group("stopping (at least one)")
    add_settings(stop, EvolveSettings, ("max_evaluations", "generations", "time_limit"))
    fail = p.add_argument_group("failures")
    add_settings(fail, EvolveSettings, ("eval_timeout", "failure_limit"))
    alg = p.add_argument_group(
        "algorithm",
        "Each method uses some of these options (propulate.methods.METHODS): --method random "
        "uses --ranks-per-worker and --eval-timeout of them, --method optuna neither; the "
        "breeding options are the island model's. Setting an option the method does not use "
        "is an error.",
    )
    add_settings(alg, EvolveSettings, ("method", "seed"), choices={"method": SEARCH_METHODS})
    alg.add_argument("--run-id", metavar="ID", help="run id in the records (default: seed<SEED>)")
    alg.add_argument(
        "--initial",
        nargs="+",
        metavar="JSON",
        help="configurations to evaluate before any bred or drawn one, e.g. a known default "
        "(each sets every parameter and satisfies the constraint; methods "
        f"{', '.join(m for m in SEARCH_METHODS if METHODS[m].initial)}) (default: none)",
    )
    from propulate.plugins.docs import help_line

    add_settings(
        alg,
        EvolveSettings,
        (
            "propagator",
            "portfolio",
            "islands",
            "pop_size",
            "migration_probability",
            "pollination",
            "crossover_prob",
            "mutation_prob",
            "random_init_prob",
            "pruned_random_init_prob",
            "sigma_factor",
            "ranks_per_worker",
            "pruner",
        ),
        notes={key: help_line(key) for key in ("propagator", "pruner")},
    )
    add_settings(req, EvolveSettings, ("objectives", "weights"))
    add_settings(p, EvolveSettings, ("progress_interval",))
    own = p.add_argument_group(
        "ownership",
        "A run directory has one owner at a time (a lease file under OUT/lease/ that the "
        "running job renews; no flock, so it works on NFS, Lustre and GPFS). A second evolve "
        "on the same --out waits until the owner ends, or takes the directory over once the "
        "owner's heartbeat stopped for --lease-expiry seconds (at once when the owner ran on "
        "this host and its process is gone).",
    )
    own.add_argument(
        "--no-wait",
        action="store_true",
        help="refuse (one line naming the owner, exit status 2) instead of waiting for a "
        "live owner of --out",
    )
    own.add_argument(
        "--lease-heartbeat",
        type=real(0.0, low_open=True),
        default=HEARTBEAT,
        metavar="SECONDS",
        help=f"seconds between two renewals of this job's lease (default: {HEARTBEAT:g})",
    )
    own.add_argument(
        "--lease-expiry",
        type=real(0.0, low_open=True),
        default=EXPIRY,
        metavar="SECONDS",
        help="seconds without a renewal after which another job may take this job's run "
        f"directory over; at least twice the heartbeat (default: {EXPIRY:g})",
    )
    from propulate.user_objective.cli import add_command_arguments

    add_command_arguments(p)
    # every setting defaults to None ("not given"): evolve_settings fills in the defaults
    p.set_defaults(func=func)
    return p


def _objectives(settings: EvolveSettings) -> str:
    """The canonical ``--objectives`` (with ``--weights`` merged in), checked against the
    method and propagator."""
    from propulate.methods import check_several_objectives
    from propulate.runs.declared_objectives import Objectives

    try:
        objectives = Objectives.parse(str(settings.objectives), settings.weights)
        if objectives.several:
            check_several_objectives(settings.method, settings.propagator, objectives)
    except ValueError as err:
        given = f"--objectives {settings.objectives}"
        if settings.weights is not None:
            given += f" --weights {settings.weights}"
        raise UsageError(f"{given}: {err}") from None
    return objectives.text()


def evolve_settings(args: argparse.Namespace) -> EvolveSettings:
    """The run's settings: the options given, the defaults of :class:`EvolveSettings` else.

    Raises
    ------
    UsageError
        When no stopping criterion is given, the method or propagator is unknown, or an option
        the method does not use differs from its default.
    """
    settings = settings_from_args(args, EvolveSettings)
    used = METHODS[settings.method].settings
    for item in describe(EvolveSettings):
        value = getattr(settings, item.name)
        if item.name not in used and value != item.default:
            raise UsageError(f"{item.flag} is not used by --method {settings.method}")
    if args.lease_expiry < 2 * args.lease_heartbeat:
        raise UsageError(
            f"--lease-expiry {args.lease_expiry:g} must be at least twice "
            f"--lease-heartbeat {args.lease_heartbeat:g}"
        )
    if settings.objectives is not None:
        settings = dataclasses.replace(settings, objectives=_objectives(settings), weights=None)
    elif settings.weights is not None:
        raise UsageError("--weights combines the objectives of --objectives: give both")
    settings = checked_plugins(settings)
    if (
        settings.max_evaluations is None
        and settings.generations is None
        and settings.time_limit is None
    ):
        raise UsageError(
            "give a stopping criterion: --max-evaluations, --generations or --time-limit"
        )
    return settings


def checked_plugins(settings: EvolveSettings) -> EvolveSettings:
    """``settings`` with the propagator and pruner specs checked once
    (:func:`propulate.plugins.resolve.resolve`) and written canonically; ``UsageError`` naming
    the option."""
    from propulate.plugins.resolve import PluginError, resolve
    from propulate.propagators.registry import PROPAGATORS

    try:
        plugins = resolve(settings)
    except PluginError as err:
        given = getattr(settings, err.key)
        raise UsageError(f"--{err.key} {given}: {err}") from None
    return dataclasses.replace(
        settings,
        propagator=PROPAGATORS.text(settings.propagator),
        pruner=None if plugins.pruner is None else plugins.pruner.text(),
    )
