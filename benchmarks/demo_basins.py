"""How often a Latin hypercube lands in a good basin of the GPTune demo function.

A good basin is the descent basin (the stretch between two local maxima on a fine grid) of a
local minimum within ``--gap`` of the task's optimum, the gap above which
``benchmarks/mla_demo.py`` counts a task as stuck. For random tasks ``t`` in [0, 1.5] it prints
the share of tasks on which an ``n``-point Latin hypercube over ``x`` puts at least one point in
a good basin: a method that only refines the basins its initial design found is stuck on the
rest, so the share bounds what the initial design alone can give.

    .venv/bin/python benchmarks/demo_basins.py [--tasks 300] [--points 5 10 15 20] [--seed 5]
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy.stats import qmc

from propulate.objectives.demo import demo_function

GRID = 200_001


def good_points(t: float, gap: float, xs: np.ndarray) -> np.ndarray:
    """Boolean mask of the grid points ``xs`` that lie in a good basin of task ``t``."""
    f = np.asarray(demo_function(t, xs))
    padded = np.concatenate(([np.inf], f, [np.inf]))
    basin = np.cumsum((f >= padded[:-2]) & (f >= padded[2:]))  # a new basin at every maximum
    floor = np.full(basin.max() + 1, np.inf)
    np.minimum.at(floor, basin, f)
    return floor[basin] - f.min() < gap


def main() -> None:
    """Print the share of tasks whose design hits a good basin, per design size."""
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--tasks", type=int, default=300, help="random tasks t in [0, 1.5]")
    ap.add_argument("--points", type=int, nargs="+", default=[5, 10, 15, 20], help="design sizes")
    ap.add_argument("--gap", type=float, default=0.05, help="gap of a good basin")
    ap.add_argument("--seed", type=int, default=5, help="seed of the tasks and the designs")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    xs = np.linspace(0.0, 1.0, GRID)
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
