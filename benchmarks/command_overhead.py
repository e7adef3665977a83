"""What running a program costs per evaluation, against a Python objective.

    python benchmarks/command_overhead.py [--evaluations 200]

Times ``--evaluations`` evaluations through :func:`propulate.runs.outcome.evaluate` of

* a Python loss (a sum of squares),
* ``true`` as a command objective (no output, so each evaluation is a *failed* one: the cost of
  starting, waiting for, cleaning up after and reading a program, plus the failure record), and
* ``echo time: 0`` (an ok evaluation: the same plus parsing the result),

and prints the time per evaluation (mean and median, in milliseconds).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

from propulate.runs.outcome import evaluate
from propulate.user_objective import Command


def sphere(params: dict[str, Any]) -> float:
    """A trivial Python loss."""
    return float(sum(v * v for v in params.values()))


def per_evaluation(fn: Callable[..., Any], n: int) -> tuple[list[float], int]:
    """Seconds of each of ``n`` evaluations of ``fn`` and how many were ok."""
    times, ok = [], 0
    for i in range(n):
        t = time.perf_counter()
        out = evaluate(fn, {"x": float(i), "y": -1.0})
        times.append(time.perf_counter() - t)
        ok += out.ok
    return times, ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--evaluations", type=int, default=200, help="evaluations per objective")
    args = parser.parse_args()
    objectives = {
        "python sphere": sphere,
        "command `true`": Command("true", result="time: ([0-9.]+)"),
        "command `echo time: 0`": Command("echo time: 0", result="time: ([0-9.]+)"),
    }
    base = None
    print(f"{'objective':26s} {'ok':>5s} {'mean ms':>9s} {'median ms':>10s} {'overhead ms':>12s}")
    for name, fn in objectives.items():
        times, ok = per_evaluation(fn, args.evaluations)
        mean, med = 1e3 * statistics.fmean(times), 1e3 * statistics.median(times)
        base = med if base is None else base
        print(f"{name:26s} {ok:5d} {mean:9.3f} {med:10.3f} {med - base:12.3f}")


if __name__ == "__main__":
    main()
