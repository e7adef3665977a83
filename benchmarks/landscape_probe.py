"""``auto``'s landscape probe on the paper's functions and on bbob: what it finds, function by function.

The probe (:mod:`propulate.propagators.landscape`, the design ``auto`` runs before choosing in
rules 7 and 8 of ``docs/auto.md``) asks a function, from one base point, whether it is separable
(the interaction of coordinate pairs) and how many local minima a line across one coordinate's
range holds. ``auto`` hands a function that is separable with many local minima to the GA.
This prints, for each function and each ``--seeds`` design, the interaction, the most minima on
a line and the verdict; nothing here runs the engine. Usage::

    python benchmarks/landscape_probe.py                      # paper functions, bbob 10-D and 20-D
    python benchmarks/landscape_probe.py --dims 10 --seeds 0 1 2 --instance 1
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from propulate.problems.benchmark import FUNCTIONS, ND_FUNCTIONS
from propulate.propagators.landscape import LandscapeProbe, Verdict, probe_size
from propulate.space import Float, SearchSpace


def verdicts(
    f: Callable[[Mapping[str, Any]], float], space: SearchSpace, seeds: list[int]
) -> list[Verdict]:
    """The probe's verdict on ``f`` over ``space`` for the design of each seed."""
    out = []
    for seed in seeds:
        probe = LandscapeProbe(space, seed)
        out.append(probe.verdict({j: float(f(probe.params(j))) for j in range(len(probe))}))
    return out


def _row(name: str, found: list[Verdict]) -> str:
    cells = "".join(
        f"  {v.interaction:7.4f} {v.minima:3d} {'GA ' if v.separable_multimodal else '-  '}"
        for v in found
    )
    return f"  {name:16s}{cells}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dims", type=int, nargs="+", default=[10, 20], help="bbob dimensions")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1], help="probe designs")
    parser.add_argument("--instance", type=int, default=1, help="bbob instance")
    args = parser.parse_args()
    header = "".join("  interaction minima verdict" for _ in args.seeds)
    print(
        f"each design: interaction, most local minima on a line, GA if auto would pick it\n"
        f"  {'function':16s}{header}"
    )

    print("the paper's functions (their dimension):")
    for name in ND_FUNCTIONS:
        bench = FUNCTIONS[name]
        space = SearchSpace({k: Float(lo, hi) for k, (lo, hi) in bench.limits.items()})
        found = verdicts(bench.function, space, args.seeds)
        print(_row(f"{name} {len(bench.limits)}-D", found))

    import cocoex  # a benchmark dependency (coco-experiment)

    for d in args.dims:
        print(f"bbob {d}-D, instance {args.instance} ({probe_size(d)} evaluations at most):")
        space = SearchSpace({f"x{i}": Float(-5.0, 5.0) for i in range(d)})
        keys = space.names
        suite = cocoex.Suite("bbob", "", f"dimensions:{d} instance_indices:{args.instance}")
        for problem in suite:

            def f(params: Mapping[str, Any], problem: Any = problem, keys: list = keys) -> float:
                return float(problem(np.fromiter((params[k] for k in keys), float, len(keys))))

            print(_row(f"f{problem.id_function}", verdicts(f, space, args.seeds)))


if __name__ == "__main__":
    main()
