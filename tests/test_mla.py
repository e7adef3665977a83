"""Expected improvement, constrained proposals, designs, and the MLA loop (resume, MPI)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import norm

from propulate.compat.history import iter_records, read_history
from propulate.models.acquisition import expected_improvement, propose, untried_incumbent
from propulate.models.lcm import LCM
from propulate.models.mla import run_mla
from propulate.models.sampling import initial_designs, nearest_tasks, sample_tasks
from propulate.runs.summary import read_summary
from propulate.settings import LCMSettings, MLASettings
from propulate.space import SearchSpace

REPO = Path(__file__).resolve().parents[1]
PY = sys.executable


def nb_constraint(params: dict, task: dict) -> bool:
    return params["nb"] <= min(task["m"], task["n"])


SPACE = SearchSpace({"nb": (1, 64), "x": (0.0, 1.0)}, constraint=nb_constraint)
TASK_SPACE = SearchSpace({"m": (4, 64), "n": (4, 64)})


def toy_loss(params: dict, task: dict) -> float:
    return (params["nb"] / task["m"] - 0.5) ** 2 + (params["x"] - task["n"] / 64) ** 2


def test_expected_improvement_formula() -> None:
    mu, sigma = np.array([0.0, 1.0, 2.0]), np.array([1.0, 0.5, 1e-15])
    ei = expected_improvement(mu, sigma, 1.0)
    z = (1.0 - mu[:2]) / sigma[:2]
    assert np.allclose(ei[:2], (1.0 - mu[:2]) * norm.cdf(z) + sigma[:2] * norm.pdf(z))
    assert ei[1] == pytest.approx(0.5 * norm.pdf(0.0))
    assert ei[2] == pytest.approx(0.0, abs=1e-12) and np.all(ei >= 0)
    assert expected_improvement(np.array([0.0]), np.array([2.0]), 1.0) > ei[0]


def test_sample_tasks_and_designs_are_seeded_feasible_and_heterotropic() -> None:
    tasks = sample_tasks(TASK_SPACE, 6, seed=3)
    assert tasks == sample_tasks(TASK_SPACE, 6, seed=3) != sample_tasks(TASK_SPACE, 6, seed=4)
    assert all(TASK_SPACE.in_bounds(t) for t in tasks)
    ms = sorted(t["m"] for t in tasks)  # one task per stratum of the hypercube
    assert all(b - a >= 2 for a, b in zip(ms, ms[1:], strict=False))
    small = [{"m": 5, "n": 40}, {"m": 30, "n": 6}]
    designs = initial_designs(SPACE, small, 8, seed=0)
    assert designs == initial_designs(SPACE, small, 8, seed=0)
    for task, design in zip(small, designs, strict=True):
        assert len(design) == 8 and all(SPACE.is_valid(p, task) for p in design)
    assert {p["x"] for p in designs[0]}.isdisjoint({p["x"] for p in designs[1]})


def fitted_model(task: dict, n: int = 10) -> tuple[LCM, list[dict]]:
    design = SPACE.latin_hypercube(n, seed=1, task=task)
    model = LCM(
        SPACE.encode_many(design), [0] * n, [toy_loss(p, task) for p in design], 1, latent=1
    ).fit(restarts=1)
    return model, design


def test_propose_respects_constraint_and_never_repeats() -> None:
    task = {"m": 6, "n": 50}
    model, design = fitted_model(task)
    seen = {SPACE.key(p) for p in design}
    rng = np.random.default_rng(0)
    for _ in range(5):
        p, ei = propose(model, 0, SPACE, task, seen, rng, n_candidates=64)
        assert p is not None and SPACE.is_valid(p, task) and ei >= 0
        assert SPACE.key(p) not in seen
        assert isinstance(p["nb"], int)
        seen.add(SPACE.key(p))


def test_propose_in_an_exhausted_space_returns_none() -> None:
    space = SearchSpace({"k": (1, 3)})
    model = LCM(
        space.encode_many([{"k": 1}, {"k": 2}, {"k": 3}]), [0, 0, 0], [3.0, 1.0, 2.0], 1, latent=1
    )
    seen = {(1,), (2,), (3,)}
    assert propose(model, 0, space, None, seen, np.random.default_rng(0), n_candidates=8) == (
        None,
        0.0,
    )
    p, _ = propose(model, 0, space, None, {(1,), (2,)}, np.random.default_rng(0), n_candidates=8)
    assert p == {"k": 3}


def test_mla_in_process_spends_budgets_within_constraints(tmp_path: Path) -> None:
    tasks = [("a", {"m": 8, "n": 40}), ("b", {"m": 40, "n": 10}), ("c", {"m": 20, "n": 20})]
    summaries = run_mla(
        SPACE,
        toy_loss,
        tasks,
        tmp_path,
        MLASettings(budget=7, initial=4, seed=0),
        LCMSettings(latent=2, restarts=1),
        task_space=TASK_SPACE,
    )
    assert [s.task for s in summaries] == ["a", "b", "c"]
    for (tid, task), s in zip(tasks, summaries, strict=True):
        df = read_history(tmp_path / tid)
        assert len(df) == 7 == s.evaluations and s.failures == 0
        assert set(df["task"]) == {tid} and set(df["method"]) == {"mla"}
        assert set(df["run"]) == {"seed0"}
        keys = [SPACE.key(r["params"]) for r in iter_records(tmp_path / tid)]
        assert len(set(keys)) == 7
        assert all(SPACE.is_valid({"nb": int(r.nb), "x": r.x}, task) for r in df.itertuples())
        assert s.best_loss == pytest.approx(df["loss"].min())
        assert (tmp_path / tid / "task.json").exists()
        assert read_summary(tmp_path / tid) == s
        assert (s.method, s.run, s.seed, s.parameters) == ("mla", "seed0", 0, ["nb", "x"])
        spans = [(r["start"], r["start"] + r["seconds"]) for r in iter_records(tmp_path / tid)]
        assert s.wall_time == pytest.approx(max(e for _, e in spans) - min(b for b, _ in spans))
    assert (tmp_path / "model.json").exists()
    assert set(read_history(tmp_path / "a")["generation"]) == {0, 1, 2, 3}


class FlakyObjective:
    """A callable objective object: raises for large x, returns a bool (not a loss) for tiny x."""

    def __call__(self, params: dict, task: dict) -> float | bool:
        if params["x"] > 0.4:
            raise RuntimeError("boom")
        if params["x"] < 0.1:
            return True
        return (params["x"] - task["t"]) ** 2


def test_mla_takes_a_callable_object_and_records_failures(tmp_path: Path) -> None:
    space = SearchSpace({"x": (0.0, 1.0)})  # no constraint: one design point per tenth of x
    s = run_mla(
        space,
        FlakyObjective(),
        [("a", {"t": 0.3})],
        tmp_path,
        MLASettings(budget=10, initial=10, seed=2),
        LCMSettings(latent=1, restarts=1),
    )[0]
    df = read_history(tmp_path / "a")
    assert s.evaluations == 10 == len(df)
    failed = df[df["status"] == "failed"]
    assert s.failures == len(failed) == 7  # x < 0.1 once, x > 0.4 six times
    assert list(failed.index) == list(df.index[(df["x"] > 0.4) | (df["x"] < 0.1)])
    assert df.loc[df["status"] == "ok", "loss"].notna().all()
    assert failed.loc[failed["x"] > 0.4, "error"].str.startswith("RuntimeError: boom").all()
    assert failed.loc[failed["x"] < 0.1, "error"].str.contains("not a number").all()


def test_mla_objective_by_reference(tmp_path: Path) -> None:
    space = SearchSpace({"x": (0.0, 1.0)})
    s = run_mla(
        space,
        "propulate.problems.demo:demo_loss",
        [("a", {"t": 0.5})],
        tmp_path,
        MLASettings(budget=3, initial=3, seed=0),
        LCMSettings(latent=1, restarts=1),
    )[0]
    assert s.evaluations == 3 and s.failures == 0


OBJECTIVE = """
import time
def slow_loss(params, task):
    time.sleep(0.1)
    return (params["x"] - task["t"]) ** 2
"""
CAMPAIGN = """
objective: slowobj:slow_loss
parameters:
  x: {type: float, low: 0, high: 1}
task_space:
  t: {type: float, low: 0, high: 1}
"""


def campaign(tmp_path: Path) -> tuple[list[str], dict[str, str]]:
    (tmp_path / "slowobj.py").write_text(OBJECTIVE)
    (tmp_path / "c.yaml").write_text(CAMPAIGN)
    tasks = []
    for i, t in enumerate((0.2, 0.7)):
        p = tmp_path / f"t{i}.json"
        p.write_text(f'{{"id": "t{i}", "task": {{"t": {t}}}}}')
        tasks.append(str(p))
    env = dict(
        os.environ,
        PYTHONPATH=f"{tmp_path}{os.pathsep}{REPO}",
        OPENBLAS_NUM_THREADS="1",
        OMP_NUM_THREADS="1",
    )
    cmd = [
        PY,
        "-m",
        "propulate",
        "mla",
        "--space",
        str(tmp_path / "c.yaml"),
        "--objective",
        "slowobj:slow_loss",
        "--tasks",
        *tasks,
        "--out",
        str(tmp_path / "out"),
        "--budget",
        "6",
        "--initial",
        "3",
        "--seed",
        "1",
        "--latent",
        "1",
        "--restarts",
        "1",
    ]
    return cmd, env


def count(folder: Path) -> int:
    return sum(1 for _ in iter_records(folder))


@pytest.mark.slow
def test_mla_resumes_after_a_kill_without_losing_evaluations(tmp_path: Path) -> None:
    cmd, env = campaign(tmp_path)
    out = tmp_path / "out"
    proc = subprocess.Popen(
        cmd, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    deadline = time.time() + 60
    while time.time() < deadline and count(out / "t0") + count(out / "t1") < 4:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    before = {t: [r["params"] for r in iter_records(out / t)] for t in ("t0", "t1")}
    assert 4 <= sum(map(len, before.values())) < 12, "the kill came too late to test resuming"
    assert not (out / "t0" / "summary.json").exists()
    done = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    for t in ("t0", "t1"):
        after = [r["params"] for r in iter_records(out / t)]
        assert len(after) == 6  # the budget, not budget + what the first start did
        assert all(p in after for p in before[t])  # nothing completed was lost
        assert len({p["x"] for p in after}) == 6
        assert len(list((out / t / "evals").glob("*.jsonl"))) == 2  # two sessions
    rerun = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert rerun.returncode == 0 and count(out / "t0") == 6  # a finished run stays finished


@pytest.mark.slow
@pytest.mark.mpi
def test_mla_under_mpiexec_spreads_tasks_over_ranks(tmp_path: Path) -> None:
    mpiexec = Path(PY).parent / "mpiexec"
    if not mpiexec.exists():
        pytest.skip("no mpiexec in the environment")
    cmd, env = campaign(tmp_path)
    done = subprocess.run(
        [str(mpiexec), "-n", "2", *cmd],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    for t in ("t0", "t1"):
        df = read_history(tmp_path / "out" / t)
        assert len(df) == 6
        assert len({round(x, 12) for x in df["x"]}) == 6
    ranks = {r["rank"] for t in ("t0", "t1") for r in iter_records(tmp_path / "out" / t)}
    assert ranks == {0, 1}
    # one model-guided proposal per task and round: task t0 on rank 0, t1 on rank 1
    guided = read_history(tmp_path / "out" / "t1")
    assert set(guided.loc[guided["generation"] > 0, "rank"]) == {1}


def evaluations(folder: Path) -> list[tuple]:
    """Every record's configuration, loss, status and round, in the order written."""
    return [(r["params"], r["loss"], r["status"], r["generation"]) for r in iter_records(folder)]


@pytest.mark.slow
@pytest.mark.parametrize("model", ["lcm", "joint"])
def test_mla_repeats_exactly_whatever_the_blas_threads(tmp_path: Path, model: str) -> None:
    from threadpoolctl import threadpool_limits

    from propulate.models.joint_gp import JointGP
    from propulate.problems.demo import demo_loss

    space, task_space = SearchSpace({"x": (0.0, 1.0)}), SearchSpace({"t": (0.0, 1.5)})
    tasks = [(f"t{i}", t) for i, t in enumerate(sample_tasks(task_space, 3, seed=0))]
    runs = {}
    for name, threads, seed in (("a", 1, 0), ("b", 2, 0), ("c", 1, 1)):
        with threadpool_limits(limits=threads, user_api="blas"):
            run_mla(
                space,
                demo_loss,
                tasks,
                tmp_path / name,
                MLASettings(budget=8, initial=4, seed=seed, model=model),
                LCMSettings(latent=2, restarts=2, max_points=None),
                task_space=task_space,
            )
        runs[name] = {tid: evaluations(tmp_path / name / tid) for tid, _ in tasks}
    assert all(len(v) == 8 for v in runs["a"].values())
    assert runs["a"] == runs["b"]  # same seed: identical records, 1 or 2 BLAS threads
    kind = LCM if model == "lcm" else JointGP
    a, b = (kind.load(tmp_path / n / "model.json") for n in "ab")
    assert np.array_equal(a.get_theta(), b.get_theta())
    assert runs["a"] != runs["c"]  # the seed changes the designs and what follows


def test_mla_offers_every_task_the_others_incumbents() -> None:
    space = SearchSpace({"x": (0.0, 1.0)})
    xs = [0.05, 0.15, 0.25, 0.35, 0.8]
    ys = [1.0, 1.0, 1.0, 1.0, 0.0]  # a deep point at 0.8, far from the rest
    model = LCM(space.encode_many([{"x": x} for x in xs]), [0] * 5, ys, 1, latent=1)
    model.lengthscale[:] = 0.05
    model.noise[:] = 1e-6
    seen = {space.key({"x": x}) for x in xs}
    elsewhere = {"x": 0.81}  # as if another task's incumbent
    for seed in range(5):
        lone, _ = propose(
            model, 0, space, None, seen, np.random.default_rng(seed), n_candidates=1, n_local=0
        )
        shared, _ = propose(
            model,
            0,
            space,
            None,
            seen,
            np.random.default_rng(seed),
            n_candidates=1,
            n_local=0,
            extra=[elsewhere],
        )
        assert lone is not None and shared is not None
        assert abs(shared["x"] - 0.8) < 0.1  # the incumbent's basin, refined
        if abs(lone["x"] - 0.8) > 0.2:  # the lone design point did not land there
            assert shared != lone


def test_untried_incumbent_skips_infeasible_missing_and_known_basins() -> None:
    space = SearchSpace({"x": (0.0, 1.0)}, constraint=lambda p, t: p["x"] <= t["cap"])
    tried = [{"x": 0.1}, {"x": 0.5}]
    incumbents = [None, {"x": 0.9}, {"x": 0.51}, {"x": 0.3}, {"x": 0.7}]
    # 0.9 violates the cap, 0.51 is within the radius of 0.5: 0.3 is the first untried
    assert untried_incumbent(space, {"cap": 0.8}, tried, incumbents, 0.02) == {"x": 0.3}
    assert untried_incumbent(space, {"cap": 1.0}, tried, incumbents, 0.02) == {"x": 0.9}
    assert untried_incumbent(space, {"cap": 0.8}, tried, incumbents, 0.005) == {"x": 0.51}
    assert untried_incumbent(space, {"cap": 0.8}, [], [None], 0.02) is None
    assert untried_incumbent(space, {"cap": 0.2}, tried, incumbents, 0.02) is None


def test_nearest_tasks_orders_the_others_by_distance() -> None:
    tasks = [{"m": 4, "n": 4}, {"m": 64, "n": 64}, {"m": 10, "n": 4}, {"m": 60, "n": 64}]
    assert nearest_tasks(TASK_SPACE, tasks) == [[2, 3, 1], [3, 2, 0], [0, 3, 1], [1, 2, 0]]


def shifted_loss(params: dict, task: dict) -> float:
    return (params["x"] - 0.2 - 0.5 * task["t"]) ** 2


def test_mla_tasks_try_their_nearest_neighbours_incumbents(tmp_path: Path) -> None:
    space, task_space = SearchSpace({"x": (0.0, 1.0)}), SearchSpace({"t": (0.0, 1.0)})
    tasks = [("a", {"t": 0.0}), ("b", {"t": 0.1}), ("c", {"t": 1.0})]
    designs = initial_designs(space, [t for _, t in tasks], 4, 0)

    def guided(share: int) -> dict[str, list[dict]]:
        out = tmp_path / f"share{share}"
        mla = MLASettings(budget=6, initial=4, share=share)
        run_mla(space, shifted_loss, tasks, out, mla, LCMSettings(latent=1), task_space=task_space)
        return {
            tid: [r["params"] for r in sorted(iter_records(out / tid), key=lambda r: r["start"])]
            for tid, _ in tasks
        }

    best = [
        min(d, key=lambda p: shifted_loss(p, t)) for d, (_, t) in zip(designs, tasks, strict=True)
    ]
    runs = guided(2)
    # the first guided evaluation is the nearest task's incumbent after the initial designs
    assert runs["a"][4] == best[1] and runs["b"][4] == best[0] and runs["c"][4] == best[1]
    # b's incumbent is now a's (tried in round 1): c, which has not tried it, does next
    assert runs["c"][5] == best[0]
    lone = guided(0)
    assert lone["a"][4] != best[1] and lone["c"][4] != best[1]
