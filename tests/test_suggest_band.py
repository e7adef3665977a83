"""``suggest``'s loss band for an unseen task: calibrated on the training tasks by
leave-one-task-out (:func:`propulate.tuningdb.predictor.band_calibration`), and one standard
deviation for a posterior stored without it."""

from __future__ import annotations

import numpy as np
import pytest

from propulate.models.lcm import LCM
from propulate.space import Float, SearchSpace
from propulate.tuningdb.predictor import band_calibration, expected_loss, posterior_data

SPACE = SearchSpace({"x": Float(0.0, 1.0)})
TASKS = SearchSpace({"t": Float(0.0, 1.0)})


def _model(tasks: int, shift: float = 0.3, n: int = 16, seed: int = 0) -> LCM:
    """An LCM over ``tasks`` tasks whose optimum moves with ``t`` (by ``shift`` over [0, 1])."""
    rng = np.random.default_rng(seed)
    ts = np.linspace(0.0, 1.0, tasks)
    X = rng.random((n * tasks, 1))
    ti = np.repeat(np.arange(tasks), n)
    y = np.sin(8.0 * (X[:, 0] - shift * ts[ti])) + 0.05 * rng.standard_normal(len(X))
    info = {"tasks": [{"task": {"t": float(t)}} for t in ts]}
    return LCM(X, ti, y, tasks, latent=2, info=info).fit(restarts=1, seed=seed)


def test_fewer_than_three_tasks_keep_one_standard_deviation() -> None:
    post = posterior_data(_model(2), TASKS)
    assert post["band"] is None
    band = expected_loss(post, SPACE, TASKS, {"t": 0.5}, {"x": 0.4})
    plain = expected_loss(posterior_data(_model(2)), SPACE, TASKS, {"t": 0.5}, {"x": 0.4})
    assert band == pytest.approx(plain)


def test_the_band_is_calibrated_and_wider_than_one_deviation() -> None:
    model = _model(6)
    plain = posterior_data(model)
    assert "band" not in plain  # stored before the calibration: one standard deviation
    post = posterior_data(model, TASKS)
    band = post["band"]
    assert band["sigmas"] > 0 and band["floor"] > 0
    # a wider coverage never gives a narrower band
    narrow = band_calibration(post, TASKS, coverage=0.5)
    assert narrow is not None and narrow["sigmas"] <= band["sigmas"]
    assert narrow["floor"] == pytest.approx(band["floor"])
    task, params = {"t": 0.45}, {"x": 0.3}
    got, one = (
        expected_loss(post, SPACE, TASKS, task, params),
        expected_loss(plain, SPACE, TASKS, task, params),
    )
    assert got["loss"] == pytest.approx(one["loss"])  # the same prediction, another band
    half, half1 = got["loss_high"] - got["loss"], one["loss_high"] - one["loss"]
    # even where the posterior is certain, the band keeps the misfit between tasks
    assert half >= band["sigmas"] * band["floor"] * post["y_std"] - 1e-12
    assert half > half1


def test_held_out_tasks_fall_in_the_band_of_the_others() -> None:
    # a model of tasks 0, 2, 4, ... predicts tasks 1, 3, ...: the calibrated band holds most
    # of their measured outputs at their best points, one standard deviation far fewer
    full = _model(9, n=20, seed=3)
    X, ti, y = full.X, np.asarray(full.task_index), full.y
    keep = ti % 2 == 0
    info = {"tasks": [{"task": {"t": float(t)}} for t in np.linspace(0, 1, 9)[::2]]}
    even = LCM(X[keep], ti[keep] // 2, y[keep], 5, latent=2, info=info).fit(restarts=1, seed=3)
    post, plain = posterior_data(even, TASKS), posterior_data(even)
    held = held1 = total = 0
    for j in range(1, 9, 2):
        rows = np.flatnonzero(ti == j)
        best = rows[np.argsort(y[rows])[:5]]
        for i in best:
            params, task = {"x": float(X[i, 0])}, {"t": j / 8}
            b, b1 = (
                expected_loss(post, SPACE, TASKS, task, params),
                expected_loss(plain, SPACE, TASKS, task, params),
            )
            held += b["loss_low"] <= y[i] <= b["loss_high"]
            held1 += b1["loss_low"] <= y[i] <= b1["loss_high"]
            total += 1
    assert held >= 0.8 * total and held > held1


def _joint(tasks: int, n: int = 16, seed: int = 0) -> dict:
    """A joint model's data over ``tasks`` tasks at t in [0, 1] whose optimum moves with t."""
    rng = np.random.default_rng(seed)
    U = np.linspace(0.0, 1.0, tasks)[:, None]
    X = rng.random((n * tasks, 1))
    index = np.repeat(np.arange(tasks), n)
    y = np.sin(8.0 * (X[:, 0] - 0.3 * U[index, 0])) + 0.05 * rng.standard_normal(len(X))
    theta = np.log([0.3, 0.15, 1.0, 1e-3])  # lengthscales (task, x), variance, noise
    return {"U": U, "X": X, "task_index": index, "y": y, "log_output": False, "theta": theta}


def test_the_joint_models_band_is_calibrated_on_its_tasks() -> None:
    from propulate.transfer.joint_posterior import BAND_SIGMAS, JointPosterior

    post = JointPosterior(_joint(6))
    cal = post.calibration()
    assert cal is not None and cal["sigmas"] > 0 and cal["floor"] > 0
    m, v = post.predict(np.array([0.45]), np.array([[0.3]]))
    got, one = post.band(float(m[0]), float(v[0])), post.band(float(m[0]), float(v[0]), 1.0)
    assert got["loss"] == pytest.approx(one["loss"])
    half = got["loss_high"] - got["loss"]
    assert half == pytest.approx(cal["sigmas"] * np.sqrt(v[0] + cal["floor"] ** 2) * post.y_std)
    assert half > one["loss_high"] - one["loss"]
    # two tasks: nothing to hold out against, the band stays BAND_SIGMAS deviations
    two = JointPosterior(_joint(2))
    assert two.calibration() is None
    m, v = two.predict(np.array([0.5]), np.array([[0.3]]))
    plain = two.band(float(m[0]), float(v[0]), BAND_SIGMAS)
    assert two.band(float(m[0]), float(v[0])) == pytest.approx(plain)


def test_a_loss_never_negative_in_training_is_never_predicted_negative() -> None:
    # A runtime or an error rate: every training loss is >= 0, and the band of a poorly known
    # unseen task reaches far below zero unless it is cut there.
    from propulate.transfer.joint_posterior import JointPosterior

    rng = np.random.default_rng(1)
    X, ti = rng.random((18, 1)), np.repeat(np.arange(3), 6)
    y = np.abs(np.sin(8.0 * X[:, 0] + 3.0 * ti))  # in [0, 1], never below
    info = {"tasks": [{"task": {"t": t}} for t in (0.0, 0.5, 1.0)]}
    post = posterior_data(LCM(X, ti, y, 3, latent=1, info=info).fit(restarts=1, seed=1), TASKS)
    assert post["nonnegative"]
    post["band"] = {"sigmas": 50.0, "floor": 1.0}  # a band far wider than the losses' range
    signed = {**post, "nonnegative": False}  # the same posterior, losses that may go negative
    lows = []
    for t in np.linspace(0.0, 1.0, 11):
        task, params = {"t": float(t)}, {"x": 0.5}
        cut, raw = (
            expected_loss(post, SPACE, TASKS, task, params),
            expected_loss(signed, SPACE, TASKS, task, params),
        )
        assert min(cut.values()) >= 0.0
        assert cut == {k: max(v, 0.0) for k, v in raw.items()}
        lows.append(raw["loss_low"])
    assert min(lows) < 0.0  # the cut mattered

    data = _joint(4)
    data["y"] = np.abs(data["y"])
    joint = JointPosterior(data)
    m, v = joint.predict(np.array([0.5]), np.array([[0.3]]))
    assert joint.nonnegative and joint.band(float(m[0]), float(v[0]), 50.0)["loss_low"] == 0.0
    data["y"][0] = -1e-3  # one negative training loss: no cut
    signed_joint = JointPosterior(data)
    m, v = signed_joint.predict(np.array([0.5]), np.array([[0.3]]))
    assert signed_joint.band(float(m[0]), float(v[0]), 50.0)["loss_low"] < 0.0
