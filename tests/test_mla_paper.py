"""benchmarks/mla_paper.py at a tiny size: its tables name every method and hold shares."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "mla_paper.py"
SHARE = re.compile(r"(\d+)%")


def table(text: str, title: str) -> list[str]:
    """The lines of the wins matrix under the section whose title contains ``title``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("== ") and title in line)
    end = next((j for j in range(start + 1, len(lines)) if not lines[j]), len(lines))
    return lines[start + 1 : end]


@pytest.mark.slow
def test_mla_paper_tiny_run_prints_every_method_and_shares(tmp_path: Path) -> None:
    args = ["--tasks", "3", "--new", "2", "--seeds", "0", "--budget", "5", "--initial", "3"]
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), *args, "--tmp", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout
    train = "\n".join(table(out, "3 training tasks, seeds 0"))
    new = "\n".join(table(out, "2 new tasks per seed"))
    assert "3 (task, seed) pairs" in out and "2 (task, seed) pairs" in out
    for label in ("MLA 3+2", "MLA default", "TPE (5)", "island GA (5)", "GP-EI (5)", "random (5)"):
        assert label in train, label
    for label in ("TLA1 (0)", "TLA2 (5)", "TPE (5)", "GP-EI (5)", "random (5)"):
        assert label in new, label
    shares = [int(s) for s in SHARE.findall(train + new)]
    assert len(shares) >= 6 * 5 + 5 * 4  # the two win matrices at least
    assert all(0 <= s <= 100 for s in shares)
    assert re.search(r"MLA better than TPE \(20\) >= 90%\s+\d+%\s+(met|MISSED)", out)
    assert re.search(r"LCM fit, Q = 3, \d+ points, one start: [\d.]+ s", out)
