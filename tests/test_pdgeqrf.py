"""The PDGEQRF tuning problem: the C driver (build, residual, rejection) and its constraint."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from propulate.compat.history import iter_records
from propulate.problems import pdgeqrf
from propulate.space import SearchSpace
from tests.pdgeqrf_utils import (
    TIMEOUT,
    build_driver,
    clean_env,
    launcher,
    parse_output,
    requires_scalapack,
    run_driver,
)

REPO = Path(__file__).resolve().parents[1]

# ---------------------------------------------------------------------------------------------
# The constraint (pure Python, always runs).
# ---------------------------------------------------------------------------------------------

TASK = {"m": 500, "n": 400}


def flags(**values: int) -> list[str]:
    """Driver options ``--key value`` from keyword arguments."""
    return [item for key, value in values.items() for item in (f"--{key}", str(value))]


def params(mb: int = 32, nb: int = 32, nproc: int = 2, p: int = 1) -> dict[str, int]:
    return {"mb": mb, "nb": nb, "nproc": nproc, "p": p}


@pytest.mark.parametrize(
    ("config", "reason"),
    [
        (params(p=3, nproc=2), "p = 3 exceeds nproc = 2"),
        (params(mb=300, p=2), "mb * p = 300 * 2 exceeds m = 500"),
        (params(nb=250, nproc=2, p=1), "nb * q = 250 * 2 exceeds n = 400"),
        (params(nproc=0), "every value must be a positive integer"),
        (params(mb=2.5), "mb must be an integer, got 2.5"),  # type: ignore[arg-type]
    ],
)
def test_infeasible_configurations_name_the_rule(config: dict, reason: str) -> None:
    assert pdgeqrf.infeasibility(config, TASK) == reason
    assert not pdgeqrf.feasible(config, TASK)


def test_boundary_configurations_are_feasible() -> None:
    # mb * p == m and nb * q == n: every process row and column owns exactly one block
    assert pdgeqrf.feasible(params(mb=250, nb=400, nproc=2, p=2), TASK)
    assert pdgeqrf.feasible(params(mb=500, nb=200, nproc=2, p=1), TASK)
    # nproc = 3, p = 2: q = 1, one process idle, p * q <= nproc
    assert pdgeqrf.grid_q(3, 2) == 1
    assert pdgeqrf.feasible(params(nb=400, nproc=3, p=2), TASK)


def test_nproc_cap_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(pdgeqrf.MAX_NPROC_ENV, "2")
    assert pdgeqrf.feasible(params(nproc=2), TASK)
    assert pdgeqrf.infeasibility(params(nproc=4, p=2), TASK) == (
        f"nproc = 4 exceeds {pdgeqrf.MAX_NPROC_ENV} = 2"
    )
    monkeypatch.setenv(pdgeqrf.MAX_NPROC_ENV, "zero")
    with pytest.raises(ValueError, match="is not an integer"):
        pdgeqrf.feasible(params(), TASK)


@pytest.mark.parametrize(("nproc", "p"), [(1, 1), (2, 1), (4, 2), (6, 2), (8, 2), (16, 4)])
def test_default_is_the_squarest_grid(nproc: int, p: int) -> None:
    default = pdgeqrf.default_params(nproc)
    assert default == {"mb": 32, "nb": 32, "nproc": nproc, "p": p}
    assert p * pdgeqrf.grid_q(nproc, p) == nproc


def test_campaign_space_samples_only_feasible_configurations() -> None:
    space = SearchSpace(
        {
            "mb": {"type": "int", "low": 8, "high": 256, "log": True},
            "nb": {"type": "int", "low": 8, "high": 256, "log": True},
            "nproc": {"type": "int", "low": 1, "high": 2},
            "p": {"type": "int", "low": 1, "high": 2},
        },
        "propulate.problems.pdgeqrf:feasible",
    )
    rng = np.random.default_rng(0)
    task = {"m": 500, "n": 300}
    draws = [space.sample(rng, task) for _ in range(300)]
    assert all(pdgeqrf.feasible(d, task) for d in draws)
    # the constraint bites in this space: p > nproc and nb * 2 > 300 are both drawn and rejected
    assert not space.satisfies(params(nproc=1, p=2), task)
    assert not space.satisfies(params(nb=200, nproc=2, p=1), task)
    assert {(d["nproc"], d["p"]) for d in draws} == {(1, 1), (2, 1), (2, 2)}


# ---------------------------------------------------------------------------------------------
# The C driver (needs MPICH and ScaLAPACK; CI installs them).
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_driver(tmp_path_factory.mktemp("pdgeqrf-build"))


@requires_scalapack
@pytest.mark.parametrize(
    ("nproc", "p", "q", "m", "n", "mb", "nb"),
    [
        (1, 1, 1, 97, 61, 16, 8),  # one process, blocks that do not divide the shape
        (2, 1, 2, 120, 90, 16, 16),  # 1 x 2 grid
        (2, 2, 1, 75, 130, 8, 24),  # 2 x 1 grid, wide matrix
        (2, 1, 1, 64, 64, 8, 8),  # a rank outside the grid stays idle
    ],
)
def test_driver_factorizes_with_a_small_residual(
    driver: Path, nproc: int, p: int, q: int, m: int, n: int, mb: int, nb: int
) -> None:
    shape = flags(m=m, n=n, mb=mb, nb=nb, p=p, q=q, repeats=3)
    proc = run_driver(driver, nproc, *shape, "--check")
    assert proc.returncode == 0, proc.stderr
    out = parse_output(proc.stdout)
    assert out["pdgeqrf"].endswith(f"p={p} q={q} ranks={nproc} warmup=1 repeats=3")
    times = [float(t) for t in out["pdgeqrf_times_s"].split(",")]
    assert len(times) == 3 and all(t > 0 for t in times)
    assert float(out["pdgeqrf_time_s"]) == sorted(times)[1]
    assert float(out["residual"]) < 16.0
    assert out["check"] == "passed"


@requires_scalapack
def test_driver_default_grid_uses_every_rank(driver: Path) -> None:
    proc = run_driver(driver, 2, *flags(m=100, n=100, mb=10, nb=10, p=1, repeats=1, warmup=0))
    assert proc.returncode == 0, proc.stderr
    assert "p=1 q=2 ranks=2 warmup=0 repeats=1" in proc.stdout


@requires_scalapack
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--p", 2, "--q", 2], "infeasible grid: p * q = 2 * 2 exceeds the 2 MPI ranks"),
        (["--p", 2, "--mb", 40], "infeasible: mb * p = 40 * 2 exceeds m = 60"),
        (["--p", 1, "--nb", 30], "infeasible: nb * q = 30 * 2 exceeds n = 50"),
        (
            ["--p", 0],
            "--m, --n, --mb, --nb and --p are required positive integers (--q, when given, too)",
        ),
        (
            ["--p", 1, "--bogus", 1],
            "unknown or incomplete option '--bogus' (options: --m --n "
            "--mb --nb --p [--q --repeats --warmup --seed --check])",
        ),
    ],
)
def test_driver_rejects_bad_configurations_before_factorizing(
    driver: Path, args: list, message: str
) -> None:
    base = {"--m": 60, "--n": 50, "--mb": 8, "--nb": 8}
    for flag, _ in zip(args[::2], args[1::2], strict=True):
        base.pop(flag, None)
    flat = [str(x) for pair in base.items() for x in pair] + [str(a) for a in args]
    proc = run_driver(driver, 2, *flat)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [f"pdgeqrf_driver: {message}"]
    assert "pdgeqrf_time_s" not in proc.stdout


@requires_scalapack
def test_evolve_never_launches_an_infeasible_configuration(driver: Path, tmp_path: Path) -> None:
    """The island model on a tiny shape where most of the space is infeasible, through the
    evolve command line with the campaign's command objective: every launch is logged."""
    campaign = yaml.safe_load((REPO / "config" / "pdgeqrf.yaml").read_text())
    objective = dict(campaign["objective"])
    log_args = 'echo "$@" >> launches.log; exec "$0" "$@"'
    objective["command"] = objective["command"].replace(
        "apps/pdgeqrf/build/pdgeqrf_driver", f"bash -c {shlex.quote(log_args)} {driver}"
    )
    objective.update(launcher=f"{launcher()} -n {{nproc}}", workdir=str(tmp_path))
    (tmp_path / "objective.yaml").write_text(yaml.safe_dump(objective))
    space = {"parameters": dict(campaign["parameters"]), "constraint": campaign["constraint"]}
    space["parameters"]["mb"] = space["parameters"]["nb"] = {"type": "int", "low": 4, "high": 64}
    (tmp_path / "space.yaml").write_text(yaml.safe_dump(space))
    task = {"m": 90, "n": 40}  # nb * q <= 40 and mb * p <= 90 reject most of [4, 64]^2 x grids
    (tmp_path / "task.json").write_text(json.dumps({"id": "tiny", "task": task}))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "propulate",
            "evolve",
            "--objective",
            "objective.yaml",
            "--space",
            "space.yaml",
            "--task",
            "task.json",
            "--out",
            "run",
            "--max-evaluations",
            "12",
            "--seed",
            "3",
        ],
        cwd=tmp_path,
        env={**clean_env(), "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    records = list(iter_records(tmp_path / "run"))
    assert len(records) == 12
    assert all(r["status"] == "ok" for r in records), [r.get("error") for r in records]
    launches = (tmp_path / "launches.log").read_text().splitlines()
    assert len(launches) >= 12  # confirmation re-runs of a new best launch again
    for line in launches:
        args = dict(zip(line.split()[::2], line.split()[1::2], strict=False))
        params = {k: int(args[f"--{k}"]) for k in ("mb", "nb", "p")}
        assert pdgeqrf.feasible({**params, "nproc": 2}, task) or pdgeqrf.feasible(
            {**params, "nproc": 1}, task
        ), line
    assert all(pdgeqrf.feasible(r["params"], task) for r in records)
    # the constraint did bite: the records span several grids, none of them infeasible
    assert len({(r["params"]["nproc"], r["params"]["p"]) for r in records}) >= 2
