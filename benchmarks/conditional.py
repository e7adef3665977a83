"""Conditional search spaces: valid proposals of every method, and what conditions save.

Two measurements (docs/search-spaces.md reports them):

``validity``
    The first ``--proposals`` configurations each method hands to the objective on one worker
    (:func:`propulate.testing.proposals`: the GA and random search bred as the engine breeds,
    Optuna TPE asked define-by-run as the baseline worker asks), on the shipped space
    (``examples/digits_optimizers/space.yaml``, 16 parameters, 12 of them conditional) and on a
    tiling space with forbidden clauses (``tx * ty >= 1024``, ``algo == 'naive' and unroll > 4``).
    Counts configurations that are out of bounds, miss an active parameter, hold an inactive one
    or satisfy a forbidden clause. Target: 0 for every method. The objective is a smooth loss over
    the encoded space (what the configurations are is what is measured, not their loss).

``target``
    A synthetic two-branch benchmark: ``branch`` in {a, b}; branch a has four parameters
    ``a1..a4`` in [-5, 5] with loss ``sum((a_i - 1)^2) / 4``, branch b four parameters ``b1..b4``
    with loss ``0.5 + sum((b_i + 2)^2) / 4``; one shared parameter ``s`` in [-5, 5] adds
    ``s^2 / 4``. The GA (``ga``, pop_size 8, one worker) searches the conditional space and the
    flattened one (all nine parameters always active, the same loss, which ignores the other
    branch's parameters), until the loss is <= ``--target`` or ``--budget`` evaluations are
    spent. Reported per search: evaluations per seed (``budget + 1`` when never reached), how
    many runs reached the target, median and quartiles; the ratio of the medians and the ratio
    over the seeds where both reached it. Target: the conditional search needs <= 0.7 x the
    flattened search's evaluations (median over the seeds). Optuna TPE is measured the same way
    when ``--optuna-target`` is given, the ``tpe`` propagator when ``--tpe-target`` is
    (with ``--optuna-budget``), the default ``auto`` propagator when ``--auto-target`` is;
    ``--one-branch`` adds the GA on branch a alone (the
    conditional space without b's parameters, the flattened one with them, ignored).
    ``--optimizers-target`` adds a benchmark of the shipped space's shape (``optimizers``): the
    GA on the shipped space and on its flattening (its 16 parameters always active), the loss
    over the parameters the shipped space makes active: each number's squared distance from a
    centre in the unit cube (:data:`CENTRES`) plus an offset per category (:data:`OFFSETS`: adam
    and the cosine schedule 0, the others 0.1 apart). At its best configuration 9 of the 16
    parameters are active. ``0.001`` asks every active number within about 1 % of its range,
    the precision ``0.01`` asks of the two-branch benchmark's.

Usage (seeds 0-9 for development; the reported figures use the held-out seeds 100-109 and
200-209; TPE's cost per trial grows with the number of trials, so its proposals per space come
from ten studies, ``--validity-seeds 10``)::

    nice -n 10 python benchmarks/conditional.py --seeds 100 101 102 103 104 105 106 107 108 109 \\
        --proposals 10000 --methods ga random --target 0.01 --budget 5000 --one-branch \\
        --optuna-target 0.1 --optuna-budget 600 --json benchmarks/results/conditional.json
    nice -n 10 python benchmarks/conditional.py --seeds 200 201 202 203 204 205 206 207 208 209 \\
        --skip-validity --target 0.01 --budget 5000 --one-branch \\
        --optuna-target 0.1 --optuna-budget 600 --json benchmarks/results/conditional_200.json
    nice -n 10 python benchmarks/conditional.py --seeds 0 1 2 3 4 5 6 7 8 9 \\
        --skip-validity --target 0.01 --budget 5000 --one-branch \\
        --optuna-target 0.1 --optuna-budget 600 --json benchmarks/results/conditional_dev.json
    nice -n 10 python benchmarks/conditional.py --seeds 100 101 102 103 104 105 106 107 108 109 \\
        --validity-seeds 10 --proposals 1000 --methods optuna --skip-target \\
        --json benchmarks/results/conditional_optuna.json
    nice -n 10 python benchmarks/conditional.py --seeds 100 101 102 103 104 105 106 107 108 109 \\
        --validity-seeds 10 --proposals 1000 --methods tpe --tpe-target 0.1 --optuna-budget 600 \\
        --json benchmarks/results/conditional_tpe.json
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import time
from pathlib import Path
from typing import Any

import yaml

from propulate.space import SearchSpace
from propulate.testing import proposals

REPO = Path(__file__).resolve().parents[1]
SHIPPED = REPO / "examples" / "digits_optimizers" / "space.yaml"
#: The first paper's table (27 parameters, 15 conditional).
PAPER = REPO / "examples" / "digits_optimizers" / "paper_space.yaml"
TILES_FILE = REPO / "benchmarks" / "spaces" / "tiles.yaml"
#: ``--spaces``: the spaces whose proposals are checked, by name.
SPACE_FILES = {"shipped": SHIPPED, "paper": PAPER, "forbidden": TILES_FILE}


def two_branch(conditional: bool, branches: str = "ab") -> SearchSpace:
    """The synthetic benchmark's space, conditional or flattened; with ``branches="a"``
    branch a alone (the conditional space has no b parameters, the flattened one has them,
    always active and ignored by the loss)."""
    params: dict[str, Any] = {"branch": {"type": "categorical", "choices": list(branches)}}
    for br in "ab":
        if conditional and br not in branches:
            continue
        for i in range(1, 5):
            spec: dict[str, Any] = {"type": "float", "low": -5.0, "high": 5.0}
            if conditional:
                spec["when"] = {"branch": br}
            params[f"{br}{i}"] = spec
    params["s"] = {"type": "float", "low": -5.0, "high": 5.0}
    return SearchSpace(params)


def two_branch_loss(p: dict[str, Any]) -> float:
    """The synthetic loss: the chosen branch's function of its own parameters."""
    shared = p["s"] ** 2 / 4
    if p["branch"] == "a":
        return shared + sum((p[f"a{i}"] - 1.0) ** 2 for i in range(1, 5)) / 4
    return shared + 0.5 + sum((p[f"b{i}"] + 2.0) ** 2 for i in range(1, 5)) / 4


#: The ``optimizers`` benchmark: the unit-cube centre of each continuous or integer parameter
#: of the shipped space, and the offset of each categorical value (0: the best branch).
CENTRES = {
    "learning_rate": 0.43,
    "batch_size": 0.79,
    "width": 0.49,
    "momentum": 0.39,
    "rho": 0.62,
    "beta1": 0.28,
    "beta2": 0.44,
    "initial_accumulator_value": 0.59,
    "eps": 0.38,
    "step_size": 0.31,
    "gamma": 0.75,
    "decay": 0.46,
    "eta_min_ratio": 0.44,
}
OFFSETS = {
    "optimizer": {"adam": 0.0, "rmsprop": 0.1, "sgd": 0.2, "adagrad": 0.3},
    "schedule": {"cosine": 0.0, "exponential": 0.1, "step": 0.2, "constant": 0.3},
    "nesterov": {"true": 0.0, "false": 0.05},
}


@functools.cache
def optimizers_space(conditional: bool) -> SearchSpace:
    """The shipped space (16 parameters, 12 conditional), or flattened: the same parameters
    with their conditions dropped (all always active)."""
    spec = yaml.safe_load(SHIPPED.read_text())
    if not conditional:
        spec["parameters"] = {
            name: {k: v for k, v in dim.items() if k != "when"}
            for name, dim in spec["parameters"].items()
        }
    return SearchSpace.from_dict(spec)


def optimizers_loss(p: dict[str, Any]) -> float:
    """The ``optimizers`` loss: over the parameters the shipped space makes active for ``p``
    (the flattened search's extra ones are ignored), the squared distance of each number's
    unit-cube value to its centre plus each category's offset; 0 at adam with the cosine
    schedule and every active number at its centre."""
    space = optimizers_space(True)
    dims = space.dimensions
    loss = 0.0
    for name, value in space.active(p).items():
        if name in OFFSETS:
            loss += OFFSETS[name][value]
        else:
            loss += (dims[name].encode(value) - CENTRES[name]) ** 2
    return loss


def invalid(space: SearchSpace, configs: list[dict[str, Any]]) -> int:
    """How many configurations are inconsistent, out of bounds or forbidden."""
    return sum(not (space.in_bounds(p) and space.satisfies(p)) for p in configs)


def validity(
    n: int, n_optuna: int, seeds: list[int], methods: list[str], spaces: list[str]
) -> list[dict[str, Any]]:
    """The validity counts of the methods on the spaces (``shipped``, ``paper``, ``forbidden``): per
    method ``n`` proposals (``n_optuna`` for Optuna's TPE and the ``tpe`` propagator, whose
    cost per proposal grows with the proposals) from each seed, summed over the seeds."""
    rows = []
    for label in spaces:
        space = SearchSpace.from_yaml(SPACE_FILES[label])
        for method in methods:
            count = n_optuna if method in ("optuna", "tpe") else n
            row: dict[str, Any] = {"space": label, "method": method, "seeds": seeds}
            for key in ("proposals", "invalid", "distinct", "rejected_before_evaluation"):
                row[key] = 0
            t0 = time.perf_counter()
            for seed in seeds:
                configs, _, rejected = proposals(space, method, count, seed=seed)
                row["proposals"] += len(configs)
                row["invalid"] += invalid(space, configs)
                row["distinct"] += len({space.key(p) for p in configs})
                row["rejected_before_evaluation"] += rejected
            row["seconds"] = round(time.perf_counter() - t0, 1)
            print(json.dumps(row), flush=True)
            rows.append(row)
    return rows


def evaluations_to_target(
    conditional: bool,
    method: str,
    seed: int,
    target: float,
    budget: int,
    branches: str = "ab",
    problem: str = "two-branch",
) -> int:
    """Evaluations until the loss first reaches ``target`` (``budget + 1`` when never)."""
    if problem == "optimizers":
        space, loss = optimizers_space(conditional), optimizers_loss
    else:
        space, loss = two_branch(conditional, branches), two_branch_loss
    _, losses, _ = proposals(space, method, budget, seed=seed, loss=loss, until=target)
    return next((i + 1 for i, v in enumerate(losses) if v <= target), budget + 1)


def spread(values: list[int]) -> dict[str, float]:
    """Minimum, quartiles and maximum of a list of evaluation counts."""
    q1, med, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return {"min": min(values), "q1": q1, "median": med, "q3": q3, "max": max(values)}


def target_runs(
    seeds: list[int],
    target: float,
    budget: int,
    method: str = "ga",
    branches: str = "ab",
    problem: str = "two-branch",
) -> dict[str, Any]:
    """Evaluations to the target per seed, conditional and flattened, and their ratios: of
    the medians (a run that never reaches the target counts as ``budget + 1``), and of the
    medians over the seeds where both searches reached it."""
    runs = {
        c: [evaluations_to_target(c, method, s, target, budget, branches, problem) for s in seeds]
        for c in (True, False)
    }
    cond, flat = runs[True], runs[False]
    ratio = statistics.median(cond) / statistics.median(flat)
    both = [(c, f) for c, f in zip(cond, flat, strict=True) if c <= budget and f <= budget]
    out = {
        "problem": problem,
        "method": method,
        "branches": branches if problem == "two-branch" else None,
        "target": target,
        "budget": budget,
        "seeds": seeds,
        "conditional": cond,
        "flattened": flat,
        "median_conditional": statistics.median(cond),
        "median_flattened": statistics.median(flat),
        "spread_conditional": spread(cond),
        "spread_flattened": spread(flat),
        "reached_conditional": sum(c <= budget for c in cond),
        "reached_flattened": sum(f <= budget for f in flat),
        "ratio_of_medians": round(ratio, 3),
        "per_seed_ratios": [round(c / f, 3) for c, f in zip(cond, flat, strict=True)],
        "seeds_both_reached": len(both),
        "ratio_where_both_reached": (
            round(statistics.median(c for c, _ in both) / statistics.median(f for _, f in both), 3)
            if both
            else None
        ),
        "met": ratio <= 0.7,
    }
    print(json.dumps(out), flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=list(range(10)))
    ap.add_argument(
        "--validity-seeds",
        type=int,
        default=1,
        help="validity: proposals from this many of the seeds (the first ones), summed",
    )
    ap.add_argument("--proposals", type=int, default=10_000)
    ap.add_argument("--optuna-proposals", type=int, default=None, help="default: --proposals")
    ap.add_argument(
        "--target", type=float, default=None, help="the two-branch GA's target (e.g. 0.01)"
    )
    ap.add_argument("--budget", type=int, default=5000)
    ap.add_argument("--optuna-target", type=float, default=None)
    ap.add_argument(
        "--tpe-target",
        type=float,
        default=None,
        help="measure the tpe propagator like Optuna (its budget: --optuna-budget)",
    )
    ap.add_argument(
        "--auto-target",
        type=float,
        default=None,
        help="measure the default propagator, auto, like Optuna (its budget: --optuna-budget)",
    )
    ap.add_argument("--optuna-budget", type=int, default=400)
    ap.add_argument(
        "--optimizers-target",
        type=float,
        default=None,
        help="also the optimizers benchmark (the shipped space) with the GA to this target",
    )
    ap.add_argument("--skip-validity", action="store_true")
    ap.add_argument("--skip-target", action="store_true")
    ap.add_argument(
        "--one-branch",
        action="store_true",
        help="also the GA on branch a alone: 5 parameters against 9 (4 of them ignored)",
    )
    ap.add_argument("--methods", nargs="+", default=["ga", "random", "optuna"])
    ap.add_argument(
        "--spaces",
        nargs="+",
        default=["shipped", "forbidden"],
        choices=list(SPACE_FILES),
    )
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    result: dict[str, Any] = {}
    if not args.skip_validity:
        n_opt = args.optuna_proposals or args.proposals
        seeds = args.seeds[: args.validity_seeds]
        result["validity"] = validity(args.proposals, n_opt, seeds, args.methods, args.spaces)
    if args.one_branch and args.target is None:
        ap.error("--one-branch needs --target")
    runs: list[dict[str, Any]] = []
    if args.target is not None and not args.skip_target:
        runs.append(target_runs(args.seeds, args.target, args.budget))
    if args.optuna_target is not None and not args.skip_target:
        runs.append(target_runs(args.seeds, args.optuna_target, args.optuna_budget, "optuna"))
    if args.tpe_target is not None and not args.skip_target:
        runs.append(target_runs(args.seeds, args.tpe_target, args.optuna_budget, "tpe"))
    if args.auto_target is not None and not args.skip_target:
        runs.append(target_runs(args.seeds, args.auto_target, args.optuna_budget, "auto"))
    if args.optimizers_target is not None and not args.skip_target:
        runs.append(
            target_runs(args.seeds, args.optimizers_target, args.budget, problem="optimizers")
        )
    if args.one_branch and not args.skip_target:
        runs.append(target_runs(args.seeds, args.target, args.budget, branches="a"))
    if runs:
        result["target"] = runs
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
