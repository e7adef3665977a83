"""``python -m propulate evolve``: one optimization run under ``mpiexec``/``srun``."""

from __future__ import annotations

import argparse
import logging
import os
import random
import sys
import time
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from propulate.cli import UsageError, world_rank
from propulate.cli.argtypes import real, whole
from propulate.settings import EVOLVE_USED_BY, EvolveSettings

METHODS = tuple(EVOLVE_USED_BY)

#: The defaults (one place: :class:`propulate.settings.EvolveSettings`).
DEFAULTS = EvolveSettings()

#: The settings each method uses; any other one differing from its default is an error.
USED_BY = EVOLVE_USED_BY

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


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``evolve`` subcommand."""
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
    from propulate.objective.cli import add_command_arguments

    add_command_arguments(p)
    # None marks "not given": settings_from_args fills in the defaults and knows what was set
    p.set_defaults(
        func=run,
        pollination=None,
        **{f.name: None for f in fields(EvolveSettings) if f.name != "pollination"},
    )


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
    used = USED_BY[settings.method]
    for f in fields(EvolveSettings):
        value = getattr(settings, f.name)
        if f.name not in used and value != getattr(DEFAULTS, f.name):
            raise UsageError(f"{_flag(f.name)} is not used by --method {settings.method}")
    if (
        settings.max_evaluations is None
        and settings.generations is None
        and settings.time_limit is None
    ):
        raise UsageError(
            "give a stopping criterion: --max-evaluations, --generations or --time-limit"
        )
    return settings


def _load(args: argparse.Namespace) -> tuple[Any, Any, dict[str, Any] | None]:
    """The objective (task bound), the space and the task spec; any failure is a UsageError."""
    from propulate.objective import read_task
    from propulate.space import SearchSpace

    try:
        space = SearchSpace.from_yaml(args.space)
    except (OSError, ValueError, ImportError) as err:
        raise UsageError(f"--space {args.space}: {_plain(err)}") from None
    try:
        task_spec = read_task(args.task) if args.task else None
    except (OSError, ValueError) as err:
        raise UsageError(f"--task {args.task}: {_plain(err)}") from None
    if task_spec is not None and getattr(args, "task_id", None) is not None:
        raise UsageError("--task-id is for runs without --task (a task spec names its own id)")
    loss = _objective(args, space, task_spec["task"] if task_spec else None)
    return loss, space, task_spec


def objective_reference(args: argparse.Namespace) -> str:
    """What ``run.json`` remembers of the objective: its reference or the command line."""
    if getattr(args, "objective_command", None) is not None:
        return f"command: {args.objective_command}"
    return str(args.objective)


def _objective(args: argparse.Namespace, space: Any, task: dict[str, Any] | None) -> Any:
    """The objective of ``--objective`` or ``--objective-command``, bound to the task and checked
    (an unknown placeholder or a missing program fails here, before any evaluation)."""
    from propulate.objective import objective_from_config
    from propulate.objective.cli import command_from_args

    try:
        command = command_from_args(args)
    except ValueError as err:
        raise UsageError(_plain(err)) from None
    if (command is None) == (args.objective is None):
        raise UsageError("give exactly one of --objective and --objective-command")
    if command is not None:
        try:
            bound = command.bind(task)
            bound.check(space.names, task or ())
        except ValueError as err:
            raise UsageError(f"--objective-command: {_plain(err)}") from None
        return bound
    try:
        return objective_from_config(args.objective, task, space_names=space.names)
    except ImportError as err:
        raise UsageError(_plain(err)) from None
    except ValueError as err:
        raise UsageError(f"--objective {args.objective}: {_plain(err)}") from None
    except Exception as err:  # noqa: BLE001 - the user's module failed while importing
        raise UsageError(
            f"importing objective {args.objective} failed: {type(err).__name__}: {_plain(err)}"
        ) from None


def _plain(err: BaseException) -> str:
    """An exception's text on one line."""
    return " ".join(str(err).split())


def prepare_out(out: Path) -> None:
    """Create the run directory and check that it is writable (every rank, before MPI).

    Raises
    ------
    UsageError
        When ``out`` is a file, cannot be created, or is not writable.
    """
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} is a file, not a directory")
    what = "is not a writable directory" if out.exists() else "cannot be created"
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / f".write-test.{os.getpid()}.{world_rank()}"
        probe.write_text("")
        probe.unlink()
    except OSError as err:
        raise UsageError(f"--out {out} {what}: {err.strerror or _plain(err)}") from None


@dataclass
class Run:
    """One run's inputs, as the methods get them."""

    loss: Any
    space: Any
    task_spec: dict[str, Any] | None
    out: Path
    settings: EvolveSettings
    meta: dict[str, Any]

    @property
    def task(self) -> dict[str, Any] | None:
        return self.task_spec["task"] if self.task_spec else None


def run(args: argparse.Namespace) -> int:
    """Run ``evolve`` on every rank; rank 0 writes the summary. Returns the exit status."""
    from propulate.rundir import RunMetadata, RunMismatch, check_resume, write_run_metadata

    settings = settings_from_args(args)
    loss, space, task_spec = _load(args)  # fail before MPI starts work
    out: Path = args.out
    prepare_out(out)
    run_id = args.run_id or f"seed{settings.seed}"
    started = RunMetadata(
        objective=objective_reference(args),
        space=space.to_dict(),
        method=settings.method,
        run=run_id,
        seed=settings.seed,
        task=task_spec,
        max_evaluations=settings.max_evaluations,
        generations=settings.generations,
        time_limit=settings.time_limit,
        started=time.time(),
    )
    try:
        check_resume(out, started)  # every rank reads the same file: all fail alike
    except RunMismatch as err:
        raise UsageError(str(err)) from None

    from mpi4py import MPI

    from propulate.logging_config import set_logger_config

    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    check_layout(settings, comm.Get_size())
    set_logger_config(level=logging.INFO if rank == 0 else logging.WARNING)
    problem = None
    if rank == 0:
        try:
            write_run_metadata(out, started)
            if task_spec:
                (out / "task.json").write_text(_json(task_spec))
        except OSError as err:
            problem = f"cannot write into --out {out}: {err.strerror or _plain(err)}"
    problem = comm.bcast(problem, root=0)  # set-up only: the files exist before any evaluation
    if problem:
        raise UsageError(problem)
    job = Run(
        loss,
        space,
        task_spec,
        out,
        settings,
        {
            "task": task_spec["id"] if task_spec else args.task_id,
            "run": run_id,
            "method": settings.method,
        },
    )
    if settings.method == "optuna":
        from propulate.baselines.optuna_worker import run_optuna

        result = run_optuna(loss, space, job.task, out, job.meta, settings, comm)
    else:
        result = _run_engine(job, comm)
    if rank == 0:
        _summarize(job, result, comm.Get_size())
    if result.stop_reason == "failures":
        if rank == 0:
            sys.stdout.flush()
            print(
                f"propulate evolve: stopped: a worker's last {settings.failure_limit} "
                f"evaluations all failed (records in {out}/evals); the first error:\n"
                f"{result.first_error}".rstrip(),
                file=sys.stderr,
                flush=True,
            )
        return 1
    return 0


def check_layout(settings: EvolveSettings, ranks: int) -> None:
    """Reject a job the island model cannot split (alike on every rank: a UsageError)."""
    if ranks % settings.ranks_per_worker:
        raise UsageError(
            f"{ranks} MPI ranks cannot form workers of --ranks-per-worker "
            f"{settings.ranks_per_worker}"
        )
    workers = ranks // settings.ranks_per_worker
    if settings.islands > workers:
        raise UsageError(
            f"--islands {settings.islands} needs at least {settings.islands} "
            f"workers; the job has {workers}"
        )


def _json(data: Any) -> str:
    import json

    return json.dumps(data, indent=2) + "\n"


def _run_engine(job: Run, comm: Any) -> Any:
    """Run the island model (or random search in it) on every rank; the engine's RunResult."""
    from propulate.islands import Islands
    from propulate.propagators import InitUniform, get_default_propagator

    s = job.settings
    rng = random.Random(s.seed * 1_000_003 + comm.Get_rank())
    if s.method == "random":
        propagator = InitUniform(job.space, rng=rng)
    else:
        propagator = get_default_propagator(
            s.pop_size,
            job.space,
            s.crossover_prob,
            s.mutation_prob,
            s.random_init_prob,
            s.sigma_factor,
            rng=rng,
        )
    islands = Islands(
        job.loss,
        propagator,
        rng,
        generations=s.generations or -1,
        num_islands=s.islands,
        migration_probability=s.migration_probability,
        pollination=s.pollination,
        checkpoint_path=job.out,
        ranks_per_worker=s.ranks_per_worker,
        max_evaluations=s.max_evaluations,
        time_limit=s.time_limit,
        eval_timeout=s.eval_timeout,
        failure_limit=s.failure_limit,
        space=job.space,
        task=job.task,
        meta=job.meta,
        progress_interval=s.progress_interval,
        comm=comm,
    )
    islands.propulate()
    return islands.result()


def _summarize(job: Run, result: Any, ranks: int) -> None:
    """Write ``OUT/summary.json`` from the records (counts, time span) and the result (best)."""
    from propulate.history import tally
    from propulate.rundir import RunSummary, write_summary

    counts = tally(job.out)
    wall = counts.span
    summary = RunSummary(
        task=job.meta["task"],
        run=job.meta["run"],
        method=job.settings.method,
        seed=job.settings.seed,
        parameters=list(job.space.names),
        best_params=result.best_params,
        best_loss=result.best_loss,
        evaluations=counts.evaluations,
        failures=counts.failures,
        wall_time=wall,
        evaluations_per_second=counts.evaluations / wall if wall > 0 else 0.0,
        ranks=ranks,
        stop_reason=result.stop_reason,
    )
    path = write_summary(job.out, summary)
    logging.getLogger("propulate").info("summary written to %s", path)
