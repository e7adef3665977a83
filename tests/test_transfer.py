"""TLA1 validity and accuracy, the frozen extension of TLA2, and the TLA2 run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from propulate.compat.history import iter_records
from propulate.models.sampling import TaskData, build_lcm
from propulate.models.transfer import basin_line, extend_model, nearest_optima, run_tla2, tla1
from propulate.runs.summary import read_summary
from propulate.settings import TransferSettings
from propulate.space import SearchSpace


def nb_constraint(params: dict, task: dict) -> bool:
    return params["nb"] <= min(task["m"], task["n"])


SPACE = SearchSpace(
    {
        "nb": (1, 64),
        "x": {"type": "float", "low": 1e-3, "high": 1.0, "log": True},
        "mode": ("a", "b", "c"),
    },
    constraint=nb_constraint,
)
TASK_SPACE = SearchSpace({"m": (4, 64), "n": (4, 64)})


def loss(params: dict, task: dict) -> float:
    """Optimum at nb ~ m - 2 (a constraint-hugging optimum), x ~ n / 64, mode b."""
    return (
        ((params["nb"] - task["m"] + 2) / 64) ** 2
        + (np.log(params["x"] / (task["n"] / 64))) ** 2
        + (0.0 if params["mode"] == "b" else 0.3)
    )


class LossObject:
    """:func:`loss` as an object with ``__call__(params, task)``, counting its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, params: dict, task: dict) -> float:
        self.calls += 1
        return loss(params, task)


def training_model(latent: int = 2):
    rng = np.random.default_rng(0)
    data = []
    for i, m in enumerate((10, 20, 30, 40, 50, 60)):
        task = {"m": m, "n": 70 - m}
        params = SPACE.latin_hypercube(12, seed=rng, task=task)
        best = {"nb": m - 2, "x": task["n"] / 64, "mode": "b"}
        params.append(best)
        data.append(TaskData(f"train{i}", task, params, [loss(p, task) for p in params]))
    model = build_lcm(data, SPACE, TASK_SPACE, latent=latent, max_points=None)
    return model.fit(restarts=1, seed=0), data


@pytest.fixture(scope="module")
def trained():
    return training_model()


@pytest.mark.slow
def test_tla1_predicts_a_valid_configuration(trained) -> None:
    model, _ = trained
    for task in ({"m": 5, "n": 64}, {"m": 64, "n": 6}, {"m": 35, "n": 35}):
        params, std = tla1(model, SPACE, TASK_SPACE, task, seed=1)
        assert SPACE.in_bounds(params) and SPACE.satisfies(params, task)
        assert isinstance(params["nb"], int) and params["mode"] in ("a", "b", "c")
        assert set(std) == {"nb", "x", "mode"} and all(v >= 0 for v in std.values())


def test_tla1_regression_follows_the_trend_of_the_optima(trained) -> None:
    model, _ = trained
    params, std = tla1(model, SPACE, TASK_SPACE, {"m": 35, "n": 35}, seed=0, basin=0.0)
    assert abs(params["nb"] - 33) <= 4
    assert params["mode"] == "b"
    assert 35 / 64 / 1.5 < params["x"] < 35 / 64 * 1.5
    assert std["mode"] < 0.05  # every training task agrees on the mode


def test_tla1_repairs_constraint_violations(trained) -> None:
    model, _ = trained
    task = {"m": 4, "n": 4}  # the trend says nb ~ 2..8; only nb <= 4 is allowed
    params, _ = tla1(model, SPACE, TASK_SPACE, task, seed=0)
    assert params["nb"] <= 4


def test_extend_model_fits_only_the_new_task(trained) -> None:
    base, data = trained
    before = base.get_theta().copy()
    task = {"m": 25, "n": 45}
    cfgs = SPACE.latin_hypercube(4, seed=5, task=task)
    new = TaskData("new", task, cfgs, [loss(p, task) for p in cfgs])
    ext = extend_model(base, new, TASK_SPACE, SPACE)
    assert np.array_equal(base.get_theta(), before)  # the base model is untouched
    assert ext.n_tasks == base.n_tasks + 1 and len(ext.y) == len(base.y) + 4
    assert np.array_equal(ext.lengthscale, base.lengthscale)
    assert np.array_equal(ext.W[:, :-1], base.W) and np.array_equal(ext.kappa[:, :-1], base.kappa)
    assert np.array_equal(ext.noise[:-1], base.noise)
    assert (ext.y_mean, ext.y_std) == (base.y_mean, base.y_std)
    near = extend_model(base, new, TASK_SPACE, SPACE, fit=False)
    # started between the two nearest tasks, (20, 50) and (30, 40), equally far from (25, 45)
    assert np.allclose(near.W[:, -1], 0.5 * (base.W[:, 1] + base.W[:, 2]))
    assert np.array_equal(near.kappa[:, -1], base.kappa[:, 1])
    assert near.noise[-1] == base.noise[1]
    # the MAP fit starts there with no penalty, so it can only gain likelihood
    assert ext.log_likelihood() >= near.log_likelihood()
    assert not np.allclose(ext.W[:, -1], near.W[:, -1])
    ml = extend_model(base, new, TASK_SPACE, SPACE, prior_std=None)
    assert not np.allclose(ml.get_theta(), ext.get_theta())  # the prior changes the fit
    tight = extend_model(base, new, TASK_SPACE, SPACE, prior_std=(1e-6, 1e-6))
    assert np.allclose(tight.get_theta(), near.get_theta(), atol=1e-4)
    empty = extend_model(base, TaskData("new", task), TASK_SPACE, SPACE)  # nothing to fit on
    assert np.array_equal(empty.get_theta(), near.get_theta())
    assert ext.info["tasks"][-1] == {"id": "new", "task": task}


def budget(n: int, **other: int) -> TransferSettings:
    """TLA2's settings with ``n`` evaluations."""
    return TransferSettings(tla2_budget=n, **other)


def test_run_tla2_starts_from_tla1_and_spends_the_budget(trained, tmp_path: Path) -> None:
    base, _ = trained
    task = {"m": 45, "n": 25}
    pred, _ = tla1(base, SPACE, TASK_SPACE, task, seed=0)
    objective = LossObject()  # a callable object, as a command objective is
    s = run_tla2(base, SPACE, TASK_SPACE, "new0", task, objective, tmp_path, budget(4))[0]
    assert objective.calls == 4
    recs = sorted(iter_records(tmp_path), key=lambda r: r["start"])
    assert len(recs) == 4 == s.evaluations
    assert recs[0]["params"] == pred and recs[0]["generation"] == 0
    assert {r["method"] for r in recs} == {"tla2"} and s.method == "tla2"
    assert {r["run"] for r in recs} == {"seed0"} and read_summary(tmp_path) == s
    assert all(SPACE.is_valid(r["params"], task) for r in recs)
    assert len({SPACE.key(r["params"]) for r in recs}) == 4
    assert (tmp_path / "model.json").exists() and (tmp_path / "summary.json").exists()


@pytest.mark.slow
def test_run_tla2_repeats_exactly_and_its_seed_changes_the_evaluations(
    trained, tmp_path: Path
) -> None:
    from threadpoolctl import threadpool_limits

    base, _ = trained
    task = {"m": 33, "n": 20}
    runs = {}
    for name, threads, seed in (("a", 1, 0), ("b", 2, 0), ("c", 1, 3)):
        with threadpool_limits(limits=threads, user_api="blas"):
            run_tla2(
                base, SPACE, TASK_SPACE, "new0", task, loss, tmp_path / name, budget(4, seed=seed)
            )
        runs[name] = [(r["params"], r["loss"]) for r in iter_records(tmp_path / name)]
    assert len(runs["a"]) == 4 and runs["a"] == runs["b"]
    assert runs["a"] != runs["c"]


@pytest.mark.slow
def test_run_tla2_tries_the_nearest_training_optima_after_tla1(trained, tmp_path: Path) -> None:
    base, data = trained
    task = {"m": 45, "n": 25}  # nearest training tasks: (40, 30), then (50, 20)
    pred, _ = tla1(base, SPACE, TASK_SPACE, task, seed=0)
    optima = nearest_optima(base, SPACE, TASK_SPACE, task)
    assert optima[:2] == [SPACE.decode(SPACE.encode(data[k].best()[0])) for k in (3, 4)]
    run_tla2(base, SPACE, TASK_SPACE, "new0", task, loss, tmp_path / "a", budget(4, tla2_share=2))
    recs = sorted(iter_records(tmp_path / "a"), key=lambda r: r["start"])
    feasible = [p for p in optima if SPACE.satisfies(p, task)]  # (40, 30)'s nb is too large
    assert feasible[0] != optima[0]
    assert [r["params"] for r in recs[:3]] == [pred, feasible[0], feasible[1]]
    run_tla2(base, SPACE, TASK_SPACE, "new0", task, loss, tmp_path / "b", budget(4, tla2_share=0))
    recs = sorted(iter_records(tmp_path / "b"), key=lambda r: r["start"])
    assert recs[0]["params"] == pred and recs[1]["params"] != feasible[0]


def test_basin_line_moves_along_one_basin_and_stays_put_across_basins() -> None:
    T = np.array([[0.0], [0.2], [0.3], [1.0]])
    X = np.array([[0.50], [0.40], [0.90], [0.10]])
    # tasks 0 and 1 share a basin (optima 0.1 apart): halfway between them, halfway between
    assert basin_line(T, X, np.array([0.1]), 0.15) == pytest.approx([0.45])
    # beyond task 0 the line is extrapolated
    assert basin_line(T, X, np.array([-0.1]), 0.15) == pytest.approx([0.55])
    # near task 2, whose nearest others lie in other basins: its own optimum
    assert basin_line(T, X, np.array([0.32]), 0.15) == pytest.approx([0.90])
    # a basin size below the optima's distance: the nearest optimum
    assert basin_line(T, X, np.array([0.05]), 0.05) == pytest.approx([0.50])


def test_tla1_basin_line_differs_from_the_regression(trained) -> None:
    model, _ = trained
    task = {"m": 12, "n": 58}  # nearest training task m = 10 (optimum nb = 8)
    line, _ = tla1(model, SPACE, TASK_SPACE, task, seed=0, basin=0.01)
    assert line["nb"] == 8 and line["mode"] == "b"  # no optimum within 0.01: the nearest's
    regression, _ = tla1(model, SPACE, TASK_SPACE, task, seed=0, basin=0.0)
    assert regression != line
