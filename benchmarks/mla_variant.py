"""One MLA variant against the methods of saved ``mla_paper.py`` seeds, without re-running them.

Runs MLA of ``mla_paper.py`` (the paper split, ``--latent``, ``--max-points``) with further
:class:`propulate.settings.MLASettings` fields (``--set share=2``) on the training tasks of each
seed saved by ``mla_paper.py --save FILE`` (same problem, tasks and seed), and prints per seed and
over all the share of tasks on which the variant is strictly better than each saved method, and
its stuck rate next to theirs, and the variant's seconds in fits and acquisition searches (over
all seeds). Demo function only (its scores need no re-measurement). With ``--set model=lcm`` the
``mla`` scores saved before MLA's joint model existed come out again (MLA is deterministic):
better and worse on 0 % of the tasks. ``--initial 10`` runs the campaign's default split.
``--save FILE`` appends each seed's gaps and times.

    .venv/bin/python benchmarks/mla_variant.py --against runs.jsonl --seeds 100 --set share=2
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from functions import default_tmp  # noqa: E402
from mla_paper import TRAIN, demo_scores, make_problem, stuck_rates  # noqa: E402
from multitask import Stopwatch, print_times, win_shares  # noqa: E402

from propulate.models.mla import run_mla  # noqa: E402
from propulate.models.sampling import sample_tasks  # noqa: E402
from propulate.settings import LCMSettings, MLASettings  # noqa: E402


def number_or_text(text: str) -> float | int | str:
    """A ``--set`` value: a float with a point, else an int, else the text (``model=joint``)."""
    try:
        return float(text) if "." in text else int(text)
    except ValueError:
        return text


def main() -> None:
    """Run the variant on every saved seed and print its shares."""
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--against", required=True, help="a file of mla_paper.py --save")
    ap.add_argument("--seeds", type=int, nargs="+", required=True, help="seeds saved there")
    ap.add_argument("--set", nargs="+", default=[], metavar="KEY=VALUE", help="MLASettings fields")
    ap.add_argument("--tasks", type=int, default=50)
    ap.add_argument("--budget", type=int, default=20)
    ap.add_argument("--initial", type=int, default=12)
    ap.add_argument("--latent", type=int, default=3)
    ap.add_argument("--max-points", type=int, default=400)
    ap.add_argument("--tmp", default=default_tmp())
    ap.add_argument("--save", metavar="FILE", help="append each seed's gaps and times (JSON)")
    args = ap.parse_args()
    fields = {k: number_or_text(v) for k, v in (s.split("=") for s in args.set)}
    p = make_problem("demo")
    gaps: dict[int, list[float]] = {}
    watch = Stopwatch()
    for seed in args.seeds:  # first the variant: the file may still be being written
        values = sample_tasks(p.task_space, args.tasks, seed)
        tasks = [(f"train{i:02d}", t) for i, t in enumerate(values)]
        mla = MLASettings(budget=args.budget, initial=args.initial, seed=seed, **fields)
        lcm = LCMSettings(latent=args.latent, max_points=args.max_points or None)
        with tempfile.TemporaryDirectory(dir=args.tmp) as tmp, watch.method("v"):
            runs = run_mla(p.space, p.objective, tasks, tmp, mla, lcm, task_space=p.task_space)
        found = {"v": [(s.best_params, s.best_loss) for s in runs]}
        gaps[seed] = demo_scores(p, found, values)["v"]
        print(f"seed {seed}: variant done", flush=True)
        if args.save:
            line = {"seed": seed, "set": args.set, "gaps": gaps[seed], **watch.as_dict()}
            with open(args.save, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(line) + "\n")
    lines = Path(args.against).read_text().splitlines()
    saved = {r["seed"]: r for r in map(json.loads, filter(None, lines))}
    mine, theirs = [], {k: [] for k in TRAIN}
    for seed, g in gaps.items():
        r = saved[seed]
        # the same tasks and budget (the variant's initial design may differ from saved MLA's)
        assert (r["tasks"], r["budget"]) == (args.tasks, args.budget)
        mine += g
        for k in TRAIN:
            theirs[k] += r["train"][k]
        wins = win_shares({"v": np.array(g), **{k: np.array(r["train"][k]) for k in TRAIN}})
        print(f"seed {seed}: " + ", ".join(f"> {k} {wins['v', k]:.0%}" for k in TRAIN))
    scores = {"v": np.array(mine), **{k: np.array(v) for k, v in theirs.items()}}
    wins, stuck = win_shares(scores), stuck_rates(scores, ("v", *TRAIN), False)
    print_times([watch.as_dict()], {"v": "variant"})  # summed over the seeds
    print(f"\nMLA with {' '.join(args.set)} over {len(mine)} (task, seed) pairs:")
    for k in TRAIN:
        print(f"  better than {k:<12} {wins['v', k]:>5.0%}   worse {wins[k, 'v']:>5.0%}")
    print(
        f"  median gap {np.median(mine):.4f}; stuck: "
        + ", ".join(f"{k} {v:.0%}" for k, v in stuck.items())
    )


if __name__ == "__main__":
    main()
