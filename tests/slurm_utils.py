"""Shared helpers for tests that need a real Slurm cluster.

A test cluster is started with ``ci/slurm/start.sh`` (and stopped with
``ci/slurm/stop.sh``). Tests that need it use both marks::

    from tests.slurm_utils import requires_slurm

    pytestmark = [pytest.mark.slurm, requires_slurm]

``requires_slurm`` skips them, with the reason in pytest's summary, when no
cluster answers. Set ``PROPULATE_REQUIRE_SLURM=1`` to turn that skip off (CI,
after starting the cluster), so a broken cluster fails loudly instead of
silently skipping.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

#: Environment variable that, when ``"1"``, makes Slurm tests run (and fail) instead of skip.
REQUIRE_ENV = "PROPULATE_REQUIRE_SLURM"

#: Seconds any Slurm client call in the availability check may take.
PROBE_TIMEOUT = 10.0

# Node states (``sinfo %T``, trailing flags such as ``*`` or ``~`` stripped)
# in which the node can take a job now or once running jobs end.
_USABLE_STATES = {"idle", "mixed", "allocated", "completing"}


@functools.cache
def slurm_available() -> tuple[bool, str]:
    """Tell whether a Slurm cluster answers and has a node that can run jobs.

    Runs ``sinfo`` once (with a timeout, so it cannot hang) and caches the
    answer for the test session.

    Returns
    -------
    tuple[bool, str]
        ``(True, description)`` if ``sinfo`` succeeds and lists at least one
        usable node, otherwise ``(False, reason)`` where ``reason`` says what
        is missing and how to start a cluster.
    """
    hint = "start one with `sudo bash ci/slurm/start.sh`"
    sinfo = shutil.which("sinfo")
    if sinfo is None:
        return False, f"no Slurm: `sinfo` not on PATH ({hint})"
    # `scontrol ping` answers at once when slurmctld is down, where `sinfo`
    # keeps retrying for about 10 s: ask it first so a machine without a
    # running cluster skips quickly.
    scontrol = shutil.which("scontrol")
    if scontrol is not None:
        try:
            ping = subprocess.run(
                [scontrol, "ping"],
                capture_output=True,
                text=True,
                timeout=PROBE_TIMEOUT,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return (
                False,
                f"no Slurm: `scontrol ping` did not answer within {PROBE_TIMEOUT:.0f} s ({hint})",
            )
        if ping.returncode != 0 or " is UP" not in ping.stdout:
            first = (ping.stdout or ping.stderr).strip().splitlines()
            msg = first[0] if first else f"exit code {ping.returncode}"
            return False, f"no Slurm: `scontrol ping`: {msg} ({hint})"
    try:
        proc = subprocess.run(
            [sinfo, "-h", "-o", "%N %T"],
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return False, f"no Slurm: `sinfo` did not answer within {PROBE_TIMEOUT:.0f} s ({hint})"
    if proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        msg = detail[-1] if detail else f"exit code {proc.returncode}"
        return False, f"no Slurm: `sinfo` failed: {msg} ({hint})"
    nodes = [line.split() for line in proc.stdout.splitlines() if line.strip()]
    if not nodes:
        return False, f"no Slurm: `sinfo` lists no nodes ({hint})"
    usable = [n for n in nodes if len(n) == 2 and n[1].rstrip("*~#!%$@^-") in _USABLE_STATES]
    if not usable:
        states = ", ".join(" ".join(n) for n in nodes)
        return False, f"Slurm answers but no node can run jobs ({states})"
    return True, "Slurm nodes: " + ", ".join(" ".join(n) for n in usable)


def slurm_required() -> bool:
    """Tell whether Slurm tests must run even when no cluster answers.

    Returns
    -------
    bool
        True if the environment variable ``PROPULATE_REQUIRE_SLURM`` is ``"1"``.
    """
    return os.environ.get(REQUIRE_ENV) == "1"


def _skip_condition() -> tuple[bool, str]:
    ok, reason = slurm_available()
    return (not ok and not slurm_required()), reason


_skip, _reason = _skip_condition()

#: Skips a test (reason shown by ``pytest -ra``) unless a Slurm cluster answers.
requires_slurm: pytest.MarkDecorator = pytest.mark.skipif(_skip, reason=_reason)


def clean_env() -> dict[str, str]:
    """Return a copy of the environment fit for launching Slurm jobs.

    Drops ``SLURM_*`` variables except ``SLURM_CONF`` (they come from an
    enclosing allocation, which would make ``srun`` try to run inside it) and ``PMI_*``/``PMIX_*``/``HYDRA_*``
    ones (from an enclosing ``mpiexec``, which would make MPI in the job join
    the wrong world).

    Returns
    -------
    dict[str, str]
        The filtered environment.
    """
    prefixes = ("SLURM_", "PMI_", "PMIX_", "HYDRA_", "MPIR_")
    return {k: v for k, v in os.environ.items() if k == "SLURM_CONF" or not k.startswith(prefixes)}


# ------------------------------------------------------------------ campaigns on the cluster
PROFILE = "profiles/slurm"

#: Seconds a whole campaign may take before Snakemake's process group is killed.
CAMPAIGN_TIMEOUT = 420.0
#: Seconds a single Slurm client call (scontrol, scancel) may take.
CMD_TIMEOUT = 30.0
#: MPI ranks per evolve job: the test node has 2 CPUs.
RANKS = 2
#: The partition of ``ci/slurm/start.sh``.
PARTITION = "debug"

#: Command-line settings the CI cluster needs (no slurmdbd): see the module docstring.
CI_OPTIONS = (
    "--slurm-status-command",
    "squeue",
    "--slurm-no-account",
    "--slurm-init-seconds-before-status-checks",
    "2",
)

#: Runs Snakemake with status checks at most a few seconds apart (see that file).
PROMPT_CHECKS = Path(__file__).with_name("snakemake_prompt_checks.py")

_SUBMITTED = re.compile(r"Job (\d+) has been submitted with SLURM jobid (\d+)")


@dataclass
class Run:
    """A finished Snakemake run: exit code, output, and the Slurm jobs it submitted."""

    returncode: int
    output: str
    slurm_jobs: list[str]

    def tail(self, n: int = 6000) -> str:
        """The end of the output, for assertion messages."""
        return self.output[-n:]


def evolve_resources(workdir: Path, ranks: int) -> list[str]:
    """The profile's ``set-resources`` of ``evolve`` as ``--set-resources`` values, with
    ``tasks`` set to ``ranks``."""
    profile = yaml.safe_load((workdir / PROFILE / "config.yaml").read_text())
    resources = dict(profile["set-resources"]["evolve"])
    assert "mpi" in resources, "the SLURM profile must name the MPI launcher of evolve"
    resources["tasks"] = ranks
    return [
        f"evolve:{key}={value!r}" if isinstance(value, str) else f"evolve:{key}={value}"
        for key, value in resources.items()
    ]


def prompt_snakemake(python: str | Path = sys.executable) -> list[str]:
    """The start of a command line that runs the Snakemake of ``python``'s environment with
    status checks a few seconds apart (:data:`PROMPT_CHECKS`)."""
    return [str(python), str(PROMPT_CHECKS)]


def run_snakemake(command: list[str], cwd: Path, env: dict[str, str]) -> Run:
    """Run a Snakemake command line in its own process group, its output in
    ``cwd/snakemake.out``; when it exceeds :data:`CAMPAIGN_TIMEOUT`, kill the group, cancel the
    Slurm jobs it submitted and fail the test."""
    log = cwd / "snakemake.out"
    with log.open("w") as out:
        proc = subprocess.Popen(
            command,
            cwd=cwd,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, killed as a whole on timeout
        )
        try:
            returncode = proc.wait(timeout=CAMPAIGN_TIMEOUT)
            timed_out = False
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            returncode = proc.wait()
            timed_out = True
    output = log.read_text()
    jobs = [m.group(2) for m in _SUBMITTED.finditer(output)]
    if timed_out:
        _scancel(jobs, cwd)
        pytest.fail(
            f"snakemake did not finish within {CAMPAIGN_TIMEOUT:.0f} s "
            f"(killed; Slurm jobs {jobs} cancelled):\n{output[-6000:]}"
        )
    return Run(returncode, output, jobs)


def _scancel(job_ids: list[str], cwd: Path) -> None:
    if job_ids:
        subprocess.run(
            ["scancel", *job_ids], cwd=cwd, capture_output=True, timeout=CMD_TIMEOUT, check=False
        )
