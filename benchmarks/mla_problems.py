"""The problems of ``benchmarks/mla_paper.py``: the GPTune demo function, its two-objective
form scalarised by weights (``demo-pair``), and the matmul program of ``examples/command``."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from mla_demo import SPACE as DEMO_SPACE
from mla_demo import TASKS
from multitask import Stopwatch

from propulate.problems.demo import demo_function, demo_loss, demo_true_optimum
from propulate.problems.pairs import demo_pair
from propulate.runs.declared_objectives import Objectives
from propulate.space import Params, SearchSpace

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "command"


@dataclass
class Problem:
    """A multitask problem: spaces, objective, and whether runtimes (paired, log model)."""

    name: str
    space: SearchSpace
    task_space: SearchSpace
    objective: Callable[..., Any]
    program: bool = False
    default: Params | None = None
    objectives: Objectives | None = None  # what MLA and TLA2 read ``returns``' values as
    returns: Callable[..., Any] | None = None  # the objective with declared objectives

    def model_objective(self, watch: Stopwatch) -> Callable[..., Any]:
        """The objective MLA and TLA2 call (with :attr:`objectives`), timed."""
        return watch.objective(self.returns or self.objective)

    def true_loss(self, params: Params, task: dict) -> float:
        """The loss every method is scored by (demo problems: the objective itself, the
        weighted sum with objectives)."""
        return float(self.objective(params, task))

    def true_optimum(self, t: float) -> float:
        """The least :meth:`true_loss` of task ``t`` (dense grid, refined; demo problems)."""
        if self.objectives is None:
            return demo_true_optimum(t)[1]
        from scipy.optimize import minimize_scalar

        xs = np.linspace(0.0, 1.0, 400_001)
        at = {"t": t}
        w = dict(zip(self.objectives.names, self.objectives.weights or (), strict=True))
        grid = w["loss"] * demo_function(t, xs) + w["cost"] * xs
        i = int(np.argmin(grid))
        lo, hi = xs[max(i - 1, 0)], xs[min(i + 1, len(xs) - 1)]
        best = minimize_scalar(lambda x: self.true_loss({"x": x}, at), bounds=(lo, hi))
        return float(min(grid[i], best.fun))


def make_problem(name: str, weights: str = "loss=1,cost=0.2") -> Problem:
    """The ``demo``, ``demo-pair`` or ``matmul`` problem (the latter builds the program)."""
    if name == "demo":
        return Problem("demo", DEMO_SPACE, TASKS, demo_loss)
    if name == "demo-pair":
        declared = Objectives.parse("loss:min,cost:min", weights)
        scalar = lambda prm, task: declared.loss_of(demo_pair(prm, task))  # noqa: E731
        return Problem("demo-pair", DEMO_SPACE, TASKS, scalar, False, None, declared, demo_pair)
    from propulate.user_objective import Command

    subprocess.run(["make", "-s", "-C", str(EXAMPLE)], check=True)
    cfg = yaml.safe_load((EXAMPLE / "campaign.yaml").read_text())
    cmd = Command.from_config({**cfg["objective"], "workdir": str(EXAMPLE)})
    space, tasks = SearchSpace(cfg["parameters"]), SearchSpace(cfg["task_space"])
    return Problem("matmul", space, tasks, cmd, True, cfg["default"])
