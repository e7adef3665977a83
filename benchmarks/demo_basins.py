"""How often a Latin hypercube lands in a good basin of the GPTune demo function.

A good basin is the descent basin (the stretch between two local maxima on a fine grid) of a
local minimum within ``--gap`` of the task's optimum, the gap above which
``benchmarks/mla_demo.py`` counts a task as stuck. For random tasks ``t`` in [0, 1.5] it prints
the share of tasks on which an ``n``-point Latin hypercube over ``x`` puts at least one point in
a good basin: a method that only refines the basins its initial design found is stuck on the
rest, so the share bounds what the initial design alone can give.

With ``--sets``, for the training-task sets of ``benchmarks/mla_demo.py`` (the same task
designs, seeds ``--first-seed`` on), it prints the share of tasks that are alone: no other
task's optimum lies in a good basin of theirs. What the other tasks find cannot lead such a
task to a good basin; it has only its own evaluations, as single-task tuning has.

    .venv/bin/python benchmarks/demo_basins.py [--tasks 300] [--points 5 10 15 20] [--seed 5]
    .venv/bin/python benchmarks/demo_basins.py --sets 4 8 10 --seeds 15 --first-seed 100
"""

from __future__ import annotations

import argparse

import numpy as np
from mla_demo import STUCK, TASKS
from scipy.stats import qmc

from propulate.models.sampling import sample_tasks
from propulate.problems.demo import demo_function, demo_true_optimum

GRID = 200_001


def good_points(t: float, gap: float, xs: np.ndarray) -> np.ndarray:
    """Boolean mask of the grid points ``xs`` that lie in a good basin of task ``t``."""
    f = np.asarray(demo_function(t, xs))
    padded = np.concatenate(([np.inf], f, [np.inf]))
    basin = np.cumsum((f >= padded[:-2]) & (f >= padded[2:]))  # a new basin at every maximum
    floor = np.full(basin.max() + 1, np.inf)
    np.minimum.at(floor, basin, f)
    return floor[basin] - f.min() < gap


def alone(n_tasks: int, seeds: range, gap: float, xs: np.ndarray) -> tuple[int, int]:
    """Tasks of ``mla_demo``'s ``n_tasks``-task sets (one per seed) with no other task's optimum
    in a good basin of theirs, and all tasks."""
    count = total = 0
    for seed in seeds:
        ts = [float(task["t"]) for task in sample_tasks(TASKS, n_tasks, seed)]
        x_opt = np.array([demo_true_optimum(t)[0] for t in ts])
        optima = np.round(x_opt * (len(xs) - 1)).astype(int)  # grid indices
        for i, t in enumerate(ts):
            count += not good_points(t, gap, xs)[np.delete(optima, i)].any()
            total += 1
    return count, total


def main() -> None:
    """Print the share of tasks whose design hits a good basin, per design size (or, with
    ``--sets``, the share of tasks alone in their good basins, per task set)."""
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--tasks", type=int, default=300, help="random tasks t in [0, 1.5]")
    ap.add_argument("--points", type=int, nargs="+", default=[5, 10, 15, 20], help="design sizes")
    ap.add_argument("--gap", type=float, default=STUCK, help="gap of a good basin")
    ap.add_argument("--seed", type=int, default=5, help="seed of the tasks and the designs")
    ap.add_argument("--sets", type=int, nargs="+", help="numbers of training tasks (mla_demo)")
    ap.add_argument("--seeds", type=int, default=15, help="task sets per size (with --sets)")
    ap.add_argument("--first-seed", type=int, default=100, help="first seed (with --sets)")
    args = ap.parse_args()
    xs = np.linspace(0.0, 1.0, GRID)
    if args.sets:
        seeds = range(args.first_seed, args.first_seed + args.seeds)
        for n in args.sets:
            count, total = alone(n, seeds, args.gap, xs)
            print(
                f"{n:>3} training tasks: {count / total:.0%} of {total} tasks alone in their basins"
            )
        return
    rng = np.random.default_rng(args.seed)
    hits = {n: 0 for n in args.points}
    for _ in range(args.tasks):
        good = good_points(float(rng.uniform(0.0, 1.5)), args.gap, xs)
        for n in args.points:
            u = qmc.LatinHypercube(d=1, seed=rng).random(n)[:, 0]
            hits[n] += bool(good[np.round(u * (GRID - 1)).astype(int)].any())
    for n in args.points:
        print(
            f"{n:>3} Latin-hypercube points: a good basin hit on {hits[n] / args.tasks:.0%} of tasks"
        )


if __name__ == "__main__":
    main()
