"""What a measurement depends on besides the configuration: the machine and the campaign.

A tuned configuration is only as good as the machine it was measured on. The database stores,
with every row, a *machine fingerprint* (CPU model, cores, BLAS and MPI libraries, a hostname
pattern) and the hash of the campaign config that produced it. A scheduled run compares the
current fingerprint with the stored one and re-validates the rows measured elsewhere.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import socket
import subprocess
import sys
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

#: The fields of a fingerprint, in the order the report shows them. Two fingerprints are the
#: same machine when all of them are equal.
FIELDS = ("cpu_model", "cores", "blas", "mpi", "hostname")

#: Environment variable that replaces the whole fingerprint by a JSON object (for tests and for
#: sites whose nodes differ in a way the fields above do not show, e.g. a firmware setting).
OVERRIDE_ENV = "PROPULATE_FINGERPRINT"

#: Seconds the MPI library query (a child process) may take before it is given up.
MPI_QUERY_TIMEOUT = 20.0


def cpu_model(cpuinfo: str | Path = "/proc/cpuinfo") -> str:
    """The CPU model name (``/proc/cpuinfo``'s ``model name``, else the platform's processor)."""
    try:
        for line in Path(cpuinfo).read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("model name", "Model", "cpu model"):
                return " ".join(value.split())
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def hostname_pattern(hostname: str | None = None) -> str:
    """The host name with every run of digits replaced by ``#``: the nodes of one partition
    (``node0012``, ``node0345``) share a pattern, another partition (``gpu#``) does not."""
    name = (hostname or socket.gethostname()).split(".")[0]
    return re.sub(r"\d+", "#", name)


def blas_libraries() -> str:
    """The BLAS libraries numpy and scipy load, as ``"api version"`` joined by ``"; "``."""
    import numpy  # noqa: F401 - loads numpy's BLAS, so threadpoolctl can see it
    import scipy.linalg  # noqa: F401 - loads scipy's BLAS (a wheel may bundle its own)
    from threadpoolctl import threadpool_info

    libs = sorted(
        {
            f"{info.get('internal_api', '?')} {info.get('version') or '?'}"
            for info in threadpool_info()
            if info.get("user_api") == "blas"
        }
    )
    return "; ".join(libs) or "none"


def mpi_library() -> str:
    """The MPI library's version line (``MPI_Get_library_version``), or ``"none"``.

    Asked in a child process that never initialises MPI (the standard allows this call before
    ``MPI_Init``), so a caller running outside ``mpiexec`` stays an ordinary process.
    """
    code = (
        "import mpi4py; mpi4py.rc.initialize = False; mpi4py.rc.finalize = False\n"
        "from mpi4py import MPI; print(' '.join(MPI.Get_library_version().splitlines()[0].split()))"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PMI_", "PMIX_"))}
    try:
        out = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            timeout=MPI_QUERY_TIMEOUT,
            env=env,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    line = out.stdout.strip()
    return line if out.returncode == 0 and line else "none"


@lru_cache(maxsize=1)
def _measured() -> tuple[tuple[str, Any], ...]:
    return (
        ("cpu_model", cpu_model()),
        ("cores", os.cpu_count() or 0),
        ("blas", blas_libraries()),
        ("mpi", mpi_library()),
        ("hostname", hostname_pattern()),
    )


def machine_fingerprint() -> dict[str, Any]:
    """This machine's fingerprint: ``{field: value}`` for every name in :data:`FIELDS`.

    Measured once per process (the MPI query starts a child process). When the environment
    variable ``PROPULATE_FINGERPRINT`` holds a JSON object, its fields replace the measured
    ones.
    """
    fp = dict(_measured())
    override = os.environ.get(OVERRIDE_ENV)
    if override:
        try:
            extra = json.loads(override)
        except json.JSONDecodeError as err:
            raise ValueError(f"{OVERRIDE_ENV} is not a JSON object: {err}") from None
        if not isinstance(extra, dict):
            raise ValueError(f"{OVERRIDE_ENV} is not a JSON object")
        fp.update(extra)
    return fp


def canonical_json(data: Any) -> str:
    """JSON with sorted keys and no spaces: equal data give equal text (and equal hashes)."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)


def digest(data: Any, length: int = 16) -> str:
    """The first ``length`` hex digits of the SHA-256 of ``data``'s canonical JSON."""
    return hashlib.sha256(canonical_json(data).encode()).hexdigest()[:length]


def fingerprint_hash(fp: Mapping[str, Any]) -> str:
    """A short hash identifying a fingerprint (equal fingerprints, equal hashes)."""
    return digest(dict(fp))


def differences(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """The fingerprint fields whose values differ (as ``"field: old -> new"``)."""
    keys = list(FIELDS) + sorted((set(old) | set(new)) - set(FIELDS))
    return [f"{k}: {old.get(k)} -> {new.get(k)}" for k in keys if old.get(k) != new.get(k)]


def config_hash(config: Mapping[str, Any] | str | Path) -> str:
    """The hash of a campaign config (a mapping, or a YAML/JSON file read as one).

    Key order and formatting do not change it; any value does.
    """
    if not isinstance(config, Mapping):
        import yaml

        config = yaml.safe_load(Path(config).read_text()) or {}
    return digest(dict(config))
