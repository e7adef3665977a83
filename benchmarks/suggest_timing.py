"""How long ``python -m propulate suggest`` takes, for a tuned task and for an unseen one.

    python benchmarks/suggest_timing.py --campaign results/lapack_qr [--repeats 5]

Runs the command ``--repeats`` times for a task the database holds (``source: measured``) and
for a task it does not (``source: tla1``: the midpoint of the task space, or ``--unseen``), each
a fresh process as an application would start it, and prints the median wall time and the
median CPU time (user + system) in seconds. On a shared machine the CPU time is the better
guide: the wall time includes waiting for a core.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from propulate.tuningdb.store import TuningDB


def run(campaign: str, task: str) -> tuple[float, float, dict]:
    """Wall and CPU seconds of one ``suggest`` process, and its answer."""
    before = os.times()
    t = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "propulate", "suggest", "--campaign", campaign, "--task", task],
        capture_output=True,
        text=True,
        check=True,
    )
    wall = time.perf_counter() - t
    after = os.times()
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    return wall, cpu, json.loads(out.stdout)


def main() -> None:
    """Time both kinds of task and print the medians."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--campaign", required=True, help="campaign results directory")
    parser.add_argument("--repeats", type=int, default=5, help="processes per kind of task")
    parser.add_argument("--unseen", help="an unseen task as name=value,... (default: midpoint)")
    args = parser.parse_args()
    with TuningDB(args.campaign, readonly=True) as db:
        tuned = db.current()[0].task
        spec = db.get_meta("campaign")["task_space"]
    mid = {k: (v["low"] + v["high"]) / 2 for k, v in spec.items()}
    mid = {k: int(v) if spec[k]["type"] == "int" else v for k, v in mid.items()}
    tasks = {
        "measured": ",".join(f"{k}={v}" for k, v in tuned.items()),
        "tla1": args.unseen or ",".join(f"{k}={v}" for k, v in mid.items()),
    }
    for kind, task in tasks.items():
        times = [run(args.campaign, task) for _ in range(args.repeats)]
        sources = {answer["source"] for _, _, answer in times}
        print(
            f"{kind:9s} task {task}: median wall {statistics.median(t[0] for t in times):.3f} s,"
            f" median CPU {statistics.median(t[1] for t in times):.3f} s"
            f" over {args.repeats} runs (source: {', '.join(sorted(sources))})"
        )


if __name__ == "__main__":
    main()
