"""Transfer on the joint model: TLA1 from the posterior at the new task's values, the frozen
extension TLA2 conditions, the TLA2 run, and ``transfer`` choosing the model."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from propulate.cli import main
from propulate.compat.history import iter_records
from propulate.models.joint_gp import JointGP
from propulate.models.joint_transfer import (
    as_joint,
    extend_joint,
    joint_base,
    joint_tla1,
    nearest_joint_optima,
    run_joint_tla2,
)
from propulate.models.lcm import LCM
from propulate.models.sampling import TaskData, build_lcm
from propulate.models.transfer import tla1
from propulate.space import SearchSpace
from propulate.transfer.joint_posterior import JointPosterior, tla1_prediction

SPACE = SearchSpace({"x": (0.0, 1.0)})
TASKS = SearchSpace({"t": (0.0, 1.0)})
TRAIN = (0.0, 0.2, 0.4, 0.8, 1.0)


def drift(params: dict, task: dict) -> float:
    """One basin whose optimum drifts with the task: ``x* = 0.2 + 0.6 t``."""
    return (params["x"] - 0.2 - 0.6 * task["t"]) ** 2


def training_data(n: int = 12) -> list[TaskData]:
    rng = np.random.default_rng(0)
    data = []
    for i, t in enumerate(TRAIN):
        params = SPACE.latin_hypercube(n, seed=rng)
        data.append(TaskData(f"train{i}", {"t": t}, params, [drift(p, {"t": t}) for p in params]))
    return data


def xs_of(run: Path) -> list[float]:
    """The run's configurations' ``x``, in the order they were started."""
    return [r["params"]["x"] for r in sorted(iter_records(run), key=lambda r: r["start"])]


@pytest.fixture(scope="module")
def joint() -> JointGP:
    return joint_base(training_data(), SPACE, TASKS, seed=0)


def test_joint_tla1_predicts_the_drifting_optimum_between_trained_tasks(joint: JointGP) -> None:
    for t in (0.3, 0.6):
        params, std, band = joint_tla1(joint, SPACE, TASKS, {"t": t}, seed=0)
        assert params["x"] == pytest.approx(0.2 + 0.6 * t, abs=0.03)
        assert set(std) == {"x"} and 0.0 <= std["x"] < 0.1
        assert band["loss_low"] <= band["loss"] <= band["loss_high"]
        # the band holds the measured loss of the prediction
        assert band["loss_low"] <= drift(params, {"t": t}) <= band["loss_high"]
    # the task's values move the prediction: a joint posterior, not the nearest task's optimum
    a = joint_tla1(joint, SPACE, TASKS, {"t": 0.55}, seed=0)[0]["x"]
    b = joint_tla1(joint, SPACE, TASKS, {"t": 0.65}, seed=0)[0]["x"]
    assert 0.03 < b - a < 0.09


def test_tla1_prediction_is_reproducible_and_takes_the_model_data(joint: JointGP) -> None:
    once = joint_tla1(joint, SPACE, TASKS, {"t": 0.6}, seed=3)
    data = json.loads(json.dumps(joint.to_dict()))  # as the tuning database stores it
    optima = [b["params"] for b in data["info"]["best"]]
    assert tla1_prediction(data, SPACE, TASKS, {"t": 0.6}, 3, optima) == once
    assert joint_tla1(JointGP.from_dict(data), SPACE, TASKS, {"t": 0.6}, seed=3) == once


def test_joint_tla1_keeps_to_the_constraint() -> None:
    space = SearchSpace({"x": (0.0, 1.0)}, constraint=lambda p, task: p["x"] <= 0.5)
    model = joint_base(training_data(), space, TASKS, seed=0)
    for t in (0.6, 0.9):  # the unconstrained optimum lies beyond 0.5
        params, _, _ = joint_tla1(model, space, TASKS, {"t": t}, seed=0)
        assert params["x"] <= 0.5 and params["x"] == pytest.approx(0.5, abs=0.02)


def test_extend_joint_is_the_base_posterior_then_conditions_on_the_task(joint: JointGP) -> None:
    task = {"t": 0.6}
    empty = extend_joint(joint, TaskData("new", task), TASKS, SPACE)
    assert empty.n_tasks == joint.n_tasks + 1 and len(empty.y) == len(joint.y)
    X = np.linspace(0, 1, 21)[:, None]
    m0, v0 = empty.predict_standardized(X, joint.n_tasks)
    m1, v1 = JointPosterior(joint.to_dict()).predict(TASKS.encode(task), X)
    assert np.allclose(m0, m1, atol=1e-8) and np.allclose(v0, v1, atol=1e-8)
    assert (empty.y_mean, empty.y_std) == (joint.y_mean, joint.y_std)
    assert np.array_equal(empty.get_theta(), joint.get_theta())
    # one evaluation far from the prediction: the posterior there moves to the observed value
    seen = TaskData("new", task, [{"x": 0.05}], [0.9])
    ext = extend_joint(joint, seen, TASKS, SPACE)
    mean, var = ext.predict(np.array([[0.05]]), joint.n_tasks)
    before, _ = empty.predict(np.array([[0.05]]), joint.n_tasks)
    assert abs(mean[0] - 0.9) < 0.05 < abs(before[0] - 0.9)
    assert ext.info["best"][-1] == {"params": {"x": 0.05}, "loss": 0.9}


def test_run_joint_tla2_starts_from_tla1_then_the_nearest_optima(
    joint: JointGP, tmp_path: Path
) -> None:
    task = {"t": 0.6}
    pred, _, _ = joint_tla1(joint, SPACE, TASKS, task, seed=0)
    optima = nearest_joint_optima(joint, SPACE, TASKS, task)
    assert [o["x"] for o in optima[:2]] == [
        min(d.params, key=lambda p: drift(p, d.task))["x"]
        for d in sorted(training_data(), key=lambda d: abs(d.task["t"] - 0.6))[:2]
    ]
    s = run_joint_tla2(joint, SPACE, TASKS, "new0", task, drift, tmp_path / "a", 5, 2, 0)[0]
    xs = xs_of(tmp_path / "a")
    assert s.evaluations == 5 and s.method == "tla2" and len(set(xs)) == 5
    assert xs[0] == pred["x"] and set(xs[1:3]) == {o["x"] for o in optima[:2]}
    assert s.best_loss <= drift(pred, task)
    # the report reads TLA2's saved joint model: its predictions on the new task
    from propulate.report.model import model_predictions, task_correlation

    saved = JointGP.load(tmp_path / "a" / "model.json")
    mean, low, high = model_predictions(tmp_path / "a" / "model.json", [{"x": 0.5}], "new0")
    assert mean[0] == pytest.approx(saved.predict(np.array([[0.5]]), saved.n_tasks - 1)[0][0])
    assert low[0] < mean[0] < high[0]
    assert task_correlation(tmp_path / "a" / "model.json") is None  # no LCM correlations
    again = run_joint_tla2(joint, SPACE, TASKS, "new0", task, drift, tmp_path / "b", 5, 2, 0)[0]
    assert xs_of(tmp_path / "b") == xs and again.best_loss == s.best_loss


def test_as_joint_fits_on_the_lcm_file_points_and_keeps_its_optima() -> None:
    data = training_data()
    lcm = build_lcm(data, SPACE, TASKS, latent=1, max_points=None).fit(restarts=1, seed=0)
    model = as_joint(LCM.from_dict(lcm.to_dict()), SPACE, TASKS, seed=0)
    assert isinstance(model, JointGP) and len(model.y) == len(lcm.y) == 5 * 12
    assert model.info["best"] == lcm.info["best"]
    assert as_joint(model, SPACE, TASKS) is model


CAMPAIGN = {
    "parameters": {"x": {"type": "float", "low": 0, "high": 1}},
    "task_space": {"t": {"type": "float", "low": 0, "high": 1}},
}


def test_transfer_command_uses_the_lcm_unless_told_joint(tmp_path: Path, capsys) -> None:
    """auto (the default) transfers on the LCM, which transferred better on held-out seeds;
    --transfer-model joint on the joint model fitted on the LCM file's points."""
    lcm = build_lcm(training_data(), SPACE, TASKS, latent=1, max_points=None)
    lcm.fit(restarts=1, seed=0).save(tmp_path / "lcm.json")
    (tmp_path / "c.yaml").write_text(json.dumps(CAMPAIGN))
    (tmp_path / "new.json").write_text(json.dumps({"id": "new0", "task": {"t": 0.6}}))
    base = ["--model", str(tmp_path / "lcm.json"), "--space", str(tmp_path / "c.yaml")]
    base += ["--task", str(tmp_path / "new.json")]
    joint = ["--transfer-model", "joint"]
    assert main(["transfer", "tla1", *base, *joint, "--out", str(tmp_path / "j")]) == 0
    pred = json.loads((tmp_path / "j" / "prediction.json").read_text())
    model = as_joint(LCM.load(tmp_path / "lcm.json"), SPACE, TASKS, seed=0)
    params, std, band = joint_tla1(model, SPACE, TASKS, {"t": 0.6}, seed=0)
    assert pred == {"task": "new0", "params": params, "std": std, "model": "joint", **band}
    assert params["x"] == pytest.approx(0.56, abs=0.03)

    out = tmp_path / "l"
    assert main(["transfer", "tla1", *base, "--out", str(out)]) == 0
    pred = json.loads((out / "prediction.json").read_text())
    lcm_params, _ = tla1(LCM.load(tmp_path / "lcm.json"), SPACE, TASKS, {"t": 0.6}, 0, basin=0.15)
    assert pred["model"] == "lcm" and pred["params"] == lcm_params

    argv = ["transfer", "tla2", *base, *joint, "--objective", f"{__name__}:drift", "--budget", "3"]
    assert main([*argv, "--out", str(tmp_path / "t2")]) == 0
    xs = xs_of(tmp_path / "t2")
    assert len(xs) == 3 and xs[0] == params["x"]
    capsys.readouterr()
