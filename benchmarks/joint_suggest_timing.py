"""How long the joint model's prediction for an unseen task takes, by the model's size.

``suggest`` answers an unseen task of a campaign that transfers on the joint model with
:func:`propulate.transfer.joint_posterior.tla1_prediction` on the stored model. This times that
call on a joint model of ``--tasks`` tasks x ``--points`` evaluations (one parameter, one task
value; a function whose optimum moves with the task, fixed hyperparameters: the cost depends on
the number of points only), with the band's calibration stored in the model (as ``tuningdb
update`` stores it) and without (a database of an older version: computed on each call)::

    python benchmarks/joint_suggest_timing.py --tasks 50 --points 20 --repeats 3

Prints the median wall seconds of each, and checks that both give the same answer.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import numpy as np

from propulate.space import Float, SearchSpace
from propulate.transfer.joint_posterior import JointPosterior, tla1_prediction

SPACE = SearchSpace({"x": Float(0.0, 1.0)})
TASKS = SearchSpace({"t": Float(0.0, 1.0)})


def joint_data(tasks: int, points: int, seed: int = 0) -> dict[str, Any]:
    """A joint model's stored data: ``tasks`` tasks at t in [0, 1], ``points`` each."""
    rng = np.random.default_rng(seed)
    U = np.linspace(0.0, 1.0, tasks)[:, None]
    X = rng.random((points * tasks, 1))
    index = np.repeat(np.arange(tasks), points)
    y = np.sin(8.0 * (X[:, 0] - 0.3 * U[index, 0])) + 0.05 * rng.standard_normal(len(X))
    theta = np.log([0.3, 0.15, 1.0, 1e-3])  # lengthscales (task, x), variance, noise
    return {
        "U": U.tolist(),
        "X": X.tolist(),
        "task_index": index.tolist(),
        "y": y.tolist(),
        "log_output": False,
        "theta": theta.tolist(),
    }


def timed(data: dict[str, Any], task: dict[str, float], repeats: int) -> tuple[float, Any]:
    """Median seconds of ``repeats`` predictions for ``task``, and the last answer."""
    seconds, out = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        out = tla1_prediction(data, SPACE, TASKS, task, 0, [])
        seconds.append(time.perf_counter() - t)
    return statistics.median(seconds), out


def main() -> None:
    """Time the prediction with and without the stored calibration."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tasks", type=int, default=50, help="training tasks")
    parser.add_argument("--points", type=int, default=20, help="evaluations per task")
    parser.add_argument("--repeats", type=int, default=3, help="predictions timed per case")
    args = parser.parse_args()
    data = joint_data(args.tasks, args.points)
    t = time.perf_counter()
    band = JointPosterior(data).calibration()
    calibrate = time.perf_counter() - t
    task = {"t": 0.37}
    stored, answer = timed({**data, "band": band}, task, args.repeats)
    computed, again = timed(data, task, args.repeats)
    n = args.tasks * args.points
    print(f"joint model of {args.tasks} tasks x {args.points} = {n} points")
    print(f"posterior and band calibration (tuningdb update): {calibrate:.2f} s")
    print(f"tla1_prediction, calibration stored:   median {stored:.2f} s")
    print(f"tla1_prediction, calibration computed: median {computed:.2f} s")
    print(f"same answer: {answer == again}")


if __name__ == "__main__":
    main()
