"""DeepHyper's ``CBO`` (its defaults, one worker) on a zero-cost sphere: its seconds per
proposal, for ``benchmarks/bo.py timing --deephyper-python``; or on one COCO bbob problem: the
value of every evaluation in order, for ``benchmarks/bo.py quality --methods cbo``.

DeepHyper is not a dependency of the project; run this with a Python that has it (``pip install
deephyper==0.13.2`` in a separate environment), it needs nothing else of the project::

    /path/to/deephyper-env/bin/python benchmarks/bo_deephyper.py --dim 10 --evaluations 60
    /path/to/deephyper-env/bin/python benchmarks/bo_deephyper.py --dim 10 --evaluations 200 \
        --bbob 8 --instance 71

It prints one JSON line: the evaluations, the wall seconds of the search, the seconds per
proposal (the search's seconds over its evaluations: the objective costs nothing) and the best
``sum x_i^2`` found over ``[-5, 5]^dim``; with ``--bbob`` (which also needs ``pip install
coco-experiment`` in that environment) the objective is that bbob function's instance and the
line also holds ``values``, ``f(x)`` of every evaluation in the order CBO asked for them.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Sequence
from typing import Any

import numpy as np


def bbob_function(function: int, instance: int, dim: int) -> Any:
    """COCO's bbob problem ``function`` / ``instance`` in ``dim`` dimensions (callable on x)."""
    import cocoex

    suite = cocoex.Suite("bbob", f"instances: {instance}", f"dimensions: {dim}")
    return suite.get_problem_by_function_dimension_instance(function, dim, instance)


def measure(
    dim: int, evaluations: int, seed: int, bbob: tuple[int, int] | None = None
) -> dict[str, Any]:
    """Run CBO for ``evaluations`` evaluations of the ``dim``-D sphere, or of the bbob problem
    ``(function, instance)``; its timing (and the values of the evaluations in order)."""
    from deephyper.hpo import CBO, HpProblem

    problem = HpProblem()
    for i in range(dim):
        problem.add_hyperparameter((-5.0, 5.0), f"x{i}")
    f = bbob_function(*bbob, dim) if bbob else lambda x: float(np.sum(x * x))
    values: list[float] = []

    def run(job: Any) -> float:
        x = np.array([job.parameters[f"x{i}"] for i in range(dim)])
        value = float(f(x))
        values.append(value)
        return -value  # CBO maximizes

    with tempfile.TemporaryDirectory() as folder:
        search = CBO(problem, random_state=seed, log_dir=folder)
        t = time.perf_counter()
        results = search.search(run, max_evals=evaluations)
        seconds = time.perf_counter() - t
    n = len(results)
    out: dict[str, Any] = {
        "evaluations": n,
        "seconds": seconds,
        "per_proposal": seconds / n,
        "best": -float(results["objective"].max()),
    }
    if bbob:
        out["values"] = values[:evaluations]
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the command line, measure, print the JSON line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dim", type=int, default=10)
    p.add_argument("--evaluations", type=int, default=60)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--bbob", type=int, help="a bbob function (1-24) instead of the sphere")
    p.add_argument("--instance", type=int, default=1, help="the bbob function's instance")
    args = p.parse_args(argv)
    bbob = (args.bbob, args.instance) if args.bbob else None
    print(json.dumps(measure(args.dim, args.evaluations, args.seed, bbob)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
