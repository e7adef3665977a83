"""The wheel's size that docs/benchmarks.md gives is the size of the wheel this checkout builds
(within 15 %); it said 310 KiB of a 688 KiB wheel."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def test_the_documented_wheel_size_is_the_built_ones(tmp_path: Path) -> None:
    text = (REPO / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    found = re.search(r"The wheel is about (\d+) KiB", text)
    assert found is not None, "docs/benchmarks.md no longer states the wheel's size"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(tmp_path), str(REPO)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (wheel,) = tmp_path.glob("*.whl")
    built = wheel.stat().st_size / 1024
    assert abs(int(found.group(1)) - built) <= 0.15 * built, f"the wheel is {built:.0f} KiB"
