"""The first paper's search space and the objective that trains the digits network with it."""

from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np
import pytest
import yaml

from propulate.campaign import Campaign
from propulate.problems.digits_paper import activation, learning_rate, loss_gradient
from propulate.propagators.random_search import RandomSearch
from propulate.space import SearchSpace

REPO = Path(__file__).resolve().parents[1]
SPACE_FILE = REPO / "examples" / "digits_optimizers" / "paper_space.yaml"
LOSSES = SearchSpace.from_yaml(SPACE_FILE)["loss"].choices
ACTIVATIONS = SearchSpace.from_yaml(SPACE_FILE)["activation"].choices


def test_the_space_holds_the_tables_choices() -> None:
    space = SearchSpace.from_yaml(SPACE_FILE)
    assert set(space["optimizer"].choices) == {"adagrad", "sgd", "adadelta", "rmsprop"}
    assert len(LOSSES) == 6 and len(ACTIVATIONS) == 12
    assert space.dim == 27 and len(space.conditions) == 15
    assert space.is_active("nesterov", {"optimizer": "sgd", "nesterov": "true"})
    assert not space.is_active("rho", {"optimizer": "sgd", "rho": 0.9})


@pytest.mark.parametrize("name", LOSSES)
def test_each_training_loss_has_its_gradient(name: str) -> None:
    """Central differences of the mean loss against the analytic gradient."""
    gen = np.random.default_rng(1)
    z = gen.normal(0, 2, (5, 4))
    onehot = np.eye(4)[gen.integers(0, 4, 5)]
    _, grad = loss_gradient(name, z, onehot)
    num = np.zeros_like(z)
    for idx in np.ndindex(z.shape):
        up, down = z.copy(), z.copy()
        up[idx] += 1e-6
        down[idx] -= 1e-6
        num[idx] = (
            loss_gradient(name, up, onehot)[0] - loss_gradient(name, down, onehot)[0]
        ) / 2e-6
    assert np.allclose(grad, num, atol=1e-5)


@pytest.mark.parametrize("name", ACTIVATIONS)
def test_each_activation_passes_its_gradient_back(name: str) -> None:
    gen = np.random.default_rng(2)
    x = gen.normal(0, 1.5, (3, 5))
    x[np.abs(np.abs(x) - 2.5) < 1e-3] += 0.01  # away from hard_sigmoid's kinks
    x[np.abs(x) < 1e-3] += 0.01  # and from relu's and elu's
    up_grad = gen.normal(0, 1, x.shape)
    f, back = activation(name)
    analytic = back(x, f(x), up_grad)
    num = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        a, b = x.copy(), x.copy()
        a[idx] += 1e-6
        b[idx] -= 1e-6
        num[idx] = ((f(a) - f(b)) * up_grad).sum() / 2e-6
    assert np.allclose(analytic, num, atol=1e-5)


def test_the_learning_rate_warms_up_then_decays() -> None:
    p = {"initial_lr": 0.1, "warmup_steps": 10, "warmup_power": 1.0, "decay_steps": 100}
    exp = {**p, "schedule": "exponential", "exponential_decay_rate": 0.5}
    assert learning_rate(exp, 4, 0) == pytest.approx(0.05)
    assert learning_rate(exp, 9, 0) == pytest.approx(0.1)
    assert learning_rate(exp, 110, 0) == pytest.approx(0.05)
    inv = {**p, "schedule": "inverse_time", "inverse_decay_rate": 0.5, "inverse_staircase": "true"}
    assert learning_rate(inv, 109, 0) == pytest.approx(0.1)  # the staircase's first step
    assert learning_rate(inv, 110, 0) == pytest.approx(0.1 / 1.5)
    poly = {**p, "schedule": "polynomial", "end_lr": 0.01, "power": 1.0}
    assert learning_rate({**poly, "polynomial_staircase": "false"}, 60, 0) == pytest.approx(0.055)
    assert learning_rate({**poly, "polynomial_staircase": "true"}, 60, 40) == pytest.approx(0.073)
    assert learning_rate({**poly, "polynomial_staircase": "false"}, 10**6, 0) == pytest.approx(0.01)


def test_random_configurations_of_the_space_train() -> None:
    """Every optimizer, and whatever else a random draw holds, trains for two epochs: finite
    validation losses, or the diverged value once."""
    pytest.importorskip("sklearn")
    from propulate.problems.digits_mlp import DIVERGED
    from propulate.problems.digits_paper import digits_paper

    space = SearchSpace.from_yaml(SPACE_FILE)
    draw = RandomSearch(space, random.Random(5))
    seen, finite = set(), 0
    for _ in range(12):
        params = dict(draw())
        values = list(digits_paper(params, epochs=2))
        assert values == [DIVERGED] or (len(values) == 2 and all(math.isfinite(v) for v in values))
        finite += values != [DIVERGED]
        seen.add(params["optimizer"])
    assert seen == set(space["optimizer"].choices) and finite >= 6


def test_a_sensible_configuration_learns() -> None:
    pytest.importorskip("sklearn")
    from propulate.problems.digits_paper import digits_paper

    params = {
        "optimizer": "sgd", "momentum": 0.9, "nesterov": "true", "use_clipnorm": "false",
        "use_clipvalue": "false", "use_ema": "true", "ema_momentum": 0.9,
        "ema_overwrite_frequency": 1000, "warmup_steps": 20, "initial_lr": 0.05,
        "decay_steps": 500, "warmup_power": 1.0, "schedule": "exponential",
        "exponential_decay_rate": 0.5, "loss": "categorical_crossentropy",
        "activation": "relu", "width": 64,
    }  # fmt: skip
    values = list(digits_paper(params, epochs=5))
    assert values[-1] < min(values[0], 0.4)  # a uniform guess: 2.3 nats


def test_the_paper_campaign_is_valid() -> None:
    utils = pytest.importorskip("snakemake.utils")
    cfg = yaml.safe_load((REPO / "config" / "digits_paper.yaml").read_text())
    utils.validate(cfg, str(REPO / "workflow" / "schemas" / "config.schema.yaml"))
    campaign = Campaign.from_config(cfg)
    assert campaign.objective == "propulate.problems.digits_paper:digits_paper"
    assert SearchSpace.from_dict({"parameters": campaign.parameters}).dim == 27
