"""Noise-aware measurement helpers: the median of repeats and a simple outlier rule.

Runtimes of real programs are noisy, and the noise is one-sided in a dangerous way for a
minimizer: one lucky (or broken, e.g. skipped-work) run can make a configuration look best and
be bred from for the rest of the run. Two defences, usable by any method:

* repeat every evaluation and take the **median** (``repeats``), and re-measure a configuration
  before it becomes an island's best (:meth:`propulate.user_objective.Command.confirm`);
* flag a loss as an **outlier** when it is more than ``factor`` times away (above or below,
  as a ratio) from the median loss of its ``k`` nearest evaluated neighbours in the unit cube
  (:func:`is_outlier`, :func:`nearest_losses`). A caller may re-measure or discount it.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

import numpy as np

#: Default ratio to the neighbours' median beyond which a loss is an outlier.
OUTLIER_FACTOR = 3.0
#: Default number of nearest neighbours compared against.
OUTLIER_NEIGHBOURS = 5
#: Fewest neighbours for the rule to say anything.
MIN_NEIGHBOURS = 3


def median(values: Sequence[float]) -> float:
    """The median of ``values`` (the mean of the middle two for an even count)."""
    if not values:
        raise ValueError("median of no values")
    return float(statistics.median(values))


def is_outlier(
    loss: float, neighbours_losses: Sequence[float], factor: float = OUTLIER_FACTOR
) -> bool:
    """Whether ``loss`` is more than ``factor`` times away from its neighbours' median.

    The rule is for positive, runtime-like losses and compares ratios: with ``m`` the median
    of ``neighbours_losses``, ``loss`` is an outlier when ``loss > factor * m`` or
    ``loss < m / factor``. It says ``False`` (no evidence) with fewer than
    :data:`MIN_NEIGHBOURS` neighbours or when any value involved is not positive.

    Parameters
    ----------
    loss : float
        The loss to judge.
    neighbours_losses : sequence of float
        Losses of nearby configurations (see :func:`nearest_losses`).
    factor : float
        Ratio (> 1) beyond which the loss is an outlier.
    """
    if factor <= 1:
        raise ValueError(f"outlier factor must be > 1, got {factor}")
    if len(neighbours_losses) < MIN_NEIGHBOURS or loss <= 0:
        return False
    if min(neighbours_losses) <= 0:
        return False
    m = median(neighbours_losses)
    return loss > factor * m or loss < m / factor


def nearest_losses(
    point: Sequence[float] | np.ndarray,
    points: np.ndarray,
    losses: Sequence[float],
    k: int = OUTLIER_NEIGHBOURS,
) -> list[float]:
    """The losses of the ``k`` rows of ``points`` nearest to ``point`` (Euclidean).

    Parameters
    ----------
    point : array of shape (d,)
        The configuration, encoded in the unit cube (``SearchSpace.encode``).
    points : array of shape (n, d)
        Other evaluated configurations, encoded the same way (``SearchSpace.encode_many``);
        leave the configuration itself out.
    losses : sequence of float
        Their losses, in the same order.
    k : int
        Number of neighbours.
    """
    pts = np.asarray(points, dtype=float).reshape(len(losses), -1)
    if len(losses) == 0:
        return []
    dist = np.linalg.norm(pts - np.asarray(point, dtype=float)[None, :], axis=1)
    order = np.argsort(dist, kind="stable")[:k]
    return [float(losses[i]) for i in order]
