"""The tables behind the ``auto`` propagator's rules: :mod:`bbob` results per dimension and budget.

Reads the JSON lines of ``bbob.py --results`` (several dimensions and budgets in one file) and
prints, as Markdown, per (dimension, budget) the share of COCO's (problem, target) pairs each
method reached within its budget -- over all problems and per ``bbob`` function group -- the
share of problems solved to ``1e-8``, the wall seconds per problem, the share per instance (the
spread across instances) and per function (the best bold), and the best method overall and
per group. Every method of a table is counted on the same problems: those all of them ran
(the table says how many). Usage::

    python benchmarks/auto_dev.py benchmarks/results/auto_dev_bbob.jsonl
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bbob import TARGETS
from suite_runs import load

#: bbob's function groups (COCO's names): first and last function of each.
GROUPS: dict[str, tuple[int, int]] = {
    "separable f1-5": (1, 5),
    "moderate f6-9": (6, 9),
    "ill-conditioned f10-14": (10, 14),
    "multimodal f15-19": (15, 19),
    "weakly structured f20-24": (20, 24),
}


def share_at(rows: list[dict[str, Any]], evals: int) -> float:
    """The share of (problem, target) pairs of ``rows`` reached within ``evals`` evaluations."""
    if not rows:
        return math.nan
    n = sum(1 for r in rows for h in r["hits"] if h is not None and h <= evals)
    return n / (len(rows) * len(TARGETS))


def group_of(function: int) -> str:
    """The name of the group of ``bbob`` function ``function``."""
    return next(g for g, (lo, hi) in GROUPS.items() if lo <= function <= hi)


def table(rows: list[dict[str, Any]], dim: int, budget: int) -> list[str]:
    """The Markdown lines of one (dimension, budget): rows of one method per problem."""
    methods = sorted({r["method"] for r in rows})
    by = {m: {(r["function"], r["instance"]): r for r in rows if r["method"] == m} for m in methods}
    common = set.intersection(*(set(p) for p in by.values()))
    insts = sorted({i for _, i in common})
    funcs = sorted({f for f, _ in common})
    out = [
        f"### {dim}-D, {budget // dim} x D = {budget} evaluations",
        "",
        f"{len(common)} problems (functions {funcs[0]}-{funcs[-1]}, instances "
        f"{', '.join(map(str, insts))}); share of the 51 targets reached, seed 0, 2 workers for "
        "the engine's methods.",
        "",
        "| method | all | " + " | ".join(GROUPS) + " | solved | s / problem |",
        "|---" * (len(GROUPS) + 4) + "|",
    ]
    scores: dict[str, dict[str, float]] = {}
    for m in methods:
        rs = [by[m][p] for p in sorted(common)]
        cells = {"all": share_at(rs, budget)}
        for g in GROUPS:
            cells[g] = share_at([r for r in rs if group_of(r["function"]) == g], budget)
        scores[m] = cells
        solved = sum(r["hits"][-1] is not None for r in rs) / len(rs)
        secs = sum(r["seconds"] for r in rs) / len(rs)
        out.append(
            f"| {m} | "
            + " | ".join("-" if math.isnan(cells[k]) else f"{cells[k]:.3f}" for k in cells)
            + f" | {solved:.0%} | {secs:.2f} |"
        )
    out.append("")
    out += anytime(by, common, methods, dim, budget)
    out += spread(by, common, methods, budget)
    for key in ["all", *GROUPS]:
        if math.isnan(scores[methods[0]][key]):
            continue  # no problem of this group
        ranked = sorted(methods, key=lambda m: -scores[m][key])
        best = ranked[0]
        runner = ranked[1] if len(ranked) > 1 else None
        tail = f" (next {runner} {scores[runner][key]:.3f})" if runner else ""
        out.append(f"- best on {key}: **{best}** {scores[best][key]:.3f}{tail}")
    out.append("")
    return out


def anytime(
    by: dict[str, dict[tuple[int, int], dict[str, Any]]],
    common: set[tuple[int, int]],
    methods: list[str],
    dim: int,
    budget: int,
) -> list[str]:
    """Markdown lines: per method the share within ``m x D`` evaluations of these runs, for
    the multipliers below the budget (a run of a larger budget may search differently from a
    run of that smaller budget: read it as the runs' progress, not as shorter runs)."""
    mults = [m for m in (10, 20, 30, 50, 100, 200, 500) if m * dim < budget]
    if not mults:
        return []
    out = [
        "| method | " + " | ".join(f"{m} x D" for m in mults) + f" | {budget // dim} x D |",
        "|---" * (len(mults) + 2) + "|",
    ]
    for m in methods:
        rs = [by[m][p] for p in sorted(common)]
        cells = [share_at(rs, k * dim) for k in mults] + [share_at(rs, budget)]
        out.append(f"| {m} | " + " | ".join(f"{c:.3f}" for c in cells) + " |")
    out.append("")
    return out


def spread(
    by: dict[str, dict[tuple[int, int], dict[str, Any]]],
    common: set[tuple[int, int]],
    methods: list[str],
    budget: int,
) -> list[str]:
    """Markdown lines: per method the share on each instance's common problems (and the
    range), then per function the share of each method over the instances."""
    insts = sorted({i for _, i in common})
    funcs = sorted({f for f, _ in common})
    out = [
        "| method | " + " | ".join(f"i{i}" for i in insts) + " | min-max |",
        "|---" * (len(insts) + 2) + "|",
    ]
    for m in methods:
        cells = [share_at([by[m][p] for p in sorted(common) if p[1] == i], budget) for i in insts]
        out.append(
            f"| {m} | "
            + " | ".join(f"{c:.3f}" for c in cells)
            + f" | {min(cells):.3f}-{max(cells):.3f} |"
        )
    out += ["", "| f | " + " | ".join(methods) + " |", "|---" * (len(methods) + 1) + "|"]
    for f in funcs:
        cells = [share_at([by[m][p] for p in sorted(common) if p[0] == f], budget) for m in methods]
        top = max(cells)
        out.append(
            f"| {f} | "
            + " | ".join(f"**{c:.3f}**" if c == top else f"{c:.3f}" for c in cells)
            + " |"
        )
    out.append("")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Print the tables of every (dimension, budget) in the results files."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("results", type=Path, nargs="+", help="bbob.py --results files")
    p.add_argument("--seed", type=int, default=0, help="the lines of this seed only")
    p.add_argument("--dims", type=int, nargs="+", help="only these dimensions")
    p.add_argument(
        "--leave-out", nargs="+", default=[], metavar="METHOD", help="methods not in the tables"
    )
    args = p.parse_args(argv)
    rows = [
        r
        for path in args.results
        for r in load(path)
        if r.get("seed", args.seed) == args.seed
        and r["method"] not in args.leave_out
        and (not args.dims or r["dim"] in args.dims)
    ]
    for dim, budget in sorted({(r["dim"], r["budget"]) for r in rows}):
        these = [r for r in rows if r["dim"] == dim and r["budget"] == budget]
        print("\n".join(table(these, dim, budget)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
