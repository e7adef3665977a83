"""Run Snakemake with its remote executor's status checks at most ``MAX_INTERVAL`` s apart.

The Slurm executor plugin waits 10 s longer before each status check that finds no job
finished (up to 180 s, sensible for a real cluster's controller). On the test cluster a job of
15 s was then seen done only after 36 s, and every stage of a campaign paid that. The tests run
their Slurm campaigns as ``python tests/snakemake_prompt_checks.py <snakemake arguments>``,
with the Python of the environment whose Snakemake they test: everything else is that
Snakemake's own command line.

This file imports nothing of the checkout, so that it also runs in a venv that holds only the
installed wheel.
"""

from __future__ import annotations

import sys

from snakemake.cli import main
from snakemake_interface_executor_plugins.executors.remote import RemoteExecutor

#: Seconds at most between two status checks.
MAX_INTERVAL = 3

_interval = RemoteExecutor.next_seconds_between_status_checks


def _capped(self: RemoteExecutor, value: float | None) -> None:
    """The plugin's setter, with ``value`` capped at ``MAX_INTERVAL``."""
    _interval.fset(self, None if value is None else min(value, MAX_INTERVAL))


RemoteExecutor.next_seconds_between_status_checks = _interval.setter(_capped)

if __name__ == "__main__":
    sys.argv[0] = "snakemake"
    sys.exit(main())
