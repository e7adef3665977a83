"""The PDGEQRF driver links one MPI, MPICH's, also where Open MPI is installed beside it, and
its build refuses a binary that would load two MPI libraries (check-mpi.sh)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.pdgeqrf_utils import APP_DIR, TIMEOUT, parse_output, requires_scalapack, run_driver

#: What Debian's scalapack-mpich.pc answers once Open MPI is the default MPI ("Requires: mpi").
DEBIAN_ANSWER = "-lscalapack-mpich -L/usr/lib/x86_64-linux-gnu/openmpi/lib -lmpi -llapack -lblas"

needs_toolchain = pytest.mark.skipif(
    shutil.which("gcc") is None or shutil.which("ldd") is None, reason="needs gcc and ldd"
)


def _mpi_libraries(binary: Path) -> list[str]:
    out = subprocess.run(["ldd", str(binary)], capture_output=True, text=True, check=True).stdout
    names = [line.split()[0] for line in out.splitlines() if line.strip()]
    return sorted(n for n in names if n.split(".so")[0] in ("libmpi", "libmpich", "libmpi_cray"))


@requires_scalapack
@pytest.mark.skipif(bool(os.environ.get("SCALAPACK_LIBS")), reason="a site ScaLAPACK is set")
def test_the_driver_links_mpich_alone_whatever_pkg_config_says(tmp_path: Path) -> None:
    """A pkg-config that answers as Debian's does with Open MPI installed is not followed."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "pkg-config"
    fake.write_text(f"#!/bin/sh\necho '{DEBIAN_ANSWER}'\n")
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    env.pop("SCALAPACK_LIBS", None)
    proc = subprocess.run(
        ["make", "-C", str(APP_DIR), f"BUILD={tmp_path / 'build'}"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    binary = tmp_path / "build" / "pdgeqrf_driver"
    assert [n.split(".so")[0] for n in _mpi_libraries(binary)] == ["libmpich"]
    run = run_driver(binary, 2, "--m", 120, "--n", 80, "--mb", 16, "--nb", 16, "--p", 1, "--check")
    assert run.returncode == 0, run.stderr
    assert parse_output(run.stdout)["check"] == "passed"


FAKE_LIB = "int {name}_version(void) {{ return 1; }}\n"
PROGRAM = """\
int libmpi_version(void);
int libmpich_version(void);
int main(void) { return libmpi_version() + libmpich_version() - 2; }
"""


def _gcc(*args: str | Path, cwd: Path) -> None:
    subprocess.run(["gcc", *map(str, args)], cwd=cwd, check=True, capture_output=True)


@needs_toolchain
def test_the_build_check_refuses_a_binary_that_loads_two_mpis(tmp_path: Path) -> None:
    """Open MPI's libmpi.so.40 beside MPICH's libmpich.so.12 (stand-ins with their names)."""
    for name, soname in (("libmpi", "libmpi.so.40"), ("libmpich", "libmpich.so.12")):
        (tmp_path / f"{name}.c").write_text(FAKE_LIB.format(name=name))
        _gcc("-shared", "-fPIC", f"-Wl,-soname,{soname}", "-o", soname, f"{name}.c", cwd=tmp_path)
    (tmp_path / "main.c").write_text(PROGRAM)
    both, one = tmp_path / "both", tmp_path / "one"
    _gcc("-o", both, "main.c", "libmpi.so.40", "libmpich.so.12", "-Wl,-rpath,$ORIGIN", cwd=tmp_path)
    (tmp_path / "single.c").write_text(
        "int libmpich_version(void);\nint main(void) { return libmpich_version() - 1; }\n"
    )
    _gcc("-o", one, "single.c", "libmpich.so.12", "-Wl,-rpath,$ORIGIN", cwd=tmp_path)
    check = APP_DIR / "check-mpi.sh"
    refused = subprocess.run(["bash", str(check), str(both)], capture_output=True, text=True)
    assert refused.returncode == 1
    message = refused.stderr.strip()
    assert message.startswith(f"pdgeqrf: {both} loads 2 MPI libraries: libmpi.so.40 (")
    assert "libmpich.so.12 (" in message and "SCALAPACK_LIBS" in message
    passed = subprocess.run(["bash", str(check), str(one)], capture_output=True, text=True)
    assert passed.returncode == 0 and passed.stderr == ""
