"""The ``evolve`` command line: its options, their defaults and checks, and the settings they
give (:class:`propulate.settings.EvolveSettings`)."""

from __future__ import annotations

import argparse
from dataclasses import fields
from pathlib import Path
from typing import Any

from propulate.cli import UsageError
from propulate.cli.argtypes import real, whole
from propulate.runs.lease import EXPIRY, HEARTBEAT
from propulate.settings import EVOLVE_USED_BY, EvolveSettings

METHODS = tuple(EVOLVE_USED_BY)

#: The defaults (one place: :class:`propulate.settings.EvolveSettings`).
DEFAULTS = EvolveSettings()

DESCRIPTION = """\
Minimize an objective over a search space with the asynchronous island model (or a baseline),
on all MPI ranks of the job:

  mpiexec -n 4 python -m propulate evolve --objective propulate.objectives.benchmark:sphere \\
      --space space.yaml --out results/run --max-evaluations 2000

Writes one evaluation log per rank under OUT/evals/ (read them with
propulate.history.read_history), OUT/summary.json (best parameters and loss, evaluations,
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


def _flag(name: str) -> str:
    """The command-line flag of a settings field."""
    return "--migration" if name == "pollination" else "--" + name.replace("_", "-")


def _default(name: str) -> str:
    value = getattr(DEFAULTS, name)
    return "none" if value is None else str(value)


def add_evolve_parser(sub: argparse._SubParsersAction, func: Any) -> argparse.ArgumentParser:
    """Add the ``evolve`` subcommand, run by ``func``; returns its parser."""
    p = sub.add_parser(
        "evolve",
        help="run the asynchronous evolutionary optimizer (MPI)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    d = _default
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
    stop.add_argument(
        "--max-evaluations",
        type=whole(1),
        metavar="N",
        help="evaluation budget over all ranks, resumed ones included "
        f"(default: {d('max_evaluations')})",
    )
    stop.add_argument(
        "--generations",
        type=whole(1),
        metavar="N",
        help=f"generations per worker (default: {d('generations')})",
    )
    stop.add_argument(
        "--time-limit",
        type=real(0.0, low_open=True),
        metavar="SECONDS",
        help="wall-clock limit: no evaluation starts after it, running ones are "
        f"interrupted (default: {d('time_limit')})",
    )
    fail = p.add_argument_group("failures")
    fail.add_argument(
        "--eval-timeout",
        type=real(0.0, low_open=True),
        metavar="SECONDS",
        help="seconds one evaluation may take; a longer one is recorded as "
        f"failed (status timeout) and the run goes on (default: {d('eval_timeout')})",
    )
    fail.add_argument(
        "--failure-limit",
        type=whole(0),
        metavar="N",
        help="stop the run with an error (exit status 1) when a worker's last N "
        f"evaluations all failed; 0: never (default: {d('failure_limit')})",
    )
    alg = p.add_argument_group(
        "algorithm",
        "--islands, --pop-size, --migration*, --*-prob and --sigma-factor shape the "
        "island model (--method propulate) only; --method random uses --ranks-per-worker and "
        "--eval-timeout too, --method optuna neither. Setting an option the method does not use "
        "is an error.",
    )
    alg.add_argument(
        "--method",
        choices=METHODS,
        help="optimizer: the island model, uniform random search, or Optuna TPE "
        f"(default: {d('method')})",
    )
    alg.add_argument(
        "--seed",
        type=int,
        metavar="N",
        help=f"random seed; per-rank streams derive from it (default: {d('seed')})",
    )
    alg.add_argument("--run-id", metavar="ID", help="run id in the records (default: seed<SEED>)")
    alg.add_argument(
        "--initial",
        nargs="+",
        metavar="JSON",
        help="configurations to evaluate before any bred or drawn one, e.g. a known default "
        "(each sets every parameter and satisfies the constraint; --method propulate or "
        "random) (default: none)",
    )
    alg.add_argument(
        "--islands", type=whole(1), metavar="N", help=f"number of islands (default: {d('islands')})"
    )
    alg.add_argument(
        "--pop-size",
        type=whole(1),
        metavar="N",
        help=f"breeding-pool size per island (default: {d('pop_size')})",
    )
    alg.add_argument(
        "--migration-probability",
        type=real(0.0, 1.0),
        metavar="P",
        help="probability per generation of sending emigrants, with islands > 1 "
        f"(default: {d('migration_probability')})",
    )
    alg.add_argument(
        "--migration",
        dest="pollination",
        action="store_false",
        help="real migration (emigrants leave home) instead of pollination "
        "(copies) (default: pollination)",
    )
    alg.add_argument(
        "--crossover-prob",
        type=real(0.0, 1.0),
        metavar="P",
        help=f"crossover probability (default: {d('crossover_prob')})",
    )
    alg.add_argument(
        "--mutation-prob",
        type=real(0.0, 1.0),
        metavar="P",
        help=f"per-gene mutation probability (default: {d('mutation_prob')})",
    )
    alg.add_argument(
        "--random-init-prob",
        type=real(0.0, 1.0),
        metavar="P",
        help="probability that a bred child is replaced by a random one "
        f"(default: {d('random_init_prob')})",
    )
    alg.add_argument(
        "--sigma-factor",
        type=real(0.0, low_open=True),
        metavar="F",
        help=f"interval-mutation std as a fraction of each range (default: {d('sigma_factor')})",
    )
    alg.add_argument(
        "--ranks-per-worker",
        type=whole(1),
        metavar="N",
        help="MPI ranks per evaluation; the loss gets (params, comm) "
        f"(default: {d('ranks_per_worker')})",
    )
    p.add_argument(
        "--progress-interval",
        type=real(0.0, low_open=True),
        metavar="SECONDS",
        help=f"seconds between progress lines on rank 0 (default: {d('progress_interval')})",
    )
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
    from propulate.objective.cli import add_command_arguments

    add_command_arguments(p)
    # None marks "not given": settings_from_args fills in the defaults and knows what was set
    p.set_defaults(
        func=func,
        pollination=None,
        **{f.name: None for f in fields(EvolveSettings) if f.name != "pollination"},
    )
    return p


def settings_from_args(args: argparse.Namespace) -> EvolveSettings:
    """The run's settings: the options given, the defaults of :class:`EvolveSettings` else.

    Raises
    ------
    UsageError
        When no stopping criterion is given, or an option the method does not use differs from
        its default.
    """
    given = {f.name: getattr(args, f.name, None) for f in fields(EvolveSettings)}
    if given["pollination"] is None:
        given.pop("pollination")
    settings = EvolveSettings(
        **{k: v if v is not None else getattr(DEFAULTS, k) for k, v in given.items()}
    )
    used = EVOLVE_USED_BY[settings.method]
    for f in fields(EvolveSettings):
        value = getattr(settings, f.name)
        if f.name not in used and value != getattr(DEFAULTS, f.name):
            raise UsageError(f"{_flag(f.name)} is not used by --method {settings.method}")
    if args.lease_expiry < 2 * args.lease_heartbeat:
        raise UsageError(
            f"--lease-expiry {args.lease_expiry:g} must be at least twice "
            f"--lease-heartbeat {args.lease_heartbeat:g}"
        )
    if (
        settings.max_evaluations is None
        and settings.generations is None
        and settings.time_limit is None
    ):
        raise UsageError(
            "give a stopping criterion: --max-evaluations, --generations or --time-limit"
        )
    return settings
