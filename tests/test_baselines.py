"""The three ``evolve`` methods (propulate, random, optuna) under mpiexec, and the Optuna mapping.

The MPI tests only check that every method produces valid, complete records and a summary;
they assert nothing about optimization quality (small budgets make that a coin toss).
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from propulate.compat.history import read_history
from propulate.engine.launch import find_mpiexec
from propulate.space import Categorical, Float, Integer, SearchSpace

TIMEOUT = 120.0

BOUND = 5.12
SPHERE = "propulate.problems.benchmark:sphere"  # 2-D, parameters a and b


def mpiexec() -> str:
    """The local MPI launcher; the test is skipped where there is none."""
    try:
        return find_mpiexec()
    except FileNotFoundError as err:
        pytest.skip(str(err))


def evolve(
    out: Path,
    space: Path,
    *opts: str,
    n: int = 2,
    objective: str = SPHERE,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m propulate evolve`` on ``n`` ranks; fail with its output on an error."""
    cmd = [
        mpiexec(),
        "-n",
        str(n),
        sys.executable,
        "-m",
        "propulate",
        "evolve",
        "--objective",
        objective,
        "--space",
        str(space),
        "--out",
        str(out),
        *opts,
    ]
    proc = subprocess.run(
        cmd, capture_output=True, text=True, timeout=TIMEOUT, env={**os.environ, **(env or {})}
    )
    if proc.returncode != 0:
        raise AssertionError(
            f"{' '.join(cmd)} exited {proc.returncode}\n"
            f"stdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}"
        )
    return proc


def write_yaml(path: Path, spec: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(spec))
    return path


@pytest.fixture
def sphere_space(tmp_path: Path) -> Path:
    params = {k: {"type": "float", "low": -BOUND, "high": BOUND} for k in ("a", "b")}
    return write_yaml(tmp_path / "space.yaml", {"parameters": params})


def check_records(df: pd.DataFrame, method: str, n_rows: int, ranks: int = 2) -> None:
    """Exactly ``n_rows`` successful records of ``method`` from every rank, in bounds."""
    assert len(df) == n_rows
    assert set(df["method"]) == {method}
    # With a global budget a fast rank may take every evaluation; tests that need both ranks
    # (slow losses, per-rank generations) check that themselves.
    assert set(df["rank"]) <= set(range(ranks))
    assert (df["status"] == "ok").all()
    assert df["loss"].map(math.isfinite).all()
    for k in ("a", "b"):
        assert df[k].between(-BOUND, BOUND).all()
    assert df[["session", "rank", "seq"]].duplicated().sum() == 0
    assert (df["seconds"] >= 0).all()


# ------------------------------------------------------------------------------ no MPI


def test_distributions_map_every_dimension_kind() -> None:
    pytest.importorskip("optuna")
    from optuna.distributions import (
        CategoricalDistribution,
        FloatDistribution,
        IntDistribution,
    )

    from propulate.baselines.optuna_worker import distributions

    space = SearchSpace(
        {
            "lr": Float(1e-4, 1e-1, log=True),
            "x": Float(-1.0, 2.0),
            "nb": Integer(1, 256, log=True),
            "k": Integer(0, 9),
            "act": Categorical(("relu", "tanh")),
        }
    )
    d = distributions(space)
    assert list(d) == ["lr", "x", "nb", "k", "act"]
    assert d["lr"] == FloatDistribution(1e-4, 1e-1, log=True)
    assert d["x"] == FloatDistribution(-1.0, 2.0)
    assert d["nb"] == IntDistribution(1, 256, log=True)
    assert d["k"] == IntDistribution(0, 9)
    assert d["act"] == CategoricalDistribution(["relu", "tanh"])


# ------------------------------------------------------------------------------ MPI


@pytest.mark.mpi
@pytest.mark.parametrize(
    "method",
    [
        "propulate",
        "random",
        "optuna",
    ],
)
def test_each_method_writes_exactly_the_budget(
    tmp_path: Path, sphere_space: Path, method: str
) -> None:
    if method == "optuna":
        pytest.importorskip("optuna")
    out = tmp_path / "run"
    # A few milliseconds per evaluation: with a zero-cost loss one rank may spend the whole
    # global budget before the other has started, which is correct but tests nothing here.
    (tmp_path / "slow_sphere.py").write_text(
        "import time\n\ndef loss(p):\n    time.sleep(0.005)\n    return p['a'] ** 2 + p['b'] ** 2\n"
    )
    evolve(
        out,
        sphere_space,
        "--method",
        method,
        "--max-evaluations",
        "60",
        "--seed",
        "3",
        "--progress-interval",
        "1000",
        objective="slow_sphere:loss",
        env={"PYTHONPATH": f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"},
    )
    df = read_history(out)
    check_records(df, method, 60)
    assert set(df["rank"]) == {0, 1}
    summary = json.loads((out / "summary.json").read_text())
    assert summary["method"] == method
    assert summary["evaluations"] == 60
    assert summary["failures"] == 0
    assert summary["ranks"] == 2
    assert summary["stop_reason"] == "budget"
    assert summary["best_loss"] == pytest.approx(df["loss"].min())
    assert set(summary["best_params"]) == {"a", "b"}
    assert summary["evaluations_per_second"] > 0


@pytest.mark.mpi
def test_random_search_draws_spread_over_the_box(tmp_path: Path, sphere_space: Path) -> None:
    # No breeding: the draws stay spread over the whole box. The standard deviation of a
    # uniform on [-5.12, 5.12] is 2.96; for 200 draws half of it is many standard errors away.
    out = tmp_path / "run"
    evolve(
        out,
        sphere_space,
        "--method",
        "random",
        "--max-evaluations",
        "200",
        "--progress-interval",
        "1000",
    )
    df = read_history(out)
    check_records(df, "random", 200)
    for k in ("a", "b"):
        assert df[k].std() > 0.5 * 2 * BOUND / math.sqrt(12)


@pytest.mark.mpi
def test_optuna_generations_are_trials_per_rank(tmp_path: Path, sphere_space: Path) -> None:
    pytest.importorskip("optuna")
    out = tmp_path / "run"
    evolve(
        out,
        sphere_space,
        "--method",
        "optuna",
        "--generations",
        "12",
        "--progress-interval",
        "1000",
    )
    df = read_history(out)
    check_records(df, "optuna", 24)
    assert set(df["rank"]) == {0, 1}
    for _, group in df.groupby("rank"):
        assert sorted(group["generation"]) == list(range(12))
    assert (df["island"] == 0).all()
    assert json.loads((out / "summary.json").read_text())["stop_reason"] == "generations"


@pytest.mark.slow
@pytest.mark.mpi
def test_optuna_resume_reuses_the_study_and_counts_its_trials(
    tmp_path: Path, sphere_space: Path
) -> None:
    optuna = pytest.importorskip("optuna")
    from propulate.baselines.optuna_worker import JOURNAL_FILE, STUDY_NAME

    out = tmp_path / "run"
    evolve(out, sphere_space, "--method", "optuna", "--max-evaluations", "30")
    evolve(out, sphere_space, "--method", "optuna", "--max-evaluations", "50")
    df = read_history(out)
    check_records(df, "optuna", 50)
    assert df["session"].nunique() == 2
    # generation counters continue per rank across sessions
    for _, group in df.groupby("rank"):
        assert group["generation"].is_unique
    storage = optuna.storages.JournalStorage(
        optuna.storages.journal.JournalFileBackend(str(out / JOURNAL_FILE))
    )
    study = optuna.load_study(study_name=STUDY_NAME, storage=storage)
    done = study.get_trials(states=(optuna.trial.TrialState.COMPLETE,))
    assert len(done) == 50
    summary = json.loads((out / "summary.json").read_text())
    assert summary["evaluations"] == 50
    assert summary["best_loss"] == pytest.approx(df["loss"].min())
    # a third start with the budget spent evaluates nothing
    evolve(out, sphere_space, "--method", "optuna", "--max-evaluations", "50")
    assert len(read_history(out)) == 50


OBJECTIVE_MODULE = textwrap.dedent(
    """
    import math
    import time

    def loss(params):
        time.sleep(0.005)  # as long as an ask, so that both workers take trials
        if params["act"] == "bad":
            raise RuntimeError("boom")
        return math.log(params["lr"]) ** 2 + (params["nb"] - 32) ** 2 / 100.0

    def feasible(params):
        return params["nb"] <= 128
    """
)


@pytest.mark.slow
@pytest.mark.mpi
def test_optuna_mixed_space_with_constraint_and_failures(tmp_path: Path) -> None:
    pytest.importorskip("optuna")
    (tmp_path / "mixed_objective.py").write_text(OBJECTIVE_MODULE)
    space = write_yaml(
        tmp_path / "space.yaml",
        {
            "parameters": {
                "lr": {"type": "float", "low": 1e-4, "high": 1.0, "log": True},
                "nb": {"type": "int", "low": 1, "high": 256, "log": True},
                "act": {"type": "categorical", "choices": ["good", "bad"]},
            },
            "constraint": "mixed_objective:feasible",
        },
    )
    out = tmp_path / "run"
    path = os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")]))
    evolve(
        out,
        space,
        "--method",
        "optuna",
        "--max-evaluations",
        "40",
        objective="mixed_objective:loss",
        env={"PYTHONPATH": path},
    )
    df = read_history(out)
    assert len(df) == 40 and set(df["rank"]) == {0, 1}
    assert df["lr"].between(1e-4, 1.0).all()
    assert df["nb"].map(lambda v: float(v).is_integer() and 1 <= v <= 256).all()
    assert set(df["act"]) <= {"good", "bad"}
    failed = df[df["status"] == "failed"]
    ok = df[df["status"] == "ok"]
    assert failed["loss"].isna().all() and ok["loss"].map(math.isfinite).all()
    # infeasible suggestions and exceptions are failed records, feasible good ones succeed
    infeasible = df["nb"] > 128
    assert (failed.loc[infeasible[failed.index], "error"] == "constraint violated").all()
    assert (df.loc[infeasible, "status"] == "failed").all()
    raised = ~infeasible & (df["act"] == "bad")
    assert (df.loc[raised, "error"] == "RuntimeError: boom").all()
    # the objective's traceback is kept, as the island engine keeps it
    assert (
        df.loc[raised, "traceback"]
        .map(lambda tb: tb.startswith("Traceback") and 'raise RuntimeError("boom")' in tb)
        .all()
    )
    assert raised.any() and df.loc[infeasible, "traceback"].isna().all()
    assert (df.loc[~infeasible & (df["act"] == "good"), "status"] == "ok").all()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["failures"] == len(failed)
    assert summary["best_params"]["act"] == "good" and summary["best_params"]["nb"] <= 128


SLOW_MODULE = textwrap.dedent(
    """
    import time

    def loss(params):
        time.sleep(0.05)
        return params["a"] ** 2 + params["b"] ** 2
    """
)


@pytest.mark.mpi
def test_optuna_stops_cleanly_on_sigterm(tmp_path: Path, sphere_space: Path) -> None:
    pytest.importorskip("optuna")
    (tmp_path / "slow_objective.py").write_text(SLOW_MODULE)
    out = tmp_path / "run"
    path = os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")]))
    cmd = [
        mpiexec(),
        "-n",
        "2",
        sys.executable,
        "-m",
        "propulate",
        "evolve",
        "--objective",
        "slow_objective:loss",
        "--space",
        str(sphere_space),
        "--out",
        str(out),
        "--method",
        "optuna",
        "--time-limit",
        "100",
    ]
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": path},
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(read_history(out)) < 10:
            time.sleep(0.2)
        assert len(read_history(out)) >= 10, "the run did not start evaluating"
        os.killpg(proc.pid, signal.SIGTERM)
        _, err = proc.communicate(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    assert proc.returncode == 0, err[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["stop_reason"] == "signal"
    df = read_history(out)
    assert summary["evaluations"] == len(df) and (df["status"] == "ok").all()
