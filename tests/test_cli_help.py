"""Every subcommand's ``--help`` shows the default of every option that has one."""

from __future__ import annotations

import argparse

import pytest

from propulate.cli import COMMANDS, build_parser


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    out: dict[str, argparse.ArgumentParser] = {}
    for action in parser._actions:  # argparse offers no public walk over subcommands
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out[name] = sub
                out.update({f"{name} {k}": v for k, v in _subparsers(sub).items()})
    return out


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_help_shows_every_default(command: str) -> None:
    parsers = {
        k: v for k, v in _subparsers(build_parser(command)).items() if k.split()[0] == command
    }
    assert parsers, command
    missing = []
    for name, parser in parsers.items():
        formatter = parser._get_formatter()  # the help text as --help prints it
        for action in parser._actions:
            default = action.default
            if (
                not action.option_strings
                or action.help == argparse.SUPPRESS
                or isinstance(
                    action,
                    argparse._HelpAction | argparse._StoreTrueAction | argparse._StoreFalseAction,
                )
                or default is None
                or default is argparse.SUPPRESS
                or action.required
            ):
                continue
            if "default" not in formatter._get_help_string(action).lower():
                missing.append(f"{name} {action.option_strings[0]} (default {default!r})")
    assert not missing, f"--help does not show these defaults: {missing}"
