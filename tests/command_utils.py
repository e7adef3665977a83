"""Shared by the tests of command objectives (``propulate.user_objective.Command``)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

#: The example campaigns' C program and configs.
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "command"

#: The result regex of the test programs, which print ``time: <loss>``.
REGEX = "time: ([0-9.eE+-]+)"


def build_matmul(directory: Path) -> Path:
    """Copy ``examples/command``'s program to ``directory/examples/command`` and build it
    there with ``make`` and the system ``cc`` (skips the test without them); the folder."""
    if shutil.which("cc") is None or shutil.which("make") is None:
        pytest.skip("no system C compiler (cc) or make")
    folder = directory / "examples" / "command"
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("matmul.c", "Makefile"):
        shutil.copy(EXAMPLE / name, folder / name)
    subprocess.run(["make", "-s", "-C", str(folder)], check=True, timeout=120)
    return folder
