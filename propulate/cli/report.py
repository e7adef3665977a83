"""The ``aggregate`` and ``report`` subcommands: results tables and the HTML report."""

from __future__ import annotations

import argparse
from pathlib import Path

from propulate.report import aggregate, build_report


def _check_runs(runs: list[str]) -> None:
    """Fail with one line naming the run directories that do not exist."""
    missing = [r for r in runs if not Path(r).exists()]
    if missing:
        raise FileNotFoundError(f"run directories not found: {', '.join(missing)}")


def _aggregate(args: argparse.Namespace) -> int:
    _check_runs(args.runs)
    table = aggregate(args.runs)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(out, index=False)
    print(f"aggregate: {len(table)} rows (task x method) from {len(args.runs)} paths -> {out}")
    return 0


def _report(args: argparse.Namespace) -> int:
    _check_runs(args.runs)
    if args.model is not None and not Path(args.model).is_file():
        raise FileNotFoundError(f"model file not found: {args.model}")
    if args.tuning_db is not None and not Path(args.tuning_db).exists():
        raise FileNotFoundError(f"tuning database not found: {args.tuning_db}")
    out = build_report(
        args.summary,
        args.runs,
        args.out,
        model=args.model,
        figures=args.figures,
        title=args.title,
        suite=args.suite,
        tuning_db=args.tuning_db,
        benchmarks=args.benchmarks,
        paired=args.paired,
    )
    if args.figures:
        from propulate.report.sections import SECTIONS

        for section in SECTIONS:  # the comparisons, into the job's log
            for name in section.text_files:
                text = Path(args.figures) / name
                if text.is_file():
                    print(text.read_text(encoding="utf-8"))
    print(f"report: {out}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``aggregate`` and ``report`` subcommands."""
    agg = subparsers.add_parser(
        "aggregate",
        help="one table row per task and method from run directories",
        description="Summarize run directories: per task and method the best configuration, "
        "its loss, the evaluations spent and the wall time (summed over runs/seeds).",
    )
    agg.add_argument(
        "--runs",
        nargs="+",
        required=True,
        metavar="DIR",
        help="run directories, or folders of run directories (e.g. the MLA output)",
    )
    agg.add_argument("--out", required=True, metavar="SUMMARY.csv", help="the table to write")
    agg.set_defaults(func=_aggregate)

    rep = subparsers.add_parser(
        "report",
        help="self-contained HTML report of a campaign",
        description="Write one HTML file (figures embedded as PNG) with the convergence "
        "curves per task, the best configurations, the LCM task correlations and the "
        "transfer results.",
    )
    rep.add_argument("--summary", required=True, metavar="SUMMARY.csv", help="from aggregate")
    rep.add_argument("--runs", nargs="+", required=True, metavar="DIR", help="run directories")
    rep.add_argument("--model", metavar="MODEL.json", help="the LCM model file")
    rep.add_argument("--figures", metavar="DIR", help="also write each figure here as PNG")
    rep.add_argument("--title", default="campaign", help="campaign name (default: campaign)")
    rep.add_argument(
        "--suite",
        nargs="+",
        metavar="FUNCTION",
        help="a benchmark-suite campaign's functions: add the methods' comparison per function",
    )
    rep.add_argument(
        "--tuning-db",
        metavar="TUNING.sqlite",
        help="the campaign's tuning database: add its rows and drift table",
    )
    rep.add_argument(
        "--benchmarks",
        nargs="+",
        default=[],
        metavar="FILE.json",
        help="measured benchmark tables (e.g. from benchmarks/mla_demo.py --json): one section "
        "each (default: none)",
    )
    rep.add_argument(
        "--paired",
        nargs="+",
        default=[],
        metavar="FILE.json",
        help="paired re-measurements (propulate paired): their speedups over the default join "
        "the speedup table (default: none)",
    )
    rep.add_argument("--out", required=True, metavar="REPORT.html", help="the HTML file")
    rep.set_defaults(func=_report)
