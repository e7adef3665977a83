"""TLA1's prediction of a new task's optimum from the training tasks' optima (numpy only).

Kept out of the :mod:`propulate.models` package so that ``suggest``
(:mod:`propulate.tuningdb.predictor`) computes the same prediction without importing the
model-guided loop, MPI or GPy.
"""

from __future__ import annotations

import numpy as np

__all__ = ["basin_line"]


def basin_line(T: np.ndarray, optima: np.ndarray, t_new: np.ndarray, basin: float) -> np.ndarray:
    """The optimum predicted along the line through two training optima of one basin.

    The nearest training task's optimum, moved along the line to the optimum of the nearest
    other task whose optimum lies within ``basin`` of it (both unit cubes): the new task's
    position projected onto the segment between the two tasks (extrapolated beyond them) gives
    the point of the line. Without such a partner, the nearest task's optimum itself.

    Parameters
    ----------
    T : array (n, d)
        Training tasks in the unit task cube.
    optima : array (n, p)
        Their best configurations in the unit parameter cube.
    t_new : array (d,)
        The new task in the unit task cube.
    basin : float
        Largest distance between two optima taken to lie in one basin.
    """
    order = np.argsort(((T - t_new) ** 2).sum(axis=1), kind="stable")
    near = order[0]
    for j in order[1:]:
        step = T[j] - T[near]
        if np.sqrt(((optima[j] - optima[near]) ** 2).sum()) <= basin and step @ step > 1e-24:
            s = float((t_new - T[near]) @ step / (step @ step))
            return np.clip(optima[near] + s * (optima[j] - optima[near]), 0.0, 1.0)
    return optima[near].copy()
