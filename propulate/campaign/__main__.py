"""``python -m propulate.campaign``: helpers of the campaign workflow.

    python -m propulate.campaign report-path config/config.yaml
    python -m propulate.campaign next-steps config/config.yaml
    python -m propulate.campaign setup config/pdgeqrf.yaml
    python -m propulate.campaign prepare-run --out DIR --settings TEXT --files SPACE [TASK]
    python -m propulate.campaign run-owned --out DIR --settings TEXT --files FILE... -- COMMAND...
    python -m propulate.campaign check-run --out DIR

``report-path`` prints where the campaign's report goes (``results/<name>/report.html``).
``next-steps`` prints the commands to try after the campaign (``make run`` ends with them).
``setup`` checks the config against the workflow's schema, then runs its ``setup`` shell
commands in order (``make run`` does, before the workflow); the first that fails stops it with
one line naming it.
``prepare-run`` readies an evolve run directory: resume an earlier attempt with the same
settings, or clear one made with other settings (:mod:`propulate.campaign.resume`).
``run-owned`` does the same for an MLA or transfer run directory, then runs COMMAND holding the
directory's lease (:mod:`propulate.campaign.owned`); its exit status is the command's.
``check-run`` fails (status 1) when an evolve run stopped on a signal before its budget
(:func:`propulate.campaign.resume.stopped_early`), so that the job is not taken as done.
A config error prints one line naming the key and exits with status 2.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import yaml

from propulate.campaign.config import Campaign, CampaignError
from propulate.campaign.resume import prepare_run, stopped_early
from propulate.campaign.schema import check_schema


def main(argv: Sequence[str] | None = None) -> int:
    """Run one helper command; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m propulate.campaign",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)
    path = sub.add_parser("report-path", help="print the report path of a campaign config")
    path.add_argument("config", type=Path, help="campaign config (YAML)")
    steps = sub.add_parser("next-steps", help="print the commands to try after a campaign")
    steps.add_argument("config", type=Path, help="campaign config (YAML)")
    setup = sub.add_parser("setup", help="run a campaign config's setup commands")
    setup.add_argument("config", type=Path, help="campaign config (YAML)")
    prep = sub.add_parser("prepare-run", help="ready an evolve run directory")
    prep.add_argument("--out", required=True, type=Path, help="the run directory")
    prep.add_argument("--settings", required=True, help="the job's settings as text")
    prep.add_argument(
        "--files",
        nargs="*",
        default=[],
        type=Path,
        help="input files whose content belongs to the settings",
    )
    owned = sub.add_parser("run-owned", help="run a command as its run directory's owner")
    owned.add_argument("--out", required=True, type=Path, help="the run directory")
    owned.add_argument("--settings", required=True, help="the job's settings as text")
    owned.add_argument("--files", nargs="*", default=[], type=Path, help="input files")
    check = sub.add_parser("check-run", help="fail when an evolve run stopped on a signal")
    check.add_argument("--out", required=True, type=Path, help="the run directory")
    argv = list(sys.argv[1:] if argv is None else argv)
    command = argv[argv.index("--") + 1 :] if "--" in argv else []
    args = parser.parse_args(argv[: len(argv) - len(command) - (1 if "--" in argv else 0)])
    if args.command == "next-steps":
        from propulate.campaign.next_steps import next_steps

        try:
            config = yaml.safe_load(args.config.read_text())
            print(next_steps(Campaign.from_config(config), str(args.config)))
        except (OSError, yaml.YAMLError, CampaignError, AttributeError) as err:
            print(f"error: {args.config}: {err}", file=sys.stderr)
            return 2
        return 0
    if args.command == "report-path":
        try:
            config = yaml.safe_load(args.config.read_text())
            check_schema(config)
            print(Campaign.from_config(config).path("report.html"))
        except (OSError, yaml.YAMLError, CampaignError, AttributeError) as err:
            print(f"error: {args.config}: {err}", file=sys.stderr)
            return 2
        return 0
    if args.command == "setup":
        return run_setup(args.config)
    if args.command == "check-run":
        why = stopped_early(args.out)
        if why:
            print(f"propulate.campaign check-run: {why}", file=sys.stderr)
            return 1
        return 0
    if args.command == "run-owned":
        from propulate.campaign.owned import run_owned

        if not command:
            parser.error("run-owned: give the command after --")
        return run_owned(args.out, args.settings, args.files, command)
    state = prepare_run(args.out, args.settings, args.files)
    print(f"{args.out}: {state}")
    return 0


def run_setup(config: Path) -> int:
    """Run the ``setup`` commands of ``config`` with bash; 0, or 2 after the first failure."""
    try:
        data = yaml.safe_load(config.read_text()) or {}
        check_schema(data)  # a misspelt key fails here, before any setup command runs
        commands = data.get("setup") or []
    except (OSError, yaml.YAMLError, AttributeError, CampaignError) as err:
        print(f"error: {config}: {err}", file=sys.stderr)
        return 2
    if not isinstance(commands, list) or not all(isinstance(c, str) for c in commands):
        print(
            f"error: {config}: config key 'setup': give a list of shell commands", file=sys.stderr
        )
        return 2
    for command in commands:
        status = subprocess.run(["bash", "-c", command], check=False).returncode
        if status != 0:
            print(
                f"error: {config}: setup command failed (exit {status}): {command}", file=sys.stderr
            )
            return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
