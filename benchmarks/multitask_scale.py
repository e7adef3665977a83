"""MLA and transfer at many tasks: time per round and quality, 50 against 200 training tasks.

Per task count (``--tasks``) and seed: that many training tasks by Latin hypercube over the GPTune
demo function's task space, t in [0, 1.5] (design seed = the seed), MLA with the paper split
(``--budget`` 20, ``--initial`` 12, its defaults otherwise: the joint model, which above
:data:`propulate.models.joint_local.DENSE_MAX` points fits its hyperparameters on a subsample and
predicts each task from its neighbourhood of tasks). Every model-guided round prints the seconds
of its model fit and of its acquisition searches (all tasks). Then transfer to ``--new`` new
tasks (design seed = seed + 1000): the joint model refitted on all MLA points (warm-started from
MLA's last fit), TLA1 (0 evaluations) and TLA2 (5), and random search (5) for reference.

Prints per task count the median gap of MLA on the training tasks (true loss of its best
configuration minus the true optimum; stuck: gap > 0.05) and of TLA1 / TLA2 / random (5) on the
new tasks, and the seconds (wall and CPU: the machine is shared, and the run uses one core) of
MLA and of transfer, with the machine's load average.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/multitask_scale.py --tasks 50 200 --seeds 300
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from functions import default_tmp  # noqa: E402
from mla_demo import SPACE, TASKS  # noqa: E402
from multitask import tune_task  # noqa: E402

from propulate.models import loop as loop_module  # noqa: E402
from propulate.models import mla as mla_module  # noqa: E402
from propulate.models.joint_gp import JointGP  # noqa: E402
from propulate.models.joint_transfer import joint_base, joint_tla1, run_joint_tla2  # noqa: E402
from propulate.models.sampling import sample_tasks, training_set_from_runs  # noqa: E402
from propulate.problems.demo import demo_loss, demo_true_optimum  # noqa: E402
from propulate.settings import LCMSettings, MLASettings  # noqa: E402


class RoundClock:
    """Seconds of each round's model fit and acquisition searches in MLA's loop (a round
    starts with a fit of the joint model hook)."""

    def __init__(self) -> None:
        self.rounds: list[dict[str, float]] = []

    def report(self) -> None:
        """Print the last round's times (when a round ends: at the next fit, or at the end)."""
        if self.rounds and "printed" not in self.rounds[-1]:
            r = self.rounds[-1]
            r["printed"] = 1
            print(
                f"  round {len(self.rounds)}: {r['points']:.0f} points, fit {r['fit']:.1f} s "
                f"({r['fit_cpu']:.1f} s CPU), acquisition {r['acquisition']:.1f} s "
                f"({r['acquisition_cpu']:.1f} s CPU), load {os.getloadavg()[0]:.1f}",
                flush=True,
            )

    def install(self) -> Callable[[], None]:
        """Wrap the joint model hook and the loop's ``propose``; returns the undo."""
        real_fitter, real_propose = mla_module.joint_fitter, loop_module.propose

        def fitter(*args: Any, **kwargs: Any) -> Any:
            hook = real_fitter(*args, **kwargs)

            def timed(*a: Any) -> Any:
                self.report()
                t, c = time.perf_counter(), time.process_time()
                model = hook(*a)
                self.rounds.append(
                    {
                        "fit": time.perf_counter() - t,
                        "fit_cpu": time.process_time() - c,
                        "acquisition": 0.0,
                        "acquisition_cpu": 0.0,
                        "points": len(model.y),
                    }
                )
                return model

            return timed

        def propose(*args: Any, **kwargs: Any) -> Any:
            t, c = time.perf_counter(), time.process_time()
            try:
                return real_propose(*args, **kwargs)
            finally:
                if self.rounds:
                    self.rounds[-1]["acquisition"] += time.perf_counter() - t
                    self.rounds[-1]["acquisition_cpu"] += time.process_time() - c

        mla_module.joint_fitter, loop_module.propose = fitter, propose

        def undo() -> None:
            mla_module.joint_fitter, loop_module.propose = real_fitter, real_propose

        return undo


def one(n_tasks: int, seed: int, args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """MLA on ``n_tasks`` and transfer to the new tasks: gaps, rounds, seconds."""
    values = sample_tasks(TASKS, n_tasks, seed)
    tasks = [(f"train{i:03d}", t) for i, t in enumerate(values)]
    clock = RoundClock()
    undo = clock.install()
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        summaries = mla_module.run_mla(
            SPACE,
            demo_loss,
            tasks,
            work / "mla",
            MLASettings(budget=args.budget, initial=args.initial, seed=seed),
            LCMSettings(),
            task_space=TASKS,
        )
    finally:
        undo()
    clock.report()
    t_mla, c_mla = time.perf_counter() - t0, time.process_time() - c0
    by_id = dict(tasks)
    mla_gaps = [s.best_loss - demo_true_optimum(by_id[s.task]["t"])[1] for s in summaries]
    t1, c1 = time.perf_counter(), time.process_time()
    data = training_set_from_runs([work / "mla" / tid for tid, _ in tasks], SPACE)
    last = JointGP.load(work / "mla" / "model.json").get_theta()
    joint = joint_base(data, SPACE, TASKS, seed=seed, start=last)
    t_fit = time.perf_counter() - t1
    gaps: dict[str, list[float]] = {"tla1": [], "tla2": [], "random5": []}
    for j, task in enumerate(sample_tasks(TASKS, args.new, seed + 1000)):
        f_star = demo_true_optimum(task["t"])[1]
        tid = f"new{j:02d}"
        gaps["tla1"].append(
            demo_loss(joint_tla1(joint, SPACE, TASKS, task, seed)[0], task) - f_star
        )
        s = run_joint_tla2(joint, SPACE, TASKS, tid, task, demo_loss, work / tid, 5, 2, seed)[0]
        gaps["tla2"].append(s.best_loss - f_star)
        _, loss = tune_task("random", demo_loss, SPACE, tid, task, work / f"r-{tid}", seed, 5)
        gaps["random5"].append(float(loss) - f_star)
    t_transfer, c_transfer = time.perf_counter() - t1, time.process_time() - c1
    return {
        "tasks": n_tasks,
        "seed": seed,
        "mla": mla_gaps,
        **gaps,
        "mla_seconds": t_mla,
        "mla_cpu": c_mla,
        "transfer_seconds": t_transfer,
        "transfer_cpu": c_transfer,
        "transfer_fit_seconds": t_fit,
        "rounds": clock.rounds,
        "load": os.getloadavg()[0],
    }


def main() -> None:
    """Run each task count and seed, then print the comparison."""
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--tasks", type=int, nargs="+", default=[50, 200])
    ap.add_argument("--seeds", type=int, nargs="+", default=[300])
    ap.add_argument("--new", type=int, default=10, help="new tasks per seed")
    ap.add_argument("--budget", type=int, default=20)
    ap.add_argument("--initial", type=int, default=12)
    ap.add_argument("--tmp", default=default_tmp())
    args = ap.parse_args()
    records = []
    for n_tasks in args.tasks:
        for seed in args.seeds:
            work = Path(tempfile.mkdtemp(prefix="mla-scale-", dir=args.tmp))
            try:
                records.append(one(n_tasks, seed, args, work))
            finally:
                shutil.rmtree(work, ignore_errors=True)
            r = records[-1]
            print(
                f"{n_tasks} tasks, seed {seed}: MLA {r['mla_seconds']:.0f} s "
                f"({r['mla_cpu']:.0f} s CPU), transfer {r['transfer_seconds']:.0f} s "
                f"({r['transfer_cpu']:.0f} s CPU; {args.new} new tasks, joint fit "
                f"{r['transfer_fit_seconds']:.1f} s), load {r['load']:.1f}",
                flush=True,
            )
    print(
        f"\n{'tasks':>5} {'MLA median gap':>15} {'stuck':>6} {'TLA1':>7} {'TLA2 (5)':>9} "
        f"{'random (5)':>11} {'TLA2>random':>12} {'MLA s':>6} {'transfer s':>11} "
        f"{'fit s/round':>12} {'acq. s/round':>13}   (seconds: CPU)"
    )
    for n_tasks in args.tasks:
        rs = [r for r in records if r["tasks"] == n_tasks]
        g = {k: np.concatenate([r[k] for r in rs]) for k in ("mla", "tla1", "tla2", "random5")}
        rounds = [x for r in rs for x in r["rounds"]]
        print(
            f"{n_tasks:>5} {np.median(g['mla']):>15.4f} {np.mean(g['mla'] > 0.05):>6.0%} "
            f"{np.median(g['tla1']):>7.4f} {np.median(g['tla2']):>9.4f} "
            f"{np.median(g['random5']):>11.4f} {np.mean(g['tla2'] < g['random5']):>12.0%} "
            f"{np.mean([r['mla_cpu'] for r in rs]):>6.0f} "
            f"{np.mean([r['transfer_cpu'] for r in rs]):>11.0f} "
            f"{np.mean([x['fit_cpu'] for x in rounds]):>12.1f} "
            f"{np.mean([x['acquisition_cpu'] for x in rounds]):>13.1f}"
        )


if __name__ == "__main__":
    main()
