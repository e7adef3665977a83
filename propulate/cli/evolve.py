"""``python -m propulate evolve``: one optimization run under ``mpiexec``/``srun``."""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

from propulate import __version__
from propulate.cli import UsageError, world_rank
from propulate.cli.evolve_args import add_evolve_parser, evolve_settings
from propulate.methods import METHODS, SEARCH_METHODS, Job
from propulate.plugins.resolve import describe_choice, resolve
from propulate.runs.declared_objectives import UNDECLARED
from propulate.settings import EvolveSettings


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``evolve`` subcommand."""
    add_evolve_parser(sub, run)


def _load(args: argparse.Namespace) -> tuple[Any, Any, dict[str, Any] | None]:
    """The objective (task bound), the space and the task spec; any failure is a UsageError."""
    from propulate.space.configspace import read_space_file
    from propulate.user_objective import read_task

    try:
        space = read_space_file(args.space)  # also ConfigSpace JSON
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


def initial_configurations(
    args: argparse.Namespace, space: Any, task: Any, method: str
) -> list[dict]:
    """The ``--initial`` configurations, each checked against the space and the constraint."""
    import json

    out = []
    for text in getattr(args, "initial", None) or []:
        try:
            params = json.loads(text)
        except json.JSONDecodeError as err:
            raise UsageError(f"--initial {text}: not JSON ({err.msg})") from None
        if not isinstance(params, dict) or set(params) != set(space.names):
            raise UsageError(f"--initial {text}: set exactly {', '.join(space.names)}")
        if not space.is_valid(params, task):
            raise UsageError(f"--initial {text}: outside the space or infeasible on the task")
        out.append(params)
    if out and not METHODS[method].initial:
        takes = [m for m in SEARCH_METHODS if METHODS[m].initial]
        raise UsageError(f"--initial is for --method {' or '.join(takes)}")
    return out


def objective_reference(args: argparse.Namespace) -> str:
    """What ``run.json`` remembers of the objective: its reference or the command line."""
    if getattr(args, "objective_command", None) is not None:
        return f"command: {args.objective_command}"
    return str(args.objective)


def _objective(args: argparse.Namespace, space: Any, task: dict[str, Any] | None) -> Any:
    """The objective of ``--objective`` or ``--objective-command``, bound to the task and checked
    (an unknown placeholder or a missing program fails here, before any evaluation)."""
    from propulate.user_objective import objective_from_config
    from propulate.user_objective.cli import command_from_args

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


def run(args: argparse.Namespace) -> int:
    """Run ``evolve`` on every rank; rank 0 writes the summary. Returns the exit status."""
    from propulate.runs.metadata import RunMetadata, RunMismatch, check_resume

    settings = evolve_settings(args)
    loss, space, task_spec = _load(args)  # fail before MPI starts work
    task = task_spec["task"] if task_spec else None
    initial = initial_configurations(args, space, task, settings.method)
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
        version=__version__,
        objectives=settings.objectives,
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
    from propulate.cli.ownership import take
    from propulate.engine.threads import rank_threads

    with rank_threads(comm) as threads:  # each rank its share of the cores (run.json says)
        started.threads = threads.to_dict()
        logging.getLogger("propulate").info("BLAS/OpenMP threads: %s", threads.describe())
        lease = take(
            out,
            comm,
            wait=not args.no_wait,
            heartbeat=args.lease_heartbeat,
            expiry=args.lease_expiry,
        )
        try:
            return _owned_run(
                args,
                job_args=(loss, space, task_spec, initial, settings, run_id),
                started=started,
                comm=comm,
                lease=lease,
            )
        finally:
            if lease is not None:
                lease.release()


def _owned_run(
    args: argparse.Namespace,
    job_args: tuple[Any, Any, Any, list[dict[str, Any]], EvolveSettings, str],
    started: Any,
    comm: Any,
    lease: Any,
) -> int:
    """The run, once this job owns ``--out``; returns the exit status."""
    from propulate.runs.metadata import RunMismatch, check_resume, write_run_metadata

    loss, space, task_spec, initial, settings, run_id = job_args
    out: Path = args.out
    rank = comm.Get_rank()
    started.started = time.time()  # the start of this session, after any wait for the lease
    try:
        check_resume(out, started)  # again: the previous owner may have started it meanwhile
    except RunMismatch as err:
        raise UsageError(str(err)) from None
    plugins = resolve(settings)
    if settings.method == "propulate":
        started.propagator = describe_choice(plugins, settings, space, comm.Get_size())
        if rank == 0 and "reason" in started.propagator:
            print(started.propagator["reason"], flush=True)
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
    job = Job(
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
        initial,
        plugins,
    )
    result = METHODS[settings.method].run(job, comm)
    if rank == 0 and not (lease is not None and lease.lost):  # else the new owner writes it
        _summarize(job, result, comm.Get_size())
    if result.stop_reason == "failures":
        if rank == 0:
            sys.stdout.flush()
            why = f"a worker's last {settings.failure_limit} evaluations all failed"
            if UNDECLARED in str(result.first_error):  # the options, not the objective
                why = "the objective's result does not match the run's objectives"
            print(
                f"propulate evolve: stopped: {why} (records in {out}/evals); the first "
                f"error:\n{result.first_error}".rstrip(),
                file=sys.stderr,
                flush=True,
            )
        return 1
    return _no_success(out, comm) if result.stop_reason != "signal" else 0


def _no_success(out: Path, comm: Any) -> int:
    """1 with a message when none of the run's evaluations succeeded (collective), else 0."""
    from propulate.cli.failed_run import no_success_message

    message = no_success_message(out) if comm.Get_rank() == 0 else None
    message = comm.bcast(message, root=0)
    if message is None:
        return 0
    if comm.Get_rank() == 0:
        sys.stdout.flush()
        print(message, file=sys.stderr, flush=True)
    return 1


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


def _summarize(job: Job, result: Any, ranks: int) -> None:
    """Write ``OUT/summary.json`` from all the run's records and the stop reason."""
    from propulate.runs.summary import summarize_directory, write_summary

    summary = summarize_directory(
        job.out,
        task=job.meta["task"],
        run=job.meta["run"],
        method=job.settings.method,
        seed=job.settings.seed,
        parameters=list(job.space.names),
        ranks=ranks,
        stop_reason=result.stop_reason,
        objectives=job.settings.objectives,
    )
    path = write_summary(job.out, summary)
    logging.getLogger("propulate").info("summary written to %s", path)
