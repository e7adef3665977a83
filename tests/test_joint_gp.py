"""The joint GP over task values and configuration (MLA's ``joint`` model)."""

from __future__ import annotations

import numpy as np
import pytest

from propulate.models.joint_gp import JointGP
from propulate.models.mla import run_mla
from propulate.problems.demo import demo_loss
from propulate.settings import LCMSettings, MLASettings
from propulate.space import SearchSpace


def shifted_bowls(n_tasks: int = 5, per_task: int = 8, seed: int = 0) -> JointGP:
    """Tasks ``t = 0, 0.25, ...`` of ``(x - 0.2 - 0.6 t)^2``, the last one with two points."""
    rng = np.random.default_rng(seed)
    U = np.linspace(0.0, 1.0, n_tasks)[:, None]
    counts = [per_task] * (n_tasks - 1) + [2]
    index = np.repeat(np.arange(n_tasks), counts)
    X = rng.random((len(index), 1))
    X[index == n_tasks - 1, 0] = [0.05, 0.35]  # both far from that task's optimum at 0.8
    y = (X[:, 0] - 0.2 - 0.6 * U[index, 0]) ** 2
    return JointGP(U, X, index, y)


def test_gradient_matches_finite_differences() -> None:
    m = shifted_bowls()
    theta = np.array([-1.0, -0.7, 0.2, -6.0])
    mask = np.ones(4, bool)
    _, grad = m.objective(theta, mask)
    h = 1e-6
    numeric = [
        (m.objective(theta + e, mask)[0] - m.objective(theta - e, mask)[0]) / (2 * h)
        for e in np.eye(4) * h
    ]
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-6)


def test_a_sparse_task_finds_its_optimum_from_its_neighbours() -> None:
    m = shifted_bowls().fit(restarts=2, seed=0)
    xs = np.linspace(0, 1, 201)[:, None]
    mean, var = m.predict(xs, 4)
    # its own two points lie at 0.05 and 0.35; the trend across tasks puts the optimum at 0.8
    assert abs(xs[int(np.argmin(mean)), 0] - 0.8) < 0.1
    assert np.all(var >= 0)
    # at its own points the posterior mean is its data
    own = m.task_index == 4
    np.testing.assert_allclose(m.predict(m.X[own], 4)[0], m.y[own], atol=1e-3)


def test_saved_model_predicts_as_the_fitted_one(tmp_path) -> None:
    m = shifted_bowls().fit(restarts=1, seed=0)
    m.save(tmp_path / "model.json")
    back = JointGP.load(tmp_path / "model.json")
    xs = np.linspace(0, 1, 7)[:, None]
    for task in range(m.n_tasks):
        np.testing.assert_array_equal(back.predict(xs, task)[0], m.predict(xs, task)[0])
    (tmp_path / "other.json").write_text('{"model": "lcm"}')
    with pytest.raises(ValueError, match="not a joint"):
        JointGP.load(tmp_path / "other.json")


def test_bad_data_is_refused() -> None:
    with pytest.raises(ValueError, match="task_index"):
        JointGP([[0.0]], [[0.5]], [1], [1.0])
    with pytest.raises(ValueError, match="positive"):
        JointGP([[0.0]], [[0.5]], [0], [-1.0], log_output=True)


def test_mla_runs_with_the_joint_model(tmp_path) -> None:
    space, tasks_space = SearchSpace({"x": (0.0, 1.0)}), SearchSpace({"t": (0.0, 1.5)})
    tasks = [(f"t{i}", {"t": t}) for i, t in enumerate((0.1, 0.5, 0.9))]
    mla = MLASettings(budget=8, initial=5, seed=3, model="joint")
    runs = run_mla(space, demo_loss, tasks, tmp_path, mla, LCMSettings(), task_space=tasks_space)
    assert [s.evaluations for s in runs] == [8, 8, 8]
    model = JointGP.load(tmp_path / "model.json")
    assert model.n_tasks == 3 and len(model.y) == 21  # fitted before the last round
    again = run_mla(
        space, demo_loss, tasks, tmp_path / "b", mla, LCMSettings(), task_space=tasks_space
    )
    assert [s.best_loss for s in again] == [s.best_loss for s in runs]
    with pytest.raises(ValueError, match="task space"):
        run_mla(space, demo_loss, tasks, tmp_path / "c", mla, LCMSettings())
