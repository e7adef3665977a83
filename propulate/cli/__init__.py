"""The ``python -m propulate`` command line: one subcommand per pipeline stage.

Each stage lives in its own module of this package and exposes ``register(subparsers)``, which
adds its subcommand(s) with ``set_defaults(func=...)``; ``func(args) -> int`` runs it. Every
stage reads and writes files only, so Snakemake can stage it.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

#: Modules of this package that define subcommands, in the order ``--help`` lists them.
STAGES = ("evolve", "tasks", "model", "transfer", "measure", "report")


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every stage's subcommands."""
    parser = argparse.ArgumentParser(
        prog="python -m propulate",
        description="Autotuning and hyperparameter-optimization campaigns: asynchronous "
        "evolutionary runs over MPI, multitask Gaussian-process models and transfer to new tasks.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for stage in STAGES:
        try:
            module = importlib.import_module(f"propulate.cli.{stage}")
        except ModuleNotFoundError as err:
            if err.name == f"propulate.cli.{stage}":
                continue  # stage not installed in this build
            raise
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` and run the chosen subcommand; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (ValueError, ImportError, FileNotFoundError) as err:
        # User errors (bad space, unknown objective, missing file): one clear line, no traceback.
        print(f"propulate {args.command}: error: {err}", file=sys.stderr)
        _abort_peers(2)
        return 2
    except SystemExit as err:
        if err.code not in (None, 0):
            _abort_peers(err.code if isinstance(err.code, int) else 1)
        raise
    except BaseException:
        import traceback

        traceback.print_exc()
        _abort_peers(1)
        raise


def _abort_peers(code: int) -> None:
    """End the whole MPI job when this rank fails, so its peers cannot wait on it forever.

    Under ``srun`` (without ``--kill-on-bad-exit``) the other ranks of a job keep running when
    one exits; one blocked on the dead rank (a window lock, a message) would hold the job until
    its time limit. Only acts when MPI is initialised with more than one rank.
    """
    mpi = sys.modules.get("mpi4py.MPI")
    if mpi is None or not mpi.Is_initialized() or mpi.Is_finalized():
        return
    if mpi.COMM_WORLD.Get_size() > 1:
        sys.stderr.flush()
        mpi.COMM_WORLD.Abort(code)
