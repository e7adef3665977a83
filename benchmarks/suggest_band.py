"""Does ``suggest``'s loss band for an unseen task hold the loss measured there?

Per seed, ``--tasks`` training tasks by Latin hypercube over the GPTune demo function's task
space (t in [0, 1.5], design seed = the seed) are tuned by MLA with the paper split (20
evaluations per task, 12 from a Latin hypercube), and an LCM with two latent functions is
fitted on all their points, as ``benchmarks/transfer_joint.py`` does. Then, for each of
``--new`` new tasks (design seed = seed + 1000) between the least and the largest training t,
TLA1's configuration is evaluated, and the script counts how often its loss lies in the band
``suggest`` answers with: calibrated on the training tasks (:mod:`propulate.transfer.band`) and,
beside it, one posterior standard deviation (the band before the calibration). For the LCM
(``transfer.model`` auto or lcm): the band of :func:`propulate.tuningdb.predictor.expected_loss`
around TLA1's configuration on the LCM; for the joint model (``joint``): the band of
:func:`propulate.models.joint_transfer.joint_tla1`, its model fitted on all MLA points
warm-started from MLA's last fit. It prints per seed the share held and the median width.

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

from propulate.models.joint_gp import JointGP  # noqa: E402
from propulate.models.joint_transfer import joint_base, joint_tla1, near_task  # noqa: E402
from propulate.models.mla import run_mla  # noqa: E402
from propulate.models.sampling import build_lcm, sample_tasks, training_set_from_runs  # noqa: E402
from propulate.models.transfer import tla1  # noqa: E402
from propulate.problems.demo import demo_loss  # noqa: E402
from propulate.settings import LCMSettings, MLASettings  # noqa: E402
from propulate.transfer.joint_posterior import JointPosterior  # noqa: E402
from propulate.tuningdb.predictor import expected_loss, posterior_data  # noqa: E402

KINDS = ("lcm", "lcm1", "joint", "joint1")
LABELS = {
    "lcm": "LCM, calibrated band",
    "lcm1": "LCM, one standard deviation",
    "joint": "joint, calibrated band",
    "joint1": "joint, one standard deviation",
}


def _joint_one_sigma(joint: JointGP, task: dict, params: dict) -> dict[str, float]:
    """The joint model's band of one posterior standard deviation at ``params``."""
    model = near_task(joint, TASKS.encode(task))
    post = JointPosterior({**model.to_dict(), "scale": [model.y_mean, model.y_std]})
    m, v = post.predict(TASKS.encode(task), SPACE.encode(params)[None, :])
    return post.band(float(m[0]), float(v[0]), sigmas=1.0)


def one_seed(seed: int, args: argparse.Namespace) -> dict[str, dict[str, list[float]]]:
    """Per kind of band (:data:`KINDS`) its hits and widths on one seed."""
    values = sample_tasks(TASKS, args.tasks, seed)
    tasks = [(f"train{i:02d}", t) for i, t in enumerate(values)]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        mla = MLASettings(budget=20, initial=12, seed=seed)
        run_mla(SPACE, demo_loss, tasks, work / "mla", mla, LCMSettings(latent=2), task_space=TASKS)
        data = training_set_from_runs([work / "mla" / tid for tid, _ in tasks], SPACE)
        last = JointGP.load(work / "mla" / "model.json").get_theta()
    lcm = build_lcm(data, SPACE, TASKS, 2, None).fit(restarts=1, seed=seed)
    joint = joint_base(data, SPACE, TASKS, seed=seed, start=last)
    post = posterior_data(lcm, TASKS)
    lo, hi = min(v["t"] for v in values), max(v["t"] for v in values)
    out: dict[str, dict[str, list[float]]] = {k: {"hit": [], "width": []} for k in KINDS}
    for task in sample_tasks(TASKS, args.new, seed + 1000):
        if not lo <= task["t"] <= hi:
            continue
        params, _ = tla1(lcm, SPACE, TASKS, task, seed)
        p_joint, _, joint_band = joint_tla1(joint, SPACE, TASKS, task, seed)
        bands = {
            "lcm": (params, expected_loss(post, SPACE, TASKS, task, params)),
            "lcm1": (params, expected_loss({**post, "band": None}, SPACE, TASKS, task, params)),
            "joint": (p_joint, joint_band),
            "joint1": (p_joint, _joint_one_sigma(joint, task, p_joint)),
        }
        for kind, (p, band) in bands.items():
            loss = demo_loss(p, task)
            out[kind]["hit"].append(float(band["loss_low"] <= loss <= band["loss_high"]))
            out[kind]["width"].append(band["loss_high"] - band["loss_low"])
    cells = "; ".join(
        f"{kind} {statistics.mean(out[kind]['hit']):.0%} (width "
        f"{statistics.median(out[kind]['width']):.3f})"
        for kind in KINDS
    )
    print(f"seed {seed}, {len(out['lcm']['hit'])} new tasks: {cells}", flush=True)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Run the seeds and print the shares held, per seed and over all."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", type=int_ranges, default=int_ranges("200-204"))
    p.add_argument("--tasks", type=int, default=8, help="training tasks")
    p.add_argument("--new", type=int, default=20, help="new tasks per seed")
    args = p.parse_args(argv)
    runs = [one_seed(seed, args) for seed in args.seeds]
    for kind in KINDS:
        hits = [h for r in runs for h in r[kind]["hit"]]
        per = [statistics.mean(r[kind]["hit"]) for r in runs if r[kind]["hit"]]
        widths = [statistics.median(r[kind]["width"]) for r in runs if r[kind]["width"]]
        print(
            f"{LABELS[kind]}: holds the measured loss on {sum(hits):.0f} of {len(hits)} new "
            f"tasks ({statistics.mean(hits):.0%}; per seed {min(per):.0%}-{max(per):.0%}; "
            f"median width {min(widths):.3f}-{max(widths):.3f})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
