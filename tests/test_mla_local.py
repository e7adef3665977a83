"""MLA's local rounds: a task's own GP, searched near the other tasks' best configurations."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from propulate.compat.history import iter_records
from propulate.models.acquisition import propose
from propulate.models.lcm import LCM
from propulate.models.loop import ModelGuidedLoop, TaskRun
from propulate.models.loop_settings import LoopSettings
from propulate.models.mla import run_mla
from propulate.settings import LCMSettings, MLASettings
from propulate.space import SearchSpace

SPACE = SearchSpace({"x": (0.0, 1.0)})
TASKS = SearchSpace({"t": (0.0, 1.0)})


def deep_at(x_deep: float) -> LCM:
    """A one-task model whose data has one deep point at ``x_deep``."""
    xs = [0.05, 0.15, 0.25, 0.35, 0.5, x_deep]
    ys = [1.0] * 5 + [0.0]
    model = LCM(SPACE.encode_many([{"x": x} for x in xs]), [0] * 6, ys, 1, latent=1)
    model.lengthscale[:] = 0.05
    model.noise[:] = 1e-6
    return model


def test_propose_near_searches_only_around_the_centres() -> None:
    model = deep_at(0.8)
    seen = {SPACE.key({"x": x}) for x in (0.05, 0.15, 0.25, 0.35, 0.5, 0.8)}
    centres = SPACE.encode_many([{"x": 0.2}, {"x": 0.62}])
    for seed in range(5):
        free, _ = propose(model, 0, SPACE, None, seen, np.random.default_rng(seed))
        assert free is not None and abs(free["x"] - 0.8) < 0.05  # EI refines the deep point
        near, ei = propose(
            model, 0, SPACE, None, seen, np.random.default_rng(seed), near=(centres, 0.05)
        )
        assert near is not None and ei >= 0
        assert min(abs(near["x"] - 0.2), abs(near["x"] - 0.62)) <= 0.05 + 1e-12
    # extra candidates outside the balls are not proposed either
    p, _ = propose(
        model,
        0,
        SPACE,
        None,
        seen,
        np.random.default_rng(0),
        extra=[{"x": 0.81}],
        near=(centres, 0.05),
    )
    assert p is not None and p != {"x": 0.81}


def test_propose_near_returns_none_when_the_balls_are_exhausted() -> None:
    space = SearchSpace({"n": (0, 10)})
    design = [{"n": v} for v in (0, 2, 4, 5, 6, 8, 10)]
    model = LCM(space.encode_many(design), [0] * 7, [float(abs(d["n"] - 3)) for d in design], 1)
    model.fit(restarts=1, seed=0)
    seen = {space.key(p) for p in design}
    centre = space.encode_many([{"n": 5}])
    p, _ = propose(model, 0, space, None, seen, np.random.default_rng(0), near=(centre, 0.15))
    assert p is None  # 4, 5 and 6 are all tried; 3 (unseen, best) lies outside the ball
    p, _ = propose(model, 0, space, None, seen, np.random.default_rng(0))
    assert p is not None and p["n"] in (1, 3, 7, 9)


def shifted_loss(params: dict, task: dict) -> float:
    return (params["x"] - 0.2 - 0.5 * task["t"]) ** 2


def guided_runs(out: Path, local_every: int) -> dict[str, list[list[dict]]]:
    """Each task's records of a 2-task MLA, grouped by round."""
    tasks = [("a", {"t": 0.0}), ("b", {"t": 1.0})]
    run_mla(
        SPACE,
        shifted_loss,
        tasks,
        out,
        MLASettings(budget=8, initial=4, share=0, local_every=local_every, local_radius=0.05),
        LCMSettings(latent=1, restarts=1),
        task_space=TASKS,
    )
    runs: dict[str, list[list[dict]]] = {}
    for tid, _ in tasks:
        recs = list(iter_records(out / tid))
        rounds = sorted({r["generation"] for r in recs})
        runs[tid] = [[r for r in recs if r["generation"] == g] for g in rounds]
    return runs


def best_before(rounds: list[list[dict]], k: int) -> float:
    """The best x of the records of the rounds before ``k``."""
    recs = [r for g in rounds[:k] for r in g]
    return min(recs, key=lambda r: r["loss"])["params"]["x"]


def test_every_second_guided_evaluation_is_local(tmp_path: Path) -> None:
    runs = guided_runs(tmp_path / "local", 2)
    # round 0: the 4 initial points; rounds 1..4: one guided evaluation each; rounds 2 and 4
    # are local: within 0.05 of the other task's best so far, not near the task's own optimum
    for tid, other in (("a", "b"), ("b", "a")):
        rounds = runs[tid]
        assert [len(g) for g in rounds] == [4, 1, 1, 1, 1]
        for k in (2, 4):
            x = rounds[k][0]["params"]["x"]
            assert abs(x - best_before(runs[other], k)) <= 0.05 + 1e-12
    plain = guided_runs(tmp_path / "plain", 0)
    xa = plain["a"][2][0]["params"]["x"]
    assert abs(xa - best_before(plain["b"], 2)) > 0.05  # without: a stays near its optimum


def test_local_rounds_need_a_model() -> None:
    with pytest.raises(ValueError, match="local_model"):
        ModelGuidedLoop(
            SPACE,
            shifted_loss,
            [TaskRun("a", {"t": 0.0}, Path("unused"))],
            LoopSettings(budget=4, initial=2, local_every=2),
            lambda i: [],
            lambda data, prev: None,
        )


@pytest.mark.slow
def test_cli_refuses_a_bad_local_setting(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(
        "objective: propulate.problems.demo:demo_loss\n"
        "parameters:\n  x: {type: float, low: 0, high: 1}\n"
        "task_space:\n  t: {type: float, low: 0, high: 1}\n"
    )
    (tmp_path / "t.json").write_text('{"id": "a", "task": {"t": 0.5}}')
    args = (
        f"mla --space {tmp_path / 'c.yaml'} --objective propulate.problems.demo:demo_loss "
        f"--tasks {tmp_path / 't.json'} --out {tmp_path / 'out'} --local-radius 0"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "propulate", *args.split()],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2 and "--local-radius: must be a finite number > 0" in proc.stderr
    assert not (tmp_path / "out").exists()
