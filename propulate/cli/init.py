"""``init``: a campaign directory of one's own, run with the installed workflow.

    propulate init DIR                      # a starter: your objective, space and tasks
    propulate init DIR --example demo       # or one of the shipped example campaigns

writes ``DIR/Snakefile`` (the installed workflow as a Snakemake module), ``DIR/config/config.yaml``
(commented) and the key reference ``config/README.md``, ``DIR/profiles/slurm`` (and
``profiles/default``) to adapt, a ``.gitignore``, and the starter's ``space.yaml`` and
``objective.py`` or the example's files. Then, in ``DIR``::

    snakemake --cores 2                     # results/<name>/ in DIR
    snakemake --profile profiles/slurm      # every job a Slurm job

Files already in ``DIR`` are never overwritten without ``--force``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def cmd_init(args: argparse.Namespace) -> int:
    """Run ``init``."""
    from propulate.cli import UsageError
    from propulate.pipeline import scaffold

    directory = Path(args.directory)
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"{directory} exists and is not a directory")
    files = scaffold.plan(directory, args.example, args.name)
    taken = scaffold.existing(directory, files)
    if taken and not args.force:
        raise UsageError(
            f"{directory} already holds {', '.join(taken)}: give --force to overwrite them"
        )
    written = scaffold.write(directory, files)
    needs_setup = args.example is not None and scaffold.has_setup(args.example)
    print(f"propulate init: wrote {len(written)} files into {directory}:")
    for path in written:
        print(f"  {path.relative_to(directory)}")
    setup = "python -m propulate.campaign setup config/config.yaml && " if needs_setup else ""
    print(f"next: cd {directory} && {setup}snakemake --cores 2")
    return 0


def register(subparsers: Any) -> None:
    """Add ``init`` to the command line."""
    from propulate.pipeline.scaffold import EXAMPLES

    p = subparsers.add_parser(
        "init",
        help="write a campaign directory that runs the installed workflow",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("directory", metavar="DIR", help="the campaign directory (created if missing)")
    p.add_argument(
        "--example",
        choices=sorted(EXAMPLES),
        help="a shipped example instead of the starter: "
        + "; ".join(f"{k}: {v.about}" for k, v in sorted(EXAMPLES.items())),
    )
    p.add_argument(
        "--name",
        help="the starter campaign's name (default: from DIR's name); results/<name>/",
    )
    p.add_argument("--force", action="store_true", help="overwrite files already in DIR")
    p.set_defaults(func=cmd_init)
