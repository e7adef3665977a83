"""How far transfer to a new task can go on the demo function: exact chances against random (5).

``benchmarks/transfer_joint.py`` scores each new task against one draw of random search with 5
evaluations. This script replaces that draw by its exact chance: for a configuration of loss
``l`` on task ``t``, random search (5) ends worse with probability ``(1 - F_t(l))^5``, where
``F_t`` is the share of ``x`` in [0, 1] with ``f(t, x) <= l`` (a grid of 200,001 points). Averaged
over the new tasks of many seeds it is the method's expected share of wins against random (5),
without the noise of one draw per task (the share the targets of issue 48 count).

Per seed as in ``transfer_joint.py``: 8 training tasks (``--tasks``) by Latin hypercube over t in
[0, 1.5] tuned by MLA 12 + 8 (the joint model), the joint transfer model fitted on them, 4 new
tasks. Each new task is scored for:

* ``tla1``: TLA1 on the joint model (no evaluation);
* ``nearest``, ``best2``, ``best5``, ``best8``: the nearest training task's optimum; the best of
  the 2, 5 or 8 nearest training optima (as many evaluations);
* ``best3``: the best of TLA2's first three evaluations (TLA1, the two nearest optima);
* ``tla2``: TLA2 on the joint model, 5 evaluations (:func:`run_joint_tla2`);
* ``refine_best3`` and ``refine_all3``, two bounds no method reaches with 5 evaluations: the
  new task's local minimum in the basin of the best of those three (found by walking downhill
  on the grid), and the best of the three basins' local minima.

    OMP_NUM_THREADS=1 python benchmarks/transfer_bounds.py --seeds 0-29

About 6 s per seed on one core.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from functions import default_tmp  # noqa: E402
from mla_demo import SPACE, TASKS  # noqa: E402

from propulate.models.joint_gp import JointGP  # noqa: E402
from propulate.models.joint_transfer import (  # noqa: E402
    joint_base,
    joint_tla1,
    nearest_joint_optima,
    run_joint_tla2,
)
from propulate.models.mla import run_mla  # noqa: E402
from propulate.models.sampling import sample_tasks, training_set_from_runs  # noqa: E402
from propulate.problems.demo import demo_function, demo_loss  # noqa: E402
from propulate.settings import LCMSettings, MLASettings, TransferSettings  # noqa: E402

GRID = np.linspace(0.0, 1.0, 200_001)


@dataclass(frozen=True)
class NewTask:
    """A new task, with what every method's score reads, computed once: its landscape on
    :data:`GRID` and TLA2's first three configurations (the TLA1 prediction, then the two
    nearest training optima)."""

    task: dict[str, Any]
    landscape: np.ndarray
    first_three: list[dict[str, Any]]

    @classmethod
    def of(cls, joint: JointGP, task: dict[str, Any], seed: int) -> NewTask:
        """``task``'s landscape and TLA2's first three configurations on ``joint``."""
        three = [
            joint_tla1(joint, SPACE, TASKS, task, seed)[0],
            *nearest_joint_optima(joint, SPACE, TASKS, task)[:2],
        ]
        return cls(task, demo_function(float(task["t"]), GRID), three)

    def loss(self, params: dict[str, Any]) -> float:
        """The task's loss at ``params``."""
        return demo_loss(params, self.task)

    def chance_against_random(self, loss: float, draws: int = 5) -> float:
        """Probability that random search with ``draws`` evaluations ends worse than ``loss``."""
        return float(np.mean(self.landscape > loss)) ** draws

    def basin_minimum(self, x: float) -> float:
        """The least loss in the basin holding ``x`` (downhill walk on the grid)."""
        f = self.landscape
        i = int(round(x * (len(GRID) - 1)))
        while True:
            step = (
                -1 if i > 0 and f[i - 1] < f[i] else 1 if i < len(f) - 1 and f[i + 1] < f[i] else 0
            )
            if not step:
                return float(f[i])
            while 0 <= i + step < len(f) and f[i + step] < f[i]:
                i += step


#: Method name -> (joint model, new task, seed, work folder) -> the loss it ends with.
Method = Callable[[JointGP, NewTask, int, Path], float]


def best_of_nearest(k: int) -> Method:
    """The best of the ``k`` nearest training tasks' optima."""

    def method(joint: JointGP, new: NewTask, seed: int, work: Path) -> float:
        return min(map(new.loss, nearest_joint_optima(joint, SPACE, TASKS, new.task)[:k]))

    return method


def tla1(joint: JointGP, new: NewTask, seed: int, work: Path) -> float:
    """TLA1 on the joint model."""
    return new.loss(new.first_three[0])


def best3(joint: JointGP, new: NewTask, seed: int, work: Path) -> float:
    """The best of TLA2's first three evaluations."""
    return min(map(new.loss, new.first_three))


def tla2(joint: JointGP, new: NewTask, seed: int, work: Path) -> float:
    """TLA2 on the joint model, 5 evaluations."""
    share = TransferSettings.tla2_share
    run = run_joint_tla2(joint, SPACE, TASKS, "new", new.task, demo_loss, work, 5, share, seed)
    return float(run[0].best_loss)


def refine_best3(joint: JointGP, new: NewTask, seed: int, work: Path) -> float:
    """Bound: the local minimum of the basin of the best of the first three."""
    return new.basin_minimum(float(min(new.first_three, key=new.loss)["x"]))


def refine_all3(joint: JointGP, new: NewTask, seed: int, work: Path) -> float:
    """Bound: the best local minimum of the three basins."""
    return min(new.basin_minimum(float(p["x"])) for p in new.first_three)


METHODS: dict[str, Method] = {
    "tla1": tla1,
    "nearest": best_of_nearest(1),
    "best2": best_of_nearest(2),
    "best3": best3,
    "best5": best_of_nearest(5),
    "best8": best_of_nearest(8),
    "tla2": tla2,
    "refine_best3": refine_best3,
    "refine_all3": refine_all3,
}
EVALUATIONS = {"tla1": 0, "nearest": 1, "best2": 2, "best3": 3, "best5": 5, "best8": 8, "tla2": 5}


def one_seed(seed: int, tmp: str | None, n_tasks: int = 8) -> dict[str, list[float]]:
    """Each method's chance against random (5) on the 4 new tasks of one seed, with
    ``n_tasks`` training tasks."""
    work = Path(tempfile.mkdtemp(prefix="transfer-bounds-", dir=tmp))
    try:
        values = sample_tasks(TASKS, n_tasks, seed)
        tasks = [(f"train{i:02d}", t) for i, t in enumerate(values)]
        mla = MLASettings(budget=20, initial=12, seed=seed)
        run_mla(SPACE, demo_loss, tasks, work / "mla", mla, LCMSettings(latent=3), task_space=TASKS)
        data = training_set_from_runs([work / "mla" / tid for tid, _ in tasks], SPACE)
        last = JointGP.load(work / "mla" / "model.json").get_theta()
        joint = joint_base(data, SPACE, TASKS, seed=seed, start=last)
        out: dict[str, list[float]] = {name: [] for name in METHODS}
        for j, task in enumerate(sample_tasks(TASKS, 4, seed + 1000)):
            new = NewTask.of(joint, task, seed)
            for name, method in METHODS.items():
                loss = method(joint, new, seed, work / f"{name}-{j}")
                out[name].append(new.chance_against_random(loss))
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


def seed_range(text: str) -> list[int]:
    """``"0-29"`` or ``"5"`` as a list of seeds."""
    first, _, last = text.partition("-")
    return list(range(int(first), int(last or first) + 1))


def main() -> None:
    """Run the seeds and print each method's mean chance and its spread over seeds."""
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--seeds", type=seed_range, default=seed_range("0-29"), help="e.g. 0-29")
    ap.add_argument("--tasks", type=int, default=8, help="training tasks per seed")
    ap.add_argument("--tmp", default=default_tmp())
    args = ap.parse_args()
    per_seed = [one_seed(seed, args.tmp, args.tasks) for seed in args.seeds]
    n = sum(len(r["tla1"]) for r in per_seed)
    print(
        f"seeds {args.seeds[0]}-{args.seeds[-1]}, {args.tasks} training tasks: {n} new tasks;"
        " chance against random (5)"
    )
    print(f"{'method':<13} {'evaluations':>11} {'mean':>6} {'per seed min..max':>18}")
    for name in METHODS:
        seeds = [float(np.mean(r[name])) for r in per_seed]
        mean = float(np.mean([c for r in per_seed for c in r[name]]))
        evals = EVALUATIONS.get(name, "bound")
        print(f"{name:<13} {evals!s:>11} {mean:6.3f} {min(seeds):8.2f}..{max(seeds):.2f}")


if __name__ == "__main__":
    main()
