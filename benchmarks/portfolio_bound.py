"""The best share of targets any two-island portfolio could reach, from single-method bbob runs.

A portfolio of islands splits its budget before it knows the problem: one island gets a share
``f`` of the evaluations, another the rest. Without help between the islands (migrants that
let one method reach a target it would not reach alone), the portfolio reaches a (problem,
target) pair exactly when one island does within its share of the budget: COCO's targets are
nested, so on each problem its share of targets is the larger of the two islands' shares. This
script computes that from ``benchmarks/bbob.py --results`` files whose runs had the full budget
(a method's first ``f x budget`` evaluations stand for a run with that smaller budget):

* per method, its share of targets at the full budget (as ``bbob.py`` prints it);
* an upper bound: per problem the best method at the full budget, chosen after the fact;
* for each split ``f``: ``--main`` (default ``cma``) with ``f`` of the budget and, per problem,
  the best of the other methods with ``1 - f`` (again chosen after the fact, so also a bound).

Usage::

    python benchmarks/portfolio_bound.py benchmarks/results/bbob_cma_71_75.jsonl \\
        benchmarks/results/bbob_ga_71_75.jsonl benchmarks/results/bbob_pso_nm_71_75.jsonl \\
        --reference cma-package --groups 71-73 74-75 71-75
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from suite_runs import int_ranges, load

#: COCO's 51 targets per problem.
N_TARGETS = 51
#: Budget shares of the main method tried.
SPLITS = (0.5, 0.7, 0.8, 0.9, 0.95)


def reached(run: dict[str, Any], evals: float) -> float:
    """The share of a run's targets reached within its first ``evals`` evaluations."""
    return sum(1 for h in run["hits"] if h is not None and h <= evals) / N_TARGETS


def bounds(
    runs: dict[str, dict[tuple[int, int], dict[str, Any]]],
    problems: Sequence[tuple[int, int]],
    main: str,
    reference: str,
) -> dict[str, float]:
    """Mean shares over ``problems``: every method, the after-the-fact best method, the splits."""
    budget = runs[main][problems[0]]["budget"]
    own = [m for m in runs if m != reference]
    others = [m for m in own if m != main]
    out = {m: sum(reached(runs[m][p], budget) for p in problems) / len(problems) for m in runs}
    out["best method per problem"] = sum(
        max(reached(runs[m][p], budget) for m in own) for p in problems
    ) / len(problems)
    for f in SPLITS:
        out[f"{main} {f:.0%} + best other {1 - f:.0%}"] = sum(
            max(
                reached(runs[main][p], f * budget),
                *(reached(runs[m][p], (1 - f) * budget) for m in others),
            )
            for p in problems
        ) / len(problems)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Print the bounds per group of instances."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="+", type=Path, help="bbob.py --results files")
    ap.add_argument("--main", default="cma", help="the method given the larger share")
    ap.add_argument("--reference", default="cma-package", help="the method to beat")
    ap.add_argument("--groups", nargs="+", default=["71-75"], help="instance ranges")
    args = ap.parse_args(argv)
    runs: dict[str, dict[tuple[int, int], dict[str, Any]]] = defaultdict(dict)
    for path in args.results:
        for r in load(path):
            runs[r["method"]][r["function"], r["instance"]] = r
    if args.main not in runs or args.reference not in runs:
        ap.error(f"the results hold no runs of {args.main!r} or {args.reference!r}")
    for group in args.groups:
        wanted = set(int_ranges(group))
        problems = sorted(p for p in runs[args.reference] if p[1] in wanted)
        missing = [m for m in runs if any(p not in runs[m] for p in problems)]
        if not problems or missing:
            ap.error(f"instances {group}: no reference runs, or none of {missing}")
        print(f"instances {group} ({len(problems)} problems): share of targets at full budget")
        for name, value in bounds(runs, problems, args.main, args.reference).items():
            print(f"  {name:<32} {value:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
