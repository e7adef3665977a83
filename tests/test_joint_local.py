"""The joint model beyond a thousand points: the subsample fit, the neighbourhood posterior,
MLA's model above the threshold, and transfer from a large model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from propulate.models import joint_local, joint_transfer, mla
from propulate.models.joint_gp import JointGP
from propulate.models.joint_local import LocalJointGP, fit_subsampled, local_view, neighbours_of
from propulate.models.joint_transfer import joint_base, joint_tla1, run_joint_tla2
from propulate.models.sampling import TaskData
from propulate.settings import LCMSettings, MLASettings
from propulate.space import SearchSpace

SPACE = SearchSpace({"x": (0.0, 1.0)})
TASKS = SearchSpace({"t": (0.0, 1.0)})


def drift(params: dict, task: dict) -> float:
    """One basin whose optimum drifts with the task: ``x* = 0.2 + 0.6 t``."""
    return (params["x"] - 0.2 - 0.6 * task["t"]) ** 2


def many_tasks(n_tasks: int = 30, per_task: int = 10) -> list[TaskData]:
    rng = np.random.default_rng(1)
    data = []
    for i, t in enumerate(np.linspace(0, 1, n_tasks)):
        task = {"t": float(t)}
        params = SPACE.latin_hypercube(per_task, seed=rng)
        data.append(TaskData(f"t{i:02d}", task, params, [drift(p, task) for p in params]))
    return data


def joint_of(data: list[TaskData]) -> JointGP:
    from propulate.models.sampling import stack_tasks

    X, index, y = stack_tasks(data, SPACE)
    U = TASKS.encode_many([d.task for d in data])
    return JointGP(U, X, index, y, info={"tasks": [{"id": d.id, "task": d.task} for d in data]})


def test_neighbours_are_whole_nearest_tasks_up_to_the_points() -> None:
    model = joint_of(many_tasks())
    sel = neighbours_of(model, model.U[10], points=35)
    tasks = sorted(set(model.task_index[sel].tolist()))
    # whole tasks, nearest first (8 and 12 are equally near), until at least 35 points
    assert tasks in ([8, 9, 10, 11], [9, 10, 11, 12]) and len(sel) == 40
    assert len(neighbours_of(model, model.U[0], points=5)) == 10  # one task is enough


def test_fit_subsampled_fits_on_a_subsample_and_keeps_all_points() -> None:
    model = joint_of(many_tasks())
    fit_subsampled(model, restarts=1, seed=0, fit_points=90)
    assert model.fit_info["points"] == 90 and len(model.y) == 300  # 3 of 10 points per task
    dense = joint_of(many_tasks()).fit(restarts=1, seed=0)
    # the shared lengthscales come out close to the dense fit's
    assert np.allclose(model.get_theta()[:2], dense.get_theta()[:2], atol=0.7)


def test_local_view_predicts_as_the_whole_model() -> None:
    model = joint_of(many_tasks()).fit(restarts=1, seed=0)
    X = np.linspace(0, 1, 41)[:, None]
    for task in (3, 15):
        view = local_view(model, model.U[task], points=100)
        assert len(view.y) == 100 and (view.y_mean, view.y_std) == (model.y_mean, model.y_std)
        m_full, v_full = model.predict(X, task)
        m_view, v_view = view.predict(X, task)
        assert np.max(np.abs(m_full - m_view)) < 0.02 * np.ptp(model.y)
        assert np.all(v_view >= v_full - 1e-9)  # fewer points: never more confident


def test_local_joint_gp_answers_the_loop_and_warm_starts() -> None:
    data = many_tasks()
    model = joint_of(data)
    local = LocalJointGP(model.U, model.X, model.task_index, model.y, points=60, fit_points=90)
    local.fit(restarts=1, seed=0)
    assert local.full.fit_info["points"] == 90
    assert len(local.y) == 300 and local.z.shape == (300,) and local.n_tasks == 30
    m, v = local.predict_standardized(np.array([[0.5]]), 12)
    view = local_view(local.full, local.U[12], 60)
    assert (m, v) == view.predict_standardized(np.array([[0.5]]), 12)
    theta = local.get_theta() + 0.1
    local.set_theta(theta)
    assert np.array_equal(local.full.get_theta(), theta) and not local._views


def test_mla_uses_the_local_model_above_the_threshold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mla, "DENSE_MAX", 40)
    monkeypatch.setattr(joint_local, "NEIGHBOURHOOD", 30)
    hook = mla.joint_fitter(SPACE, TASKS, LCMSettings(restarts=1))
    model = hook(many_tasks(8, 6), None)
    assert isinstance(model, LocalJointGP) and len(model.y) == 48
    again = hook(many_tasks(8, 6), model)  # warm start from the local model
    assert isinstance(again, LocalJointGP)
    tasks = [(f"t{i}", {"t": t}) for i, t in enumerate((0.1, 0.3, 0.5, 0.7, 0.9))]
    settings = MLASettings(budget=12, initial=8, seed=0)
    out = mla.run_mla(SPACE, drift, tasks, tmp_path, settings, LCMSettings(), task_space=TASKS)
    assert [s.evaluations for s in out] == [12] * 5
    assert max(s.best_loss for s in out) < 1e-3
    assert JointGP.load(tmp_path / "model.json").n_tasks == 5


def test_transfer_from_a_large_model_predicts_from_the_neighbourhood(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(joint_transfer, "DENSE_MAX", 100)
    monkeypatch.setattr(joint_transfer, "NEIGHBOURHOOD", 60)
    model = joint_base(many_tasks(), SPACE, TASKS, seed=0)
    assert model.fit_info["points"] == 300 and len(model.y) == 300  # under FIT_POINTS
    task = {"t": 0.47}
    params, _, band = joint_tla1(model, SPACE, TASKS, task, seed=0)
    assert params["x"] == pytest.approx(0.2 + 0.6 * 0.47, abs=0.03)
    assert band["loss_low"] <= band["loss"] <= band["loss_high"]
    s = run_joint_tla2(model, SPACE, TASKS, "new", task, drift, tmp_path, 4, 1, 0)[0]
    saved = JointGP.load(tmp_path / "model.json")
    # TLA2's last model (before its last proposal): the 6 tasks nearest t = 0.47 (60 points)
    # and the new task's first 3 evaluations
    assert s.evaluations == 4 and len(saved.y) == 63 and saved.n_tasks == 31


def test_with_many_tasks_a_proposal_weighs_only_its_nearest_tasks_optima(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from propulate.models import loop

    real = loop.propose
    extras: dict[int, list[int]] = {}

    def spy(*args: object, extra: list = (), **kwargs: object) -> object:  # type: ignore[assignment]
        extras.setdefault(len(extras), []).append(len(extra))
        return real(*args, extra=extra, **kwargs)

    monkeypatch.setattr(loop, "propose", spy)
    tasks = [(f"t{i}", {"t": t}) for i, t in enumerate((0.0, 0.2, 0.4, 0.6, 0.8, 1.0))]
    settings = MLASettings(budget=6, initial=5, seed=0, local_every=0)
    mla.run_mla(SPACE, drift, tasks, tmp_path / "all", settings, task_space=TASKS)
    assert [n for v in extras.values() for n in v] == [6] * 6  # every task's best
    extras.clear()
    monkeypatch.setattr(loop, "SHARED_MAX", 3)
    mla.run_mla(SPACE, drift, tasks, tmp_path / "near", settings, task_space=TASKS)
    assert [n for v in extras.values() for n in v] == [3] * 6  # its own and 2 nearest
