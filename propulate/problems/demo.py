"""The multitask demo function of the GPTune project.

For a task ``t`` in ``[0, 10]`` and a parameter ``x`` in ``[0, 1]`` (both dimensionless),

    f(t, x) = 1 + exp(-(x + 1)^(t + 1)) cos(2 pi x)
                  [sin((t + 2) 2 pi x) + sin((t + 2)^2 2 pi x) + sin((t + 2)^3 2 pi x)].

The fastest term oscillates ``(t + 2)^3`` times over ``[0, 1]`` (1728 times at ``t = 10``), so
the function has many local minima and its global minimizer jumps as ``t`` moves; the amplitude
``exp(-(x + 1)^(t + 1))`` pulls the minimum towards small ``x`` as ``t`` grows. The true optimum
of a task is cheap to compute on a dense grid (:func:`demo_true_optimum`), which makes this the
reference problem for testing multitask learning and transfer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

#: Task space: ``t`` in [0, 10].
DEMO_TASK_LIMITS: dict[str, tuple[float, float]] = {"t": (0.0, 10.0)}
#: Parameter space: ``x`` in [0, 1].
DEMO_PARAM_LIMITS: dict[str, tuple[float, float]] = {"x": (0.0, 1.0)}

#: Minimum number of grid points per period of the fastest oscillation in :func:`demo_true_optimum`.
MIN_POINTS_PER_PERIOD = 64


def demo_function(t: ArrayLike, x: ArrayLike) -> NDArray[np.float64] | float:
    """Evaluate the demo function, broadcasting ``t`` against ``x``.

    Parameters
    ----------
    t : float or array_like
        Task value(s), nominally in [0, 10].
    x : float or array_like
        Parameter value(s), nominally in [0, 1].

    Returns
    -------
    float or numpy.ndarray
        ``f(t, x)``; a float when both inputs are scalars, else an array of the broadcast shape.
    """
    t_arr = np.asarray(t, dtype=np.float64)
    x_arr = np.asarray(x, dtype=np.float64)
    w = 2.0 * np.pi * x_arr
    b = t_arr + 2.0
    b2 = b * b
    waves = np.sin(b * w) + np.sin(b2 * w) + np.sin(b2 * b * w)
    value = 1.0 + np.exp(-np.power(x_arr + 1.0, t_arr + 1.0)) * np.cos(w) * waves
    return float(value) if value.ndim == 0 else value


def demo_loss(params: Mapping[str, Any], task: Mapping[str, Any]) -> float:
    """The demo function as a loss over named parameters for a given task.

    Parameters
    ----------
    params : Mapping[str, float]
        ``{"x": value}``, ``x`` in [0, 1].
    task : Mapping[str, float]
        ``{"t": value}``, ``t`` in [0, 10].

    Returns
    -------
    float
        ``f(task["t"], params["x"])``.
    """
    return float(demo_function(float(task["t"]), float(params["x"])))


def demo_true_optimum(t: float, grid: int = 200_001, candidates: int = 8) -> tuple[float, float]:
    """The global minimum of ``f(t, .)`` over ``[0, 1]`` by a dense grid and local refinement.

    The grid is made at least :data:`MIN_POINTS_PER_PERIOD` points per period of the fastest
    oscillation (``(t + 2)^3`` periods over [0, 1]); the ``candidates`` lowest local minima of the
    grid are then refined by bounded scalar minimization between their grid neighbours.

    Parameters
    ----------
    t : float
        Task value in [0, 10].
    grid : int
        Number of equispaced grid points on [0, 1] (raised if too coarse for ``t``).
    candidates : int
        Number of grid local minima to refine.

    Returns
    -------
    tuple[float, float]
        ``(x_star, f_star)``: the minimizer in [0, 1] and the minimum value.
    """
    from scipy.optimize import minimize_scalar

    t = float(t)
    periods = (t + 2.0) ** 3
    n = max(int(grid), int(np.ceil(MIN_POINTS_PER_PERIOD * periods)) + 1, 3)
    xs = np.linspace(0.0, 1.0, n)
    fs = np.asarray(demo_function(t, xs))
    # Grid local minima, including the end points.
    padded = np.concatenate(([np.inf], fs, [np.inf]))
    is_min = (fs <= padded[:-2]) & (fs <= padded[2:])
    idx = np.flatnonzero(is_min)
    idx = idx[np.argsort(fs[idx], kind="stable")[: max(int(candidates), 1)]]
    best_x, best_f = float(xs[idx[0]]), float(fs[idx[0]])
    for i in idx:
        lo, hi = xs[max(i - 1, 0)], xs[min(i + 1, n - 1)]
        res = minimize_scalar(
            lambda v: float(demo_function(t, v)),
            bounds=(lo, hi),
            method="bounded",
            options={"xatol": 1e-13},
        )
        if res.fun < best_f:
            best_x, best_f = float(res.x), float(res.fun)
    return best_x, best_f
