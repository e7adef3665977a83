"""Command-line flags for a command objective (``--objective-command`` and friends)."""

from __future__ import annotations

import argparse
from typing import Any

from propulate.settings import CommandSettings
from propulate.user_objective.command import Command

_D = CommandSettings()

#: Flags that only make sense with ``--objective-command``.
_DEPENDENT = (
    "result_regex",
    "result_json",
    "command_timeout",
    "repeats",
    "confirm_repeats",
    "launcher",
    "command_env",
    "workdir",
    "progress_regex",
)


def add_command_arguments(parser: argparse.ArgumentParser) -> argparse._ArgumentGroup:
    """Add the flags of a command objective to ``parser`` (as an argument group).

    ``--objective-command`` replaces ``--objective MODULE:FUNCTION``; the other flags default
    to ``None`` so :func:`command_from_args` can tell what was given (the shown defaults are
    :class:`~propulate.settings.CommandSettings`').
    """
    g = parser.add_argument_group(
        "command objective (instead of --objective)",
        "tune a program: '{name}' in the command is replaced by a parameter or task value",
    )
    g.add_argument(
        "--objective-command",
        metavar="COMMAND",
        help='program and arguments, e.g. "./app --nb {nb} --n {n}" (no shell)',
    )
    g.add_argument(
        "--result-regex",
        metavar="REGEX",
        help="regex on stdout; group 1 of the last match is the loss",
    )
    g.add_argument(
        "--result-json",
        metavar="KEY",
        help="the loss is KEY of a JSON object in stdout (dots: nested keys)",
    )
    g.add_argument(
        "--command-timeout",
        type=float,
        metavar="SECONDS",
        help="seconds per run of the program; then its process group is killed "
        f"(default: {_D.timeout})",
    )
    g.add_argument(
        "--repeats",
        type=int,
        metavar="K",
        help=f"runs per evaluation; the loss is their median (default: {_D.repeats})",
    )
    g.add_argument(
        "--confirm-repeats",
        type=int,
        metavar="K",
        help="extra runs before a configuration becomes an island's best "
        "(default: --repeats, at least 2)",
    )
    g.add_argument(
        "--launcher", metavar="PREFIX", help='prefix for MPI programs, e.g. "mpiexec -n {nproc}"'
    )
    g.add_argument(
        "--command-env",
        action="append",
        metavar="NAME=VALUE",
        help="environment variable of the program (repeatable; placeholders allowed)",
    )
    g.add_argument(
        "--progress-regex",
        metavar="REGEX",
        help="regex on each stdout line while the program runs: its intermediate values "
        "(group 1 the value, or groups 1 and 2 the step and the value), for --pruner",
    )
    g.add_argument(
        "--workdir", metavar="DIR", help=f"directory the program runs in (default: {_D.workdir})"
    )
    return g


def command_from_args(args: argparse.Namespace) -> Command | None:
    """The :class:`Command` the flags describe, or ``None`` without ``--objective-command``.

    Raises
    ------
    ValueError
        A flag given without ``--objective-command``, none or both of ``--result-regex`` and
        ``--result-json``, a malformed ``--command-env``, or a bad value.
    """
    if getattr(args, "objective_command", None) is None:
        given = [
            f"--{name.replace('_', '-')}"
            for name in _DEPENDENT
            if getattr(args, name, None) is not None
        ]
        if given:
            raise ValueError(f"{', '.join(given)} need(s) --objective-command")
        return None
    results = (args.result_regex is not None) + (args.result_json is not None)
    if results > 1 or (results == 0 and args.progress_regex is None):
        raise ValueError(
            "--objective-command needs exactly one of --result-regex and --result-json "
            "(or --progress-regex alone: the last progress value is the loss)"
        )
    env: dict[str, str] = {}
    for item in args.command_env or []:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise ValueError(f"--command-env {item!r}: expected NAME=VALUE")
        env[name] = value
    config: dict[str, Any] = {"command": args.objective_command}
    if args.result_regex is not None:
        config["result"] = args.result_regex
    elif args.result_json is not None:
        config["result"] = {"json": args.result_json}
    for key, flag in (
        ("timeout", "command_timeout"),
        ("repeats", "repeats"),
        ("confirm_repeats", "confirm_repeats"),
        ("launcher", "launcher"),
        ("workdir", "workdir"),
        ("progress", "progress_regex"),
    ):
        if getattr(args, flag) is not None:
            config[key] = getattr(args, flag)
    if env:
        config["env"] = env
    return Command.from_config(config)
