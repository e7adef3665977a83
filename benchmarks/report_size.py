"""Size of the interactive report and the time to open it in a browser.

For a finished campaign (``--campaign results/<name>``: its ``summary.csv``, runs, model) and
for a synthetic run of ``--evaluations`` records (three parameters, a noisy quadratic loss,
1 % failures, written with :class:`propulate.compat.history.EvaluationLog`): the time to build the
report (``build_report``, including the PNGs of the figures folder), the page's size, and
the time headless Chromium (Debian's ``chromium``) takes from start to the rendered DOM
(``--dump-dom`` with a virtual-time budget), ``--repeats`` times (median, min, max), in a
1280x900 window: the first screen (plots further down are drawn as they scroll into view),
and the page with every plot drawn (the address with ``#all``). The browser's start alone is measured on an empty page and reported beside it.

Usage::

    nice -n 10 python benchmarks/report_size.py --campaign results/lapack_qr \\
        --evaluations 100000 --json benchmarks/results/report_size.json
    nice -n 10 python benchmarks/report_size.py --evaluations 2000 --runs 15 --parameters 30 \\
        --tasks 9

(the last: a page like the benchmark campaign's, 9 tasks of 15 runs of 30 parameters).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from propulate.compat.history import EvaluationLog
from propulate.report import aggregate, build_report

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--enable-unsafe-swiftshader",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--virtual-time-budget=2000",
)


def synthetic_run(
    directory: Path, n: int, seed: int = 0, extra: int = 0, task: str = "synthetic"
) -> Path:
    """A run of ``n`` evaluations (loss: a noisy quadratic in a and b, c categorical, and
    ``extra`` more float parameters x0, x1, ... with a small effect) of task ``task``."""
    rng = np.random.default_rng(seed)
    meta = {"task": task, "run": f"seed{seed}", "method": "propulate"}
    with EvaluationLog(directory, rank=0, meta=meta) as log:
        for i in range(n):
            params = {"a": float(rng.random()), "b": int(rng.integers(1, 256)), "c": "xyz"[i % 3]}
            more = rng.random(extra)
            params |= {f"x{j}": float(v) for j, v in enumerate(more)}
            loss = (params["a"] - 0.3) ** 2 + ((params["b"] - 64) / 256) ** 2
            loss += 0.01 * float(np.sum((more - 0.5) ** 2))
            loss = None if rng.random() < 0.01 else float(loss * rng.lognormal(0, 0.05) + 1e-3)
            log.append(params, loss, island=0, generation=i, start=1e9 + i, seconds=0.5)
    return directory


#: The window: the first screen (plots below it are drawn as they scroll into view; with
#: ``#all`` after the page's address, every plot at once).
WINDOW = "1280,900"


def open_times(page: Path, repeats: int, everything: bool = False) -> tuple[list[float], int, int]:
    """Seconds from Chromium's start to the rendered DOM, per repeat; plots and drawn plots."""
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        raise SystemExit("no chromium (apt-get install chromium)")
    times, plots, drawn = [], 0, 0
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as profile:
            start = time.perf_counter()
            proc = subprocess.run(
                [
                    exe,
                    *FLAGS,
                    f"--user-data-dir={profile}",
                    f"--window-size={WINDOW}",
                    "--dump-dom",
                    page.resolve().as_uri() + ("#all" if everything else ""),
                ],
                capture_output=True,
                text=True,
                check=True,
            )
            times.append(time.perf_counter() - start)
        plots = len(re.findall(r'class="plotly-plot', proc.stdout))
        drawn = len(re.findall(r'class="plotly-plot js-plotly-plot"', proc.stdout))
    return times, plots, drawn


def open_row(page: Path, repeats: int) -> dict[str, Any]:
    """Size and open times of ``page``: first screen, and every plot drawn."""
    row: dict[str, Any] = {"size_mb": round(page.stat().st_size / 1e6, 2)}
    for label, everything in (("first_screen", False), ("all_plots", True)):
        times, plots, drawn = open_times(page, repeats, everything)
        row[f"open_{label}_s_median"] = round(statistics.median(times), 2)
        row[f"open_{label}_s_min"] = round(min(times), 2)
        row[f"open_{label}_s_max"] = round(max(times), 2)
        row[f"{label}_plots_drawn"] = drawn
        row["plots"] = plots
    return row


def measure(name: str, summary: Path, runs: list[Path], out: Path, repeats: int, **kw: Any) -> dict:
    """Build the report of ``runs`` into ``out`` and open it ``repeats`` times."""
    start = time.perf_counter()
    build_report(summary, runs, out, figures=out.parent / f"{out.stem}-figures", **kw)
    build = time.perf_counter() - start
    row = {"report": name, "build_s": round(build, 2), **open_row(out, repeats)}
    print(json.dumps(row), flush=True)
    return row


def main(argv: list[str] | None = None) -> int:
    """Measure the reports named on the command line; print one JSON line each."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--campaign", type=Path, help="a finished campaign's results/<name>")
    parser.add_argument("--evaluations", type=int, default=0, help="synthetic run's records")
    parser.add_argument(
        "--runs", type=int, default=1, help="synthetic: that many runs of the same task"
    )
    parser.add_argument(
        "--parameters", type=int, default=3, help="synthetic: parameters per run (at least 3)"
    )
    parser.add_argument("--tasks", type=int, default=1, help="synthetic: that many tasks")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        empty = work / "empty.html"
        empty.write_text("<!DOCTYPE html><html><body>empty</body></html>")
        times, _, _ = open_times(empty, args.repeats)
        rows.append({"report": "empty page", "open_s_median": round(statistics.median(times), 2)})
        print(json.dumps(rows[-1]), flush=True)
        if args.campaign:
            c = args.campaign
            built = c / "report.html"  # as the pipeline's report job wrote it
            if built.is_file():
                rows.append(
                    {"report": f"{built} (the pipeline's)", **open_row(built, args.repeats)}
                )
                print(json.dumps(rows[-1]), flush=True)
            runs = [p for p in (c / "runs", c / "baselines", c / "transfer") if p.is_dir()]
            runs = [d for p in runs for d in sorted(p.glob("*/*")) if d.is_dir()]
            model = c / "model" / "lcm.json"
            rows.append(
                measure(
                    f"campaign {c.name} ({len(runs)} runs)",
                    c / "summary.csv",
                    runs,
                    work / "campaign.html",
                    args.repeats,
                    model=model if model.is_file() else None,
                    title=c.name,
                )
            )
        if args.evaluations:
            start = time.perf_counter()
            extra = max(args.parameters - 3, 0)
            runs = [
                synthetic_run(
                    work / "runs" / f"t{t}" / f"seed{s}", args.evaluations, s, extra, f"t{t}"
                )
                for t in range(args.tasks)
                for s in range(args.runs)
            ]
            total = args.evaluations * args.runs * args.tasks
            print(f"wrote {total} records in {time.perf_counter() - start:.1f} s")
            summary = work / "summary.csv"
            aggregate(runs).to_csv(summary, index=False)
            rows.append(
                measure(
                    f"synthetic: {args.tasks} tasks x {args.runs} runs x {args.evaluations} "
                    "evaluations, "
                    f"{3 + extra} parameters",
                    summary,
                    runs,
                    work / "synthetic.html",
                    args.repeats,
                )
            )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
