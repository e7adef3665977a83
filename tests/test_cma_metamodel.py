"""CMA-ES's quadratic model (:mod:`propulate.propagators.cma_metamodel`): it finds the minimum
of a quadratic, it makes CMA-ES reach the optimum of an ill-conditioned ellipsoid sooner, and
the registry's ``cma`` uses it by the run's budget."""

from __future__ import annotations

import math
import random
from types import SimpleNamespace

import numpy as np
import pytest

from propulate.plugins.facts import RunFacts
from propulate.population import Individual
from propulate.propagators.cma_metamodel import AUTO_BUDGET, QuadraticModel, coefficients
from propulate.propagators.cmaes import CMAPropagator
from propulate.propagators.registry import build_propagator, propagator_spec
from propulate.settings import EvolveSettings
from propulate.space import SearchSpace


def state(mean: np.ndarray, sigma: float) -> SimpleNamespace:
    """The parts of a CMA-ES distribution the model reads (an isotropic one)."""
    n = len(mean)
    return SimpleNamespace(mean=mean, sigma=sigma, invsqrtC=np.eye(n), scale=np.ones(n))


def test_the_model_proposes_the_minimum_of_a_quadratic() -> None:
    rng = np.random.default_rng(0)
    n, optimum = 3, np.array([0.3, 0.6, 0.45])
    H = np.array([[4.0, 1.0, 0.0], [1.0, 3.0, 0.5], [0.0, 0.5, 2.0]])
    model = QuadraticModel(n)
    assert model.propose(state(np.full(n, 0.5), 0.1)) is None  # too few points yet
    for x in rng.uniform(0.2, 0.8, (2 * coefficients(n), n)):
        d = x - optimum
        model.add(x, float(d @ H @ d) + 7.0)
    x = model.propose(state(np.full(n, 0.5), 0.1))
    assert x is not None
    np.testing.assert_allclose(x, optimum, atol=1e-8)


def test_a_concave_model_or_a_far_minimum_proposes_nothing() -> None:
    rng = np.random.default_rng(1)
    n = 2
    concave, far = QuadraticModel(n), QuadraticModel(n)
    for x in rng.uniform(0.4, 0.6, (2 * coefficients(n), n)):
        concave.add(x, -float(np.sum((x - 0.5) ** 2)))
        far.add(x, float(np.sum((x - 0.5) ** 2)) + x[0])  # minimum at x0 = 0.0: on the border
    assert concave.propose(state(np.full(n, 0.5), 0.05)) is None
    tight = state(np.full(n, 0.5), 0.001)  # the minimum is thousands of sigmas away
    assert far.propose(tight) is None


def evaluations_to(target: float, metamodel: bool, seed: int) -> int:
    """One worker's evaluations until a 4-D ellipsoid (condition 1e4) is within ``target``."""
    space = SearchSpace({f"x{i}": (-5.0, 5.0) for i in range(4)})
    scales = 10.0 ** (2.0 * np.arange(4) / 3)  # 1 .. 100: condition 1e4
    prop = CMAPropagator(limits=space, rng=random.Random(seed), metamodel=metamodel)
    for k in range(1, 4001):
        child = prop([])
        x = np.array([child[f"x{i}"] for i in range(4)]) - 1.0
        child.loss = float(np.sum((scales * x) ** 2))
        prop.observe(child)
        if child.loss <= target:
            return k
    return 4001


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_model_reaches_an_ellipsoids_optimum_sooner(seed: int) -> None:
    with_model = evaluations_to(1e-8, True, seed)
    without = evaluations_to(1e-8, False, seed)
    assert with_model < 0.8 * without, (with_model, without)
    assert with_model == evaluations_to(1e-8, True, seed)  # the same run again


def test_a_wrong_model_does_not_move_the_distribution() -> None:
    """A proposal worse than the restart's best is not taken into the update."""
    space = SearchSpace({"x": (0.0, 1.0), "y": (0.0, 1.0)})
    prop = CMAPropagator(limits=space, rng=random.Random(5), metamodel=True)
    for _ in range(60):
        child = prop([])
        child.loss = abs(child["x"] - 0.3) + abs(child["y"] - 0.7)
        prop.observe(child)
    gathered = len(prop._gen)
    bad = Individual({"x": 0.9, "y": 0.1})  # no CMA tag: as the model's proposals
    bad.loss = math.inf
    prop.observe(bad)
    assert len(prop._gen) == gathered


@pytest.mark.parametrize(
    ("option", "budget", "dim", "on"),
    [
        ("auto", 100, 10, True),
        ("auto", AUTO_BUDGET * 10, 10, True),
        ("auto", AUTO_BUDGET * 10 + 1, 10, False),
        ("auto", None, 10, False),
        ("auto", 200, 1, False),
        ("on", None, 1, True),
        ("off", 100, 10, False),
    ],
)
def test_the_registrys_cma_models_by_the_budget(
    option: str, budget: int | None, dim: int, on: bool
) -> None:
    space = SearchSpace({f"x{i}": (0.0, 1.0) for i in range(dim)})
    settings = EvolveSettings(propagator=f"cma:metamodel={option}", max_evaluations=budget)
    facts = RunFacts.of(settings, space, 2)
    prop = build_propagator(propagator_spec(settings), space, random.Random(0), facts)
    assert (prop.metamodel is not None) is on
