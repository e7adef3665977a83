"""Shared helpers for tests of the ScaLAPACK PDGEQRF driver (``apps/pdgeqrf``).

``requires_scalapack`` skips a test, with the reason in pytest's summary, when ScaLAPACK or
MPICH's compiler wrapper is missing; with ``PROPULATE_REQUIRE_SCALAPACK=1`` or ``CI=true`` it
does not skip, so a missing install fails loudly instead.
"""

from __future__ import annotations

import ctypes.util
import functools
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from propulate.engine.launch import find_mpiexec

#: Environment variable that, when ``"1"``, makes ScaLAPACK tests run (and fail) instead of skip.
REQUIRE_ENV = "PROPULATE_REQUIRE_SCALAPACK"
#: The driver's sources.
APP_DIR = Path(__file__).resolve().parent.parent / "apps" / "pdgeqrf"
#: Seconds one build or one launch of the driver may take in a test.
TIMEOUT = 180.0


def required() -> bool:
    """Whether a missing ScaLAPACK must fail the tests (CI, or the opt-in variable)."""
    return os.environ.get(REQUIRE_ENV) == "1" or os.environ.get("CI", "").lower() == "true"


@functools.cache
def scalapack_available() -> tuple[bool, str]:
    """Whether the driver can be built here, and if not, what is missing."""
    if os.environ.get("SCALAPACK_LIBS"):
        return True, "site ScaLAPACK from SCALAPACK_LIBS"
    if shutil.which("mpicc.mpich") is None and shutil.which("mpicc") is None:
        return False, "no MPI compiler wrapper (run `bash apps/pdgeqrf/install-deps.sh` as root)"
    if ctypes.util.find_library("scalapack-mpich") is None:
        return False, "no libscalapack-mpich (run `bash apps/pdgeqrf/install-deps.sh` as root)"
    return True, "Debian ScaLAPACK"


def _skip_unless_available() -> pytest.MarkDecorator:
    ok, reason = scalapack_available()
    return pytest.mark.skipif(not ok and not required(), reason=f"no ScaLAPACK: {reason}")


requires_scalapack = _skip_unless_available()


def build_driver(build_dir: Path) -> Path:
    """Build the driver into ``build_dir`` with the app's Makefile; return the binary's path."""
    proc = subprocess.run(
        ["make", "-C", str(APP_DIR), f"BUILD={build_dir}"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert proc.returncode == 0, f"driver build failed:\n{proc.stdout}\n{proc.stderr}"
    binary = build_dir / "pdgeqrf_driver"
    assert binary.is_file()
    return binary


def launcher() -> str:
    """Debian MPICH's ``mpiexec.mpich`` (matches the MPICH the driver links), else ``mpiexec``."""
    return shutil.which("mpiexec.mpich") or find_mpiexec()


def clean_env() -> dict[str, str]:
    """This environment without an enclosing MPI launch's variables (a fresh, nested launch)."""
    prefixes = ("PMI_", "PMIX_", "MPI_", "HYDRA_", "OMPI_", "SLURM_STEP", "SLURM_PROCID")
    return {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}


def run_driver(
    binary: Path, nproc: int, *args: str | int, timeout: float = TIMEOUT
) -> subprocess.CompletedProcess[str]:
    """Launch the driver on ``nproc`` processes with ``args``; the finished process."""
    return subprocess.run(
        [launcher(), "-n", str(nproc), str(binary), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=clean_env(),
        check=False,
    )


def parse_output(stdout: str) -> dict[str, str]:
    """The driver's ``key value`` lines as a mapping."""
    return dict(line.split(" ", 1) for line in stdout.splitlines() if " " in line)


#: Environment variable: file that :func:`model_runtime` appends each evaluated configuration to.
CALLS_ENV = "PROPULATE_TEST_CALLS"


def model_runtime(params: dict[str, int], task: dict[str, int]) -> float:
    """A cheap stand-in for the driver's runtime, in seconds (deterministic).

    Flops of the QR over the processes used, with a penalty for block sizes far from 48. Each
    call appends ``{"params", "task"}`` as a JSON line to the file named by
    ``PROPULATE_TEST_CALLS`` (when set), so a test can check what was launched.
    """
    import json
    import math

    path = os.environ.get(CALLS_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"params": params, "task": task}) + "\n")
    m, n = task["m"], task["n"]
    k = min(m, n)
    flops = 2.0 * m * n * k - 2.0 / 3.0 * k**3
    q = params["nproc"] // params["p"]
    block = 1.0 + 0.1 * (math.log(params["mb"] / 48) ** 2 + math.log(params["nb"] / 48) ** 2)
    return flops / (1e9 * params["p"] * q) * block


#: A campaign of the driver's four parameters on :func:`model_runtime` (``propulate measure``,
#: ``propulate paired`` and the report's baseline tests run it without the driver).
CAMPAIGN = """
objective: tests.pdgeqrf_utils:model_runtime
constraint: propulate.problems.pdgeqrf:feasible
parameters:
  mb: {type: int, low: 8, high: 256, log: true}
  nb: {type: int, low: 8, high: 256, log: true}
  nproc: {type: int, low: 1, high: 2}
  p: {type: int, low: 1, high: 2}
task_space:
  m: {type: int, low: 100, high: 1000}
  n: {type: int, low: 100, high: 1000}
"""
#: A task of :data:`CAMPAIGN`.
TASK = {"m": 400, "n": 300}


def launched(calls: Path) -> list[dict]:
    """The configurations :func:`model_runtime` evaluated, from its ``calls`` file, in order."""
    if not calls.exists():
        return []
    return [json.loads(line)["params"] for line in calls.read_text().splitlines()]
