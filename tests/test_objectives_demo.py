"""GPTune's demo function (``propulate.problems.demo``): its formula, broadcasting and true
optimum.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from propulate.problems import demo

# ------------------------------------------------------------------------------------------------
# GPTune's demo function.
# ------------------------------------------------------------------------------------------------


def ref_demo(t: float, x: float) -> float:
    w = 2 * math.pi * x
    waves = sum(math.sin((t + 2) ** k * w) for k in (1, 2, 3))
    return 1 + math.exp(-((x + 1) ** (t + 1))) * math.cos(w) * waves


def test_demo_function_matches_formula_and_broadcasts() -> None:
    rng = np.random.default_rng(5)
    ts, xs = rng.uniform(0, 10, 50), rng.uniform(0, 1, 50)
    values = demo.demo_function(ts, xs)
    assert isinstance(values, np.ndarray) and values.shape == (50,)
    np.testing.assert_allclose(values, [ref_demo(t, x) for t, x in zip(ts, xs, strict=True)])
    assert isinstance(demo.demo_function(1.0, 0.5), float)
    assert demo.demo_function(np.array([[0.0], [1.0]]), np.linspace(0, 1, 7)).shape == (2, 7)
    assert demo.demo_loss({"x": 0.3}, {"t": 2.5}) == pytest.approx(ref_demo(2.5, 0.3))
    assert demo.DEMO_TASK_LIMITS == {"t": (0.0, 10.0)}
    assert demo.DEMO_PARAM_LIMITS == {"x": (0.0, 1.0)}


@pytest.mark.parametrize("t", [0.0, 0.8, 2.0, 4.5, 7.0, 10.0])
def test_demo_true_optimum_beats_random_sample(t: float) -> None:
    x_star, f_star = demo.demo_true_optimum(t)
    assert 0.0 <= x_star <= 1.0
    assert demo.demo_function(t, x_star) == pytest.approx(f_star, abs=1e-12)
    sample = np.random.default_rng(int(t * 10)).uniform(0.0, 1.0, 10_000)
    assert f_star <= np.min(demo.demo_function(t, sample))


def test_demo_true_optimum_refines_a_coarse_grid() -> None:
    # A coarse request is raised to >= 64 points per period of the fastest wave.
    coarse = demo.demo_true_optimum(10.0, grid=11)
    dense = demo.demo_true_optimum(10.0, grid=400_001)
    assert coarse[1] == pytest.approx(dense[1], abs=1e-9)
