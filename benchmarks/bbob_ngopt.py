"""Nevergrad's NGOpt on COCO ``bbob`` problems: the ``ngopt`` reference method of :mod:`bbob`.

Nevergrad needs ``numpy < 2.3``, older than the project's, so :mod:`bbob` runs this script with
the interpreter of a venv of its own (``bbob.py --ngopt-python``), which needs only
``nevergrad``, ``numpy < 2.3`` and ``coco-experiment``::

    python3.11 -m venv /tmp/ngvenv
    /tmp/ngvenv/bin/pip install nevergrad 'numpy<2.3' coco-experiment

It imports neither propulate nor :mod:`bbob`. Its one argument is a JSON list of problems
``[function, instance, dim, budget, f_opt, seed]``; for each it prints one JSON line
``{"function", "instance", "values", "seconds"}``: the function value of every evaluation in
order. NGOpt runs with ``num_workers=1`` on ``[-5, 5]^dim``, ``budget`` evaluations, and stops
early once ``f - f_opt <= 1e-8`` (the last of COCO's targets), as the other reference methods.
"""

from __future__ import annotations

import json
import sys
import time
import warnings
from typing import Any

import numpy as np

#: COCO's last target: a problem is solved once ``f - f_opt`` is this small.
SOLVED = 1e-8


def run_ngopt(
    function: int, instance: int, dim: int, budget: int, fopt: float, seed: int
) -> list[float]:
    """The function values of NGOpt's evaluations of one ``bbob`` problem, in order.

    Parameters
    ----------
    function, instance, dim : int
        The ``bbob`` problem.
    budget : int
        At most this many evaluations.
    fopt : float
        The problem's optimal value (to stop once solved).
    seed : int
        Seeds the parametrization's random state and numpy's global one (NGOpt draws from both).
    """
    import cocoex
    import nevergrad as ng

    suite = cocoex.Suite("bbob", f"instances: {instance}", f"dimensions: {dim}")
    problem = suite.get_problem_by_function_dimension_instance(function, dim, instance)
    # Some of NGOpt's inner optimizers draw from numpy's global state, not the parametrization's
    # (without this line f8 at 1000 evaluations differed between two runs of one seed).
    np.random.seed(seed % 2**32)  # noqa: NPY002
    param = ng.p.Array(shape=(dim,)).set_bounds(-5.0, 5.0)
    param.random_state = np.random.RandomState(seed % 2**32)
    optimizer = ng.optimizers.NGOpt(parametrization=param, budget=budget, num_workers=1)
    values: list[float] = []
    for _ in range(budget):
        candidate = optimizer.ask()
        value = float(problem(np.asarray(candidate.value, dtype=float)))
        optimizer.tell(candidate, value)
        values.append(value)
        if value - fopt <= SOLVED:
            break
    return values


def main(argv: list[str]) -> int:
    """Run every problem of the JSON list ``argv[0]``; print one JSON line per problem."""
    problems: list[list[Any]] = json.loads(argv[0])
    warnings.simplefilter("ignore")  # NGOpt's inner solvers' notices (COBYLA, line search)
    for function, instance, dim, budget, fopt, seed in problems:
        t = time.perf_counter()
        values = run_ngopt(int(function), int(instance), int(dim), int(budget), fopt, int(seed))
        out = {
            "function": function,
            "instance": instance,
            "values": values,
            "seconds": time.perf_counter() - t,
        }
        print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
