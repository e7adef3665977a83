"""Does ``suggest``'s loss band for an unseen task hold the loss measured there?

Per seed, ``--tasks`` training tasks by Latin hypercube over the GPTune demo function's task
space (t in [0, 1.5], design seed = the seed) are tuned by MLA with the paper split (20
evaluations per task, 12 from a Latin hypercube), and an LCM with two latent functions is
fitted on all their points, as ``benchmarks/transfer_joint.py`` does. Then, for each of
``--new`` new tasks (design seed = seed + 1000) between the least and the largest training t,
TLA1's configuration is evaluated, and the script counts how often its loss lies in the band
:func:`propulate.tuningdb.predictor.expected_loss` stores: calibrated on the training tasks
(:mod:`propulate.tuningdb.band`) and, beside it, one posterior standard deviation (the band
before the calibration). It prints per seed the share held and the median width of the band.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/suggest_band.py --seeds 200-204

Development used seeds 0-5; report seeds from 200 on.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mla_demo import SPACE, TASKS  # noqa: E402
from suite_runs import int_ranges  # noqa: E402

from propulate.models.mla import run_mla  # noqa: E402
from propulate.models.sampling import build_lcm, sample_tasks, training_set_from_runs  # noqa: E402
from propulate.models.transfer import tla1  # noqa: E402
from propulate.problems.demo import demo_loss  # noqa: E402
from propulate.settings import LCMSettings, MLASettings  # noqa: E402
from propulate.tuningdb.predictor import expected_loss, posterior_data  # noqa: E402


def one_seed(seed: int, args: argparse.Namespace) -> dict[str, list[float]]:
    """Band hits and widths of the calibrated and the one-deviation band on one seed."""
    values = sample_tasks(TASKS, args.tasks, seed)
    tasks = [(f"train{i:02d}", t) for i, t in enumerate(values)]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        mla = MLASettings(budget=20, initial=12, seed=seed)
        run_mla(SPACE, demo_loss, tasks, work / "mla", mla, LCMSettings(latent=2), task_space=TASKS)
        data = training_set_from_runs([work / "mla" / tid for tid, _ in tasks], SPACE)
    lcm = build_lcm(data, SPACE, TASKS, 2, None).fit(restarts=1, seed=seed)
    post = posterior_data(lcm, TASKS)
    lo, hi = min(v["t"] for v in values), max(v["t"] for v in values)
    out: dict[str, list[float]] = {"hit": [], "width": [], "hit1": [], "width1": []}
    for task in sample_tasks(TASKS, args.new, seed + 1000):
        if not lo <= task["t"] <= hi:
            continue
        params, _ = tla1(lcm, SPACE, TASKS, task, seed)
        loss = demo_loss(params, task)
        for suffix, stored in (("", post), ("1", {**post, "band": None})):
            band = expected_loss(stored, SPACE, TASKS, task, params)
            out[f"hit{suffix}"].append(float(band["loss_low"] <= loss <= band["loss_high"]))
            out[f"width{suffix}"].append(band["loss_high"] - band["loss_low"])
    print(
        f"seed {seed}: calibrated band holds {statistics.mean(out['hit']):.0%} of "
        f"{len(out['hit'])} (median width {statistics.median(out['width']):.3f}); one standard "
        f"deviation {statistics.mean(out['hit1']):.0%} (width "
        f"{statistics.median(out['width1']):.3f}); band {post['band']}",
        flush=True,
    )
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Run the seeds and print the shares held, per seed and over all."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", type=int_ranges, default=int_ranges("200-204"))
    p.add_argument("--tasks", type=int, default=8, help="training tasks")
    p.add_argument("--new", type=int, default=20, help="new tasks per seed")
    args = p.parse_args(argv)
    runs = [one_seed(seed, args) for seed in args.seeds]
    for suffix, name in (("", "calibrated band"), ("1", "one standard deviation")):
        hits = [h for r in runs for h in r[f"hit{suffix}"]]
        per = [statistics.mean(r[f"hit{suffix}"]) for r in runs if r[f"hit{suffix}"]]
        print(
            f"{name}: holds the measured loss on {sum(hits):.0f} of {len(hits)} new tasks "
            f"({statistics.mean(hits):.0%}; per seed {min(per):.0%}-{max(per):.0%})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
