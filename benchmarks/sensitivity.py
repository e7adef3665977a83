"""Sensitivity analysis against known answers: Sobol indices of fitted GPs, importance from records.

Three checks, each printing its figures:

* ``ishigami``: the Ishigami function (a = 7, b = 0.1) at ``--ishigami-n`` (200) points of a
  Latin hypercube; a one-task LCM (the project's, ``build_lcm`` with one latent function) is
  fitted to them and the Sobol indices of its posterior mean estimated with SALib
  (``propulate.sensitivity.model_sensitivity``, ``--samples`` N). Target: S1 within 0.05 of
  (0.314, 0.442, 0.000) and ST3 within 0.05 of 0.244.
* ``g``: Sobol's G-function (8-D, a = 0, 1, 4.5, 9, 99, 99, 99, 99) at ``--g-n`` (300) points,
  the same way. Target: the ranking of x1 > x2 > x3 > x4 by the total index correct.
* ``campaign`` (with ``--campaign results/<name>``): per training task, the top-3 parameters of
  Optuna's fANOVA importance on the task's records (all its runs, ``sensitivity --runs``), next to
  PED-ANOVA on the same records, the campaign model's Sobol indices (ST), and, for the
  ``config/sensitivity.yaml`` campaign (objective ``shifting_g``), the exact indices.

Seeds: the development seeds were 0-4; the defaults report on 100-109, not used while building.
Usage::

    python benchmarks/sensitivity.py                                  # ishigami and g
    python benchmarks/sensitivity.py --seeds 0 1 2 3 4 --samples 4096
    python benchmarks/sensitivity.py --campaign results/sensitivity  # after its campaign
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from propulate.models.sampling import TaskData, build_lcm
from propulate.problems import sobol_functions as sf
from propulate.sensitivity.model import model_sensitivity
from propulate.sensitivity.sobol import top
from propulate.settings import SensitivitySettings
from propulate.space import SearchSpace

#: Largest error of an index that meets the targets.
TOLERANCE = 0.05


def fit_one_task(space: SearchSpace, f: Any, n: int, seed: int, restarts: int) -> Any:
    """A one-task LCM (one latent function) fitted to ``f`` at ``n`` Latin-hypercube points."""
    params = space.latin_hypercube(n, seed=seed)
    data = TaskData("f", {}, params, [f(p) for p in params])
    model = build_lcm([data], space, latent=1, max_points=None)
    return model.fit(restarts=restarts, seed=seed)


def holdout_r2(model: Any, space: SearchSpace, f: Any, seed: int) -> float:
    """1 - MSE / variance of the posterior mean on 2000 fresh uniform points."""
    rng = np.random.default_rng(10_000 + seed)
    params = [space.sample(rng) for _ in range(2000)]
    y = np.array([f(p) for p in params])
    pred = model.predict(space.encode_many(params), 0)[0]
    return float(1 - np.mean((pred - y) ** 2) / y.var())


def ishigami(args: argparse.Namespace) -> bool:
    """The Ishigami check; returns whether every seed met the target."""
    pi = math.pi
    space = SearchSpace({"x1": (-pi, pi), "x2": (-pi, pi), "x3": (-pi, pi)})
    exact = sf.ishigami_indices()
    settings = SensitivitySettings(samples=args.samples, seed=0)
    print(f"Ishigami, {args.ishigami_n} evaluations, one-task LCM, Saltelli N = {args.samples}")
    print("seed   R2      S1 (x1, x2, x3)          ST3     S1 95% half-widths    max |err|  ok")
    errors, oks = [], []
    for seed in args.seeds:
        model = fit_one_task(space, sf.ishigami, args.ishigami_n, seed, args.restarts)
        (res,) = model_sensitivity(model, settings=settings)
        ind = res.indices
        err = max(*(abs(a - b) for a, b in zip(ind.S1, exact["S1"], strict=True)),
                  abs(ind.ST[2] - exact["ST"][2]))  # fmt: skip
        errors.append(err)
        oks.append(err <= TOLERANCE)
        s1 = ", ".join(f"{v:.3f}" for v in ind.S1)
        conf = ", ".join(f"{v:.3f}" for v in ind.S1_conf)
        r2 = holdout_r2(model, space, sf.ishigami, seed)
        print(f"{seed:<6} {r2:.4f}  ({s1})  {ind.ST[2]:.3f}   ({conf})   {err:.3f}     {oks[-1]}")
    print(
        f"exact: S1 = ({', '.join(f'{v:.3f}' for v in exact['S1'])}), ST3 = "
        f"{exact['ST'][2]:.3f}; max |error| median {statistics.median(errors):.3f}, "
        f"largest {max(errors):.3f}; target (<= {TOLERANCE}) met on {sum(oks)}/{len(oks)} seeds\n"
    )
    return all(oks)


def g_function(args: argparse.Namespace) -> bool:
    """The G-function check; returns whether every seed ranked x1 > x2 > x3 > x4."""
    space = SearchSpace({f"x{i + 1}": (0.0, 1.0) for i in range(len(sf.G_A))})
    exact = sf.g_indices()
    settings = SensitivitySettings(samples=args.samples, seed=0)
    print(f"G-function (8-D), {args.g_n} evaluations, one-task LCM, Saltelli N = {args.samples}")
    print("seed   R2      ST (x1 .. x4)                     S1 (x1 .. x4)                     ok")
    oks = []
    for seed in args.seeds:
        model = fit_one_task(space, sf.g_function, args.g_n, seed, args.restarts)
        ind = model_sensitivity(model, settings=settings)[0].indices
        ok = ind.ranking()[:4] == ["x1", "x2", "x3", "x4"]
        oks.append(ok)
        st = ", ".join(f"{v:.3f}" for v in ind.ST[:4])
        s1 = ", ".join(f"{v:.3f}" for v in ind.S1[:4])
        r2 = holdout_r2(model, space, sf.g_function, seed)
        print(f"{seed:<6} {r2:.4f}  ({st})  ({s1})  {ok}")
    print(
        f"exact: ST = ({', '.join(f'{v:.3f}' for v in exact['ST'][:4])}), S1 = "
        f"({', '.join(f'{v:.3f}' for v in exact['S1'][:4])}); ranking by ST correct on "
        f"{sum(oks)}/{len(oks)} seeds\n"
    )
    return all(oks)


def campaign(args: argparse.Namespace) -> None:
    """Top-3 parameters per training task: fANOVA, PED-ANOVA, the model, the exact indices."""
    from propulate.models.lcm import LCM
    from propulate.sensitivity.records import records_importance

    root = Path(args.campaign)
    runs = sorted(p.parent for p in root.glob("runs/*/*/summary.json"))
    model = LCM.load(root / "model" / "lcm.json")
    by_task = {r.id: r for r in model_sensitivity(model)}
    known = "shifting_g" in (root / "campaign.yaml").read_text()
    t0 = time.perf_counter()
    fanova = records_importance(runs, settings=SensitivitySettings(seed=0))
    t_fanova = time.perf_counter() - t0
    ped = {
        r.id: r
        for r in records_importance(runs, settings=SensitivitySettings(evaluator="ped-anova"))
    }
    print(
        f"campaign {root}: {len(runs)} runs; fANOVA took {t_fanova:.1f} s for {len(fanova)} tasks"
    )
    heads = ["fANOVA", "PED-ANOVA", "LCM ST", "LCM S1", "exact ST"]
    print("task      evaluations  " + " ".join(f"{h + ' top-3':<20}" for h in heads))
    same = dict.fromkeys(heads, 0)
    exact_same = dict.fromkeys(heads, 0)
    for r in fanova:
        tops: dict[str, list[str] | None] = {"fANOVA": r.ranking()[:3]}
        tops["PED-ANOVA"] = ped[r.id].ranking()[:3]
        ind = by_task[r.id].indices if r.id in by_task else None
        tops["LCM ST"] = ind.ranking()[:3] if ind is not None else None
        tops["LCM S1"] = top(list(ind.names), list(ind.S1), 3) if ind is not None else None
        tops["exact ST"] = None
        if known and r.task is not None:
            st = sf.shifting_g_indices(float(r.task["t"]))["ST"]
            tops["exact ST"] = top(["x1", "x2", "x3", "x4", "n", "kind"], st, 3)
        for h in heads:
            same[h] += tops[h] is not None and set(tops[h]) == set(tops["fANOVA"])
            exact_same[h] += tops[h] is not None and set(tops[h]) == set(tops["exact ST"] or [])
        cells = [",".join(tops[h]) if tops[h] else "-" for h in heads]
        print(f"{r.id:<9} {r.evaluations:<12} " + " ".join(f"{c:<20}" for c in cells))
    n = len(fanova)
    print("same top-3 set as fANOVA:   " + ", ".join(f"{h} {same[h]}/{n}" for h in heads[1:]))
    if known:
        print(
            "same top-3 set as exact ST: "
            + ", ".join(f"{h} {exact_same[h]}/{n}" for h in heads[:4])
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", nargs="+", type=int, default=list(range(100, 110)))
    parser.add_argument("--samples", type=int, default=8192, help="Saltelli's N (power of 2)")
    parser.add_argument("--restarts", type=int, default=3, help="L-BFGS starts of each fit")
    parser.add_argument("--ishigami-n", type=int, default=200)
    parser.add_argument("--g-n", type=int, default=300)
    parser.add_argument("--checks", nargs="*", default=["ishigami", "g"], choices=["ishigami", "g"])
    parser.add_argument("--campaign", help="a campaign's results folder: compare with fANOVA")
    args = parser.parse_args()
    if "ishigami" in args.checks:
        ishigami(args)
    if "g" in args.checks:
        g_function(args)
    if args.campaign:
        campaign(args)


if __name__ == "__main__":
    main()
