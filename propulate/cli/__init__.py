"""The ``python -m propulate`` command line: one subcommand per pipeline stage.

Each stage lives in its own module of this package and exposes ``register(subparsers)``, which
adds its subcommand(s) with ``set_defaults(func=...)``; ``func(args) -> int`` runs it. Every
stage reads and writes files only, so Snakemake can stage it.

Only the chosen command's module is imported (see :data:`COMMANDS`), so a command starts
without the libraries of the others (pandas, GPy, scipy).

Errors a user can cause (a bad option, a missing file, an objective that does not import)
are :class:`UsageError`: under MPI every rank meets them alike, so rank 0 alone prints one line
(``propulate COMMAND: error: ...``) and every rank exits with status 2, without a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from propulate import __version__
from propulate.abort import abort_world

#: Modules of this package that define subcommands, in the order ``--help`` lists them.
STAGES = (
    "evolve",
    "status",
    "dashboard",
    "tasks",
    "model",
    "transfer",
    "measure",
    "report",
    "suggest",
    "sensitivity",
    "tuningdb",
    "init",
    "space",
    "plugins",
)

#: Subcommand -> the stage module defining it (a test checks it against :data:`STAGES`).
COMMANDS = {
    "evolve": "evolve",
    "status": "status",
    "dashboard": "dashboard",
    "sample-tasks": "tasks",
    "fit-lcm": "model",
    "mla": "model",
    "transfer": "transfer",
    "measure": "measure",
    "paired": "measure",
    "aggregate": "report",
    "report": "report",
    "suggest": "suggest",
    "sensitivity": "sensitivity",
    "tuningdb": "tuningdb",
    "init": "init",
    "space": "space",
    "plugins": "plugins",
}

#: Exit status of a run stopped by Ctrl-C before it could stop cleanly (128 + SIGINT).
INTERRUPTED = 130

#: Environment variables that hold the process's rank before MPI is initialised.
RANK_VARIABLES = ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID")


class UsageError(Exception):
    """A user's error that every rank meets alike: printed once by rank 0, exit status 2."""


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one-line :class:`UsageError` s."""

    def error(self, message: str) -> None:  # type: ignore[override]
        """Raise the parse error instead of printing the usage and exiting."""
        text = " ".join(message.split())
        raise UsageError(f"{text} (see {self.prog} --help)")


def world_rank() -> int:
    """This process's rank in the MPI job (0 outside MPI), without initialising MPI."""
    mpi = sys.modules.get("mpi4py.MPI")
    if mpi is not None and mpi.Is_initialized() and not mpi.Is_finalized():
        return int(mpi.COMM_WORLD.Get_rank())
    for name in RANK_VARIABLES:
        value = os.environ.get(name, "")
        if value.isdigit():
            return int(value)
    return 0


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The top-level parser: with ``command``, only the stage defining it; else every stage."""
    parser = Parser(
        prog="python -m propulate",
        description="Autotuning and hyperparameter-optimization campaigns: asynchronous "
        "evolutionary runs over MPI, multitask Gaussian-process models and transfer to new tasks.",
    )
    parser.add_argument(
        "--version", action="version", version=f"propulate {__version__}", help="print the version"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    stages = [COMMANDS[command]] if command in COMMANDS else STAGES
    for stage in stages:
        try:
            module = importlib.import_module(f"propulate.cli.{stage}")
        except ModuleNotFoundError as err:
            if err.name == f"propulate.cli.{stage}":
                continue  # stage not installed in this build
            raise
        module.register(sub)
    return parser


def _add_cwd_to_path() -> None:
    """Let ``--objective mymodule:loss`` find ``mymodule.py`` in the current directory.

    ``python -m`` does that by itself, but the ``propulate`` console script and
    ``python -P``/``PYTHONSAFEPATH`` do not.
    """
    cwd = os.getcwd()
    if not any(os.path.abspath(p or os.curdir) == cwd for p in sys.path):
        sys.path.append(cwd)


def _say(text: str) -> None:
    """Print one error line on stderr, on rank 0 only."""
    if world_rank() == 0:
        sys.stdout.flush()
        print(text, file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` and run the chosen subcommand; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    _add_cwd_to_path()
    command = argv[0] if argv else None
    try:
        args = build_parser(command).parse_args(argv)
    except UsageError as err:
        _say(f"propulate{' ' + command if command in COMMANDS else ''}: error: {err}")
        return 2
    name = args.command
    try:
        return int(args.func(args) or 0)
    except UsageError as err:
        _say(f"propulate {name}: error: {err}")
        return 2
    except KeyboardInterrupt:
        _say(f"propulate {name}: interrupted")
        abort_world(INTERRUPTED)
        return INTERRUPTED
    except (ValueError, ImportError, FileNotFoundError) as err:
        # User errors of the other stages (bad space, unknown objective, missing file): one
        # clear line, no traceback; this rank may be alone in meeting it, so it prints.
        print(f"propulate {name}: error: {err}", file=sys.stderr)
        abort_world(2)
        return 2
    except SystemExit as err:
        if err.code not in (None, 0):
            abort_world(err.code if isinstance(err.code, int) else 1)
        raise
    except BaseException:
        import traceback

        traceback.print_exc()
        abort_world(1)
        raise
