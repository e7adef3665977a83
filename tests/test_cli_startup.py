"""Start-up cost of the command line: a command imports only what it needs."""

from __future__ import annotations

import subprocess
import sys

from propulate.cli import COMMANDS, STAGES, build_parser

HEAVY = ("pandas", "scipy.stats", "GPy", "mpi4py.MPI", "optuna")


def imported_after(code: str) -> list[str]:
    """The heavy modules a fresh interpreter holds after running ``code``."""
    probe = f"{code}\nimport sys\nprint([m for m in {HEAVY!r} if m in sys.modules])"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    return eval(out.stdout.strip().splitlines()[-1])  # noqa: S307 - our own list literal


def test_importing_the_package_and_the_evolve_command_is_light() -> None:
    assert imported_after("import propulate, propulate.cli.evolve") == []
    assert (
        imported_after("import propulate.compat.history, propulate.runs.summary, propulate.methods")
        == []
    )


def test_a_command_builds_only_its_own_stage() -> None:
    code = (
        "from propulate.cli import build_parser\n"
        "build_parser('evolve').parse_args(['evolve', '--objective', 'm:f', '--space', 's',"
        " '--out', 'o'])\nbuild_parser('status')"
    )
    assert imported_after(code) == []


def test_the_command_table_names_every_command_of_every_stage() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert set(sub.choices) == set(COMMANDS)
    assert set(COMMANDS.values()) <= set(STAGES)
    for command in COMMANDS:  # the parser of the command's stage alone defines it
        only = next(a for a in build_parser(command)._actions if a.dest == "command")
        assert command in only.choices


def test_the_lazy_package_exports_its_names() -> None:
    import propulate

    for name in propulate.__all__:
        assert getattr(propulate, name) is not None
    assert "read_history" in dir(propulate)
