"""benchmarks/mla_paper.py at a tiny size (its tables name every method and hold shares), and
the win shares and timers of benchmarks/multitask.py."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "mla_paper.py"
SHARE = re.compile(r"(\d+)%")


def table(text: str, title: str) -> list[str]:
    """The lines of the wins matrix under the section whose title contains ``title``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("== ") and title in line)
    end = next((j for j in range(start + 1, len(lines)) if not lines[j]), len(lines))
    return lines[start + 1 : end]


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


def load_multitask() -> Any:
    """benchmarks/multitask.py as a module (benchmarks is not a package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("multitask", ROOT / "benchmarks" / "multitask.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_win_shares_count_strict_wins_both_ways() -> None:
    import numpy as np

    mt = load_multitask()
    scores = {"a": np.array([0.1, 0.2, 0.3, 0.4]), "b": np.array([0.2, 0.2, 0.1, 0.5])}
    lower = mt.win_shares(scores)
    assert lower["a", "b"] == 0.5 and lower["b", "a"] == 0.25  # one tie
    higher = mt.win_shares(scores, lower=False)
    assert higher["a", "b"] == 0.25 and higher["b", "a"] == 0.5


def test_stopwatch_charges_evaluations_and_fits_to_the_method(tmp_path: Path) -> None:
    mt = load_multitask()
    from propulate.space import SearchSpace

    watch = mt.Stopwatch()
    space = SearchSpace({"x": (0.0, 1.0)})
    calls = []

    def loss(params: dict, task: dict) -> float:
        calls.append(params["x"])
        return (params["x"] - task["t"]) ** 2

    with watch.method("gp"):
        s = mt.gp_ei_run(space, watch.objective(loss), "a", {"t": 0.3}, tmp_path, 4, 2, 0)
    assert s.evaluations == 4 and len(calls) == 4
    row = watch.as_dict()["seconds"]["gp"]
    assert row["fit"] > 0 and row["acquisition"] > 0 and row["evaluation"] > 0
    assert row["total"] >= row["fit"] + row["acquisition"] + row["evaluation"]
    assert watch.as_dict()["calls"]["gp"] == 2  # one acquisition search per guided evaluation
