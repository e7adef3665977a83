"""DeepHyper's ``CBO`` (its defaults, one worker) on a zero-cost sphere: its seconds per
proposal, for ``benchmarks/bo.py timing --deephyper-python``.

DeepHyper is not a dependency of the project; run this with a Python that has it (``pip install
deephyper==0.13.2`` in a separate environment), it needs nothing else of the project::

    /path/to/deephyper-env/bin/python benchmarks/bo_deephyper.py --dim 10 --evaluations 60

It prints one JSON line: the evaluations, the wall seconds of the search, the seconds per
proposal (the search's seconds over its evaluations: the objective costs nothing) and the best
``sum x_i^2`` found over ``[-5, 5]^dim``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Sequence
from typing import Any

import numpy as np


def measure(dim: int, evaluations: int, seed: int) -> dict[str, float]:
    """Run CBO for ``evaluations`` evaluations of the ``dim``-D sphere; its timing."""
    from deephyper.hpo import CBO, HpProblem

    problem = HpProblem()
    for i in range(dim):
        problem.add_hyperparameter((-5.0, 5.0), f"x{i}")

    def run(job: Any) -> float:
        x = np.array([job.parameters[f"x{i}"] for i in range(dim)])
        return -float(np.sum(x * x))  # CBO maximizes

    with tempfile.TemporaryDirectory() as folder:
        search = CBO(problem, random_state=seed, log_dir=folder)
        t = time.perf_counter()
        results = search.search(run, max_evals=evaluations)
        seconds = time.perf_counter() - t
    n = len(results)
    return {
        "evaluations": n,
        "seconds": seconds,
        "per_proposal": seconds / n,
        "best": -float(results["objective"].max()),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the command line, measure, print the JSON line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dim", type=int, default=10)
    p.add_argument("--evaluations", type=int, default=60)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    print(json.dumps(measure(args.dim, args.evaluations, args.seed)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
