"""MLA, single-task GP-EI and random search on the GPTune demo function; then TLA1 / TLA2.

Per seed: 10 training tasks by Latin hypercube over t in [0, 1.5], 20 evaluations per task
(10 Latin-hypercube samples + 10 model-guided ones) for MLA (one LCM over all tasks, Q = 3, every
point kept: ``max_points=None``) and for
single-task GP-EI (the same loop, one task at a time, a one-task model), and 20 uniform random
evaluations. The gap of a task is its best loss minus the true optimum (dense grid,
``demo_true_optimum``). Then 5 new tasks in the same range: TLA1 (0 evaluations, the gap of its
prediction), TLA2 with 5 evaluations (from a model refitted on all MLA data), random with 5.

    .venv/bin/python benchmarks/mla_demo.py [--seeds 5] [--first-seed 0] [--tasks 10] [--new 5]

The targets are stated for seeds 0-4; ``--first-seed 5 --seeds 10`` checks them on held-out seeds.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from propulate.models.mla import run_mla
from propulate.models.sampling import build_lcm, sample_tasks, training_set_from_runs
from propulate.models.transfer import run_tla2, tla1
from propulate.objectives.demo import demo_loss, demo_true_optimum
from propulate.space import SearchSpace

SPACE = SearchSpace({"x": (0.0, 1.0)})
TASKS = SearchSpace({"t": (0.0, 1.5)})


def random_gap(task: dict, n: int, rng: np.random.Generator, f_star: float) -> float:
    """Gap of the best of ``n`` uniform random evaluations."""
    return min(demo_loss({"x": float(x)}, task) for x in rng.random(n)) - f_star


def one_seed(seed: int, n_tasks: int, n_new: int, work: Path) -> dict[str, list[float]]:
    """All gaps of one seed, by method."""
    rng = np.random.default_rng(1000 + seed)
    tasks = [(f"train{i:02d}", t) for i, t in enumerate(sample_tasks(TASKS, n_tasks, seed))]
    opt = {tid: demo_true_optimum(t["t"])[1] for tid, t in tasks}
    gaps: dict[str, list[float]] = {k: [] for k in ("mla", "gp-ei", "random", "tla1", "tla2",
                                                     "random5")}
    out = work / f"mla{seed}"
    for s in run_mla(SPACE, demo_loss, tasks, out, budget=20, initial=10, seed=seed,
                     task_space=TASKS, latent=3, restarts=2, max_points=None):
        gaps["mla"].append(s.best_loss - opt[s.task])
    for tid, task in tasks:
        s = run_mla(SPACE, demo_loss, [(tid, task)], work / f"gp{seed}", budget=20, initial=10,
                    seed=seed, latent=1, restarts=2, max_points=None)[0]
        gaps["gp-ei"].append(s.best_loss - opt[tid])
        gaps["random"].append(random_gap(task, 20, rng, opt[tid]))
    data = training_set_from_runs([out / tid for tid, _ in tasks], SPACE)
    model = build_lcm(data, SPACE, TASKS, latent=3, max_points=None).fit(restarts=2, seed=seed)
    for j, task in enumerate(sample_tasks(TASKS, n_new, seed + 100)):
        f_star = demo_true_optimum(task["t"])[1]
        pred, _ = tla1(model, SPACE, TASKS, task, seed)
        gaps["tla1"].append(demo_loss(pred, task) - f_star)
        s = run_tla2(model, SPACE, TASKS, f"new{j:02d}", task, demo_loss,
                     work / f"tla2-{seed}-{j}", budget=5, seed=seed, start=pred)[0]
        gaps["tla2"].append(s.best_loss - f_star)
        gaps["random5"].append(random_gap(task, 5, rng, f_star))
    return gaps


def main() -> None:
    """Run the benchmark and print its tables."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seeds", type=int, default=5, help="number of seeds")
    ap.add_argument("--first-seed", type=int, default=0, help="seeds first-seed .. first-seed+seeds-1")
    ap.add_argument("--tasks", type=int, default=10)
    ap.add_argument("--new", type=int, default=5)
    args = ap.parse_args()
    allg: dict[str, list[float]] = {}
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            for k, v in one_seed(seed, args.tasks, args.new, Path(tmp)).items():
                allg.setdefault(k, []).extend(v)
            print(f"seed {seed} done ({time.perf_counter() - t0:.0f} s)", flush=True)
    g = {k: np.array(v) for k, v in allg.items()}
    print(f"\nGPTune demo, t in [0, 1.5]: {args.tasks} training tasks x {args.seeds} seeds "
          f"({args.first_seed}..{args.first_seed + args.seeds - 1}), "
          f"budget 20 per task (10 LHS + 10 guided); gap = best found - true optimum")
    print(f"{'method':<16} {'median gap':>11} {'mean gap':>9} {'max gap':>8}")
    for k, label in (("mla", "MLA"), ("gp-ei", "single GP-EI"), ("random", "random (20)")):
        print(f"{label:<16} {np.median(g[k]):>11.4f} {g[k].mean():>9.4f} {g[k].max():>8.4f}")
    n = len(g["mla"])
    print(f"MLA better than random on {np.mean(g['mla'] < g['random']):.0%} of {n} "
          f"(task, seed) pairs (target >= 80%); better than GP-EI on "
          f"{np.mean(g['mla'] < g['gp-ei']):.0%}; ties with random {np.mean(g['mla'] == g['random']):.0%}")
    print(f"MLA median gap {'<' if np.median(g['mla']) < np.median(g['gp-ei']) else '>='} "
          f"single-task GP-EI median gap (target <)")
    print(f"\nTransfer: {args.new} new tasks x {args.seeds} seeds")
    for k, label in (("tla1", "TLA1 (0 evals)"), ("tla2", "TLA2 (5 evals)"),
                     ("random5", "random (5)")):
        print(f"{label:<16} {np.median(g[k]):>11.4f} {g[k].mean():>9.4f} {g[k].max():>8.4f}")
    print(f"TLA2 better than random (5) on {np.mean(g['tla2'] < g['random5']):.0%} of "
          f"{len(g['tla2'])} (task, seed) pairs (target >= 80%); TLA1 better than random (5) on "
          f"{np.mean(g['tla1'] < g['random5']):.0%}")
    print(f"total {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
