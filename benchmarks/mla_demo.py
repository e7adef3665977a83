"""MLA, single-task GP-EI and random search on the GPTune demo function; then TLA1 / TLA2.

For each task set (``--sets``: numbers of training tasks) and each seed: the training tasks by
Latin hypercube over t in [0, 1.5] (design seed = the seed), ``--budget`` evaluations per task
(``--initial`` Latin-hypercube samples + model-guided ones) for MLA (one LCM over all tasks,
Q = 3, every point kept) and for single-task GP-EI (the same loop and initial design size, one
task at a time, a one-task model), and as many uniform random evaluations. A task's gap is its
best loss minus the true optimum (dense grid, ``demo_true_optimum``); a gap above 0.05 counts as
stuck in a local minimum. Then ``--new`` new tasks in the same range (design seed = seed + 100):
TLA1 (0 evaluations: the gap of its prediction), TLA2 with 5 evaluations (from an LCM refitted
on all MLA data), single-task GP-EI with 5 (3 Latin-hypercube + 2 guided) and random with 5.
"Better" is strictly smaller gap on the same (task, seed) pair.

    .venv/bin/python benchmarks/mla_demo.py [--sets 4 8 10] [--seeds 15] [--first-seed 0]

Development used seeds 0-4; seeds from 100 on were kept for checking (``--first-seed 100``).
Every run is deterministic: the same command prints the same gaps on any load.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from multitask import gp_ei_run  # noqa: E402

from propulate.models.mla import run_mla  # noqa: E402
from propulate.models.sampling import build_lcm, sample_tasks, training_set_from_runs  # noqa: E402
from propulate.models.transfer import run_tla2, tla1  # noqa: E402
from propulate.problems.demo import demo_loss, demo_true_optimum  # noqa: E402
from propulate.settings import LCMSettings, MLASettings, TransferSettings  # noqa: E402
from propulate.space import SearchSpace  # noqa: E402

SPACE = SearchSpace({"x": (0.0, 1.0)})
TASKS = SearchSpace({"t": (0.0, 1.5)})
#: A gap above this counts as stuck in a local minimum.
STUCK = 0.05
METHODS = ("mla", "gp-ei", "random", "tla1", "tla2", "gp-ei5", "random5")


def random_gap(task: dict, n: int, rng: np.random.Generator, f_star: float) -> float:
    """Gap of the best of ``n`` uniform random evaluations."""
    return min(demo_loss({"x": float(x)}, task) for x in rng.random(n)) - f_star


def gp_ei(tid: str, task: dict, out: Path, budget: int, initial: int, seed: int) -> float:
    """Best loss of single-task GP-EI (a one-task LCM) on one task."""
    return gp_ei_run(SPACE, demo_loss, tid, task, out, budget, initial, seed).best_loss


def one_seed(
    seed: int,
    n_tasks: int,
    n_new: int,
    budget: int,
    initial: int,
    work: Path,
    fixed: list[float] | None = None,
) -> dict[str, list[float]]:
    """All gaps of one seed and task set (or of the ``fixed`` task values), by method."""
    rng = np.random.default_rng(1000 + seed)
    values = [{"t": t} for t in fixed] if fixed else sample_tasks(TASKS, n_tasks, seed)
    tasks = [(f"train{i:02d}", t) for i, t in enumerate(values)]
    opt = {tid: demo_true_optimum(t["t"])[1] for tid, t in tasks}
    gaps: dict[str, list[float]] = {k: [] for k in METHODS}
    out = work / f"mla{seed}"
    # the LCM: the figures recorded from this script predate MLA's joint model (mla_paper.py
    # and mla_variant.py measure that one)
    mla = MLASettings(budget=budget, initial=initial, seed=seed, model="lcm")
    lcm = LCMSettings(latent=3, restarts=2, max_points=None)
    for s in run_mla(SPACE, demo_loss, tasks, out, mla, lcm, task_space=TASKS):
        gaps["mla"].append(s.best_loss - opt[s.task])
    for tid, task in tasks:
        gaps["gp-ei"].append(gp_ei(tid, task, work / f"gp{seed}", budget, initial, seed) - opt[tid])
        gaps["random"].append(random_gap(task, budget, rng, opt[tid]))
    data = training_set_from_runs([out / tid for tid, _ in tasks], SPACE)
    model = build_lcm(data, SPACE, TASKS, latent=3, max_points=None).fit(restarts=2, seed=seed)
    for j, task in enumerate(sample_tasks(TASKS, n_new, seed + 100)):
        f_star = demo_true_optimum(task["t"])[1]
        pred, _ = tla1(model, SPACE, TASKS, task, seed)
        gaps["tla1"].append(demo_loss(pred, task) - f_star)
        s = run_tla2(
            model,
            SPACE,
            TASKS,
            f"new{j:02d}",
            task,
            demo_loss,
            work / f"tla2-{seed}-{j}",
            TransferSettings(tla2_budget=5, seed=seed),
        )[0]
        gaps["tla2"].append(s.best_loss - f_star)
        gaps["gp-ei5"].append(gp_ei(f"new{j:02d}", task, work / f"gp5-{seed}", 5, 3, seed) - f_star)
        gaps["random5"].append(random_gap(task, 5, rng, f_star))
    return gaps


def labels(budget: int) -> dict[str, str]:
    """Method key to its label in the tables, in table order."""
    return {
        "mla": "MLA",
        "gp-ei": "single GP-EI",
        "random": f"random ({budget})",
        "tla1": "TLA1 (0 evals)",
        "tla2": "TLA2 (5 evals)",
        "gp-ei5": "GP-EI (5)",
        "random5": "random (5)",
    }


def target_values(g: dict[str, np.ndarray]) -> dict[str, float]:
    """The measured figures of :data:`TARGETS`: shares of pairs where the first method's gap is
    strictly smaller, and MLA's stuck rate."""
    return {
        "mla_vs_gp_ei": float(np.mean(g["mla"] < g["gp-ei"])),
        "mla_stuck": float(np.mean(g["mla"] > STUCK)),
        "tla1_vs_random5": float(np.mean(g["tla1"] < g["random5"])),
        "tla2_vs_random5": float(np.mean(g["tla2"] < g["random5"])),
        "tla2_vs_gp_ei5": float(np.mean(g["tla2"] < g["gp-ei5"])),
    }


def report(n_tasks: int, seeds: range, budget: int, initial: int, g: dict[str, np.ndarray]) -> None:
    """Print one task set's table."""
    n, m = len(g["mla"]), len(g["tla1"])
    print(
        f"\n== {n_tasks} training tasks, t in [0, 1.5], seeds {seeds.start}..{seeds.stop - 1}, "
        f"budget {budget} per task ({initial} LHS + {budget - initial} guided); {n} pairs"
    )
    print(f"{'method':<16} {'median gap':>11} {'mean gap':>9} {'max gap':>8} {'stuck':>6}")
    for k, label in labels(budget).items():
        v = g[k]
        print(
            f"{label:<16} {np.median(v):>11.4f} {v.mean():>9.4f} {v.max():>8.4f} "
            f"{np.mean(v > STUCK):>6.0%}"
        )
    v = target_values(g)
    print(
        f"MLA better than GP-EI on {v['mla_vs_gp_ei']:.0%} of {n} pairs (target >= 65%), "
        f"than random on {np.mean(g['mla'] < g['random']):.0%}; MLA stuck (gap > {STUCK}) on "
        f"{v['mla_stuck']:.0%} (target <= 10%)"
    )
    print(
        f"new tasks ({m} pairs): TLA1 better than random (5) on "
        f"{v['tla1_vs_random5']:.0%} (target >= 70%); TLA2 better than random (5) on "
        f"{v['tla2_vs_random5']:.0%} (>= 90%), than GP-EI (5) on "
        f"{v['tla2_vs_gp_ei5']:.0%} (>= 80%)"
    )


#: Targets of the shares of won pairs (and of the stuck rate), by key of :func:`set_json`.
TARGETS = {
    "mla_vs_gp_ei": ("MLA better than single GP-EI", 0.65, "higher"),
    "mla_stuck": ("MLA stuck in a local minimum (gap > 0.05)", 0.10, "lower"),
    "tla1_vs_random5": ("TLA1 better than random (5)", 0.70, "higher"),
    "tla2_vs_random5": ("TLA2 (5) better than random (5)", 0.90, "higher"),
    "tla2_vs_gp_ei5": ("TLA2 (5) better than GP-EI (5)", 0.80, "higher"),
}


def set_json(n_tasks: int, seeds: range, budget: int, g: dict[str, np.ndarray]) -> dict:
    """One task set's table and target lines in the report's benchmark format."""
    names = labels(budget)
    rows = [
        [
            names[k],
            float(np.median(g[k])),
            float(g[k].mean()),
            float(g[k].max()),
            f"{np.mean(g[k] > STUCK):.0%}",
        ]
        for k in METHODS
    ]
    values = target_values(g)
    caption = (
        f"{n_tasks} training tasks, seeds {seeds.start}..{seeds.stop - 1}: "
        f"{len(g['mla'])} training and {len(g['tla1'])} new (task, seed) pairs"
    )
    table = {
        "caption": caption,
        "columns": ["method", "median gap", "mean gap", "max gap", "stuck"],
        "rows": rows,
    }
    targets = [
        {
            "caption": f"{n_tasks} tasks: {text}",
            "value": round(float(values[k]), 4),
            "target": goal,
            "better": better,
        }
        for k, (text, goal, better) in TARGETS.items()
    ]
    return {"table": table, "targets": targets}


def write_json(path: str, sets: list[dict]) -> None:
    """The benchmark file a campaign report shows (config key ``report.benchmarks``)."""
    import json
    import shlex
    import subprocess
    import sys
    from datetime import UTC, datetime

    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    data = {
        "title": "Multitask quality on the GPTune demo function",
        "command": "python " + shlex.join(["benchmarks/mla_demo.py", *sys.argv[1:]]),
        "commit": commit,
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "note": (
            "Gap = best loss minus the true optimum; MLA, single-task GP-EI and random search "
            "spend the same budget per training task; TLA1, TLA2 (5 evaluations), GP-EI (5) and "
            "random (5) run on new tasks. A share is the fraction of (task, seed) pairs on which "
            "the first method's gap is strictly smaller."
        ),
        "tables": [s["table"] for s in sets],
        "targets": [t for s in sets for t in s["targets"]],
    }
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def main() -> None:
    """Run the benchmark and print one table per task set."""
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--sets",
        type=int,
        nargs="+",
        default=[4, 8, 10],
        help="numbers of training tasks, one task set each",
    )
    ap.add_argument("--seeds", type=int, default=15, help="number of seeds")
    ap.add_argument(
        "--first-seed", type=int, default=0, help="seeds first-seed .. first-seed+seeds-1"
    )
    ap.add_argument("--new", type=int, default=5, help="new tasks per seed")
    ap.add_argument("--budget", type=int, default=20, help="evaluations per training task")
    ap.add_argument("--initial", type=int, default=10, help="initial LHS samples per task")
    ap.add_argument(
        "--fixed",
        type=float,
        nargs="+",
        help="one task set of these t values instead of --sets (e.g. 0 0.5)",
    )
    ap.add_argument(
        "--json",
        metavar="FILE",
        help="also write the tables for a campaign report (report.benchmarks)",
    )
    args = ap.parse_args()
    sets: list[dict] = []
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    t0 = time.perf_counter()
    for n_tasks in [len(args.fixed)] if args.fixed else args.sets:
        allg: dict[str, list[float]] = {k: [] for k in METHODS}
        with tempfile.TemporaryDirectory() as tmp:
            for seed in seeds:
                gaps = one_seed(
                    seed, n_tasks, args.new, args.budget, args.initial, Path(tmp), args.fixed
                )
                for k, v in gaps.items():
                    allg[k].extend(v)
                print(
                    f"set {n_tasks}, seed {seed}: MLA gaps "
                    f"{' '.join(f'{x:.4f}' for x in gaps['mla'])} "
                    f"({time.perf_counter() - t0:.0f} s)",
                    flush=True,
                )
        arrays = {k: np.array(v) for k, v in allg.items()}
        report(n_tasks, seeds, args.budget, args.initial, arrays)
        sets.append(set_json(n_tasks, seeds, args.budget, arrays))
    if args.json:
        write_json(args.json, sets)
        print("tables:", args.json)
    print(f"total {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
