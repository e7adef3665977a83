"""Pareto dominance for several objectives, all minimised (sign maximised ones first).

* :func:`pareto_mask` -- which points no other point dominates (``O(n log n)`` for two
  objectives, ``O(n * front)`` for more);
* :func:`nondominated_sort` -- the successive non-dominated fronts (NSGA-II's ranks);
* :func:`crowding_distance` -- NSGA-II's crowding distance within one front;
* :func:`rank_and_crowd` -- a population ordered best first by (front, -crowding);
* :func:`hypervolume` -- the volume dominated by a set up to a reference point (exact).

A point ``a`` dominates ``b`` when it is no worse in every objective and better in one.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = [
    "crowding_distance",
    "dominates",
    "hypervolume",
    "nondominated_sort",
    "pareto_mask",
    "rank_and_crowd",
]


def dominates(a: Sequence[float], b: Sequence[float]) -> bool:
    """Whether ``a`` dominates ``b`` (minimisation)."""
    x, y = np.asarray(a, float), np.asarray(b, float)
    return bool(np.all(x <= y) and np.any(x < y))


def _matrix(points: Sequence[Sequence[float]] | np.ndarray) -> np.ndarray:
    f = np.asarray(points, dtype=float)
    if f.ndim != 2:
        f = f.reshape(len(f), -1)
    return f


def pareto_mask(points: Sequence[Sequence[float]] | np.ndarray) -> np.ndarray:
    """A boolean mask of the non-dominated points (equal points are all kept).

    Points are visited in lexicographic order: a point's dominators all come before it, so
    it is non-dominated exactly when no earlier non-dominated point dominates it.
    """
    f = _matrix(points)
    n = len(f)
    mask = np.zeros(n, dtype=bool)
    if n == 0:
        return mask
    order = np.lexsort(f.T[::-1])
    if f.shape[1] == 2:
        best2, last = np.inf, None
        for i in order:
            a, b = f[i]
            if b < best2 or (last is not None and a == last[0] and b == last[1]):
                mask[i] = True
                best2, last = min(best2, b), (a, b)
        return mask
    kept: list[int] = []
    for i in order:
        if kept:
            front = f[kept]
            if np.any(np.all(front <= f[i], axis=1) & np.any(front < f[i], axis=1)):
                continue
        kept.append(int(i))
    mask[kept] = True
    return mask


def nondominated_sort(points: Sequence[Sequence[float]] | np.ndarray) -> list[np.ndarray]:
    """The fronts of ``points``: indices of front 0 (non-dominated), front 1 (non-dominated
    once front 0 is removed), ... (``O(m n^2)``, for populations, not whole histories)."""
    f = _matrix(points)
    n = len(f)
    if n == 0:
        return []
    le = np.all(f[:, None, :] <= f[None, :, :], axis=2)
    lt = np.any(f[:, None, :] < f[None, :, :], axis=2)
    dom = le & lt  # dom[i, j]: i dominates j
    count = dom.sum(axis=0)
    fronts = []
    current = np.flatnonzero(count == 0)
    while current.size:
        fronts.append(current)
        count = count - dom[current].sum(axis=0)
        count[current] = -1
        current = np.flatnonzero(count == 0)
    return fronts


def crowding_distance(points: Sequence[Sequence[float]] | np.ndarray) -> np.ndarray:
    """NSGA-II's crowding distance of each point of one front: per objective, the gap between
    its two neighbours over the objective's range, summed; the extremes get ``inf``."""
    f = _matrix(points)
    n, m = f.shape if f.size else (len(f), 0)
    dist = np.zeros(n)
    if n <= 2:
        dist[:] = np.inf
        return dist
    for k in range(m):
        order = np.argsort(f[:, k], kind="stable")
        col = f[order, k]
        span = col[-1] - col[0]
        dist[order[0]] = dist[order[-1]] = np.inf
        if span > 0:
            dist[order[1:-1]] += (col[2:] - col[:-2]) / span
    return dist


def rank_and_crowd(points: Sequence[Sequence[float]] | np.ndarray) -> np.ndarray:
    """Indices of ``points`` best first: by front, then by decreasing crowding distance."""
    f = _matrix(points)
    order: list[int] = []
    for front in nondominated_sort(f):
        crowd = crowding_distance(f[front])
        order.extend(int(i) for i in front[np.argsort(-crowd, kind="stable")])
    return np.asarray(order, dtype=int)


def hypervolume(
    points: Sequence[Sequence[float]] | np.ndarray, reference: Sequence[float]
) -> float:
    """The volume the points dominate up to ``reference`` (minimisation; points not strictly
    better than the reference in every objective add nothing). Exact: a sweep for two
    objectives, slicing along the last objective for more (for fronts of modest size)."""
    f = _matrix(points)
    ref = np.asarray(reference, dtype=float)
    if f.size == 0:
        return 0.0
    if f.shape[1] != ref.size:
        raise ValueError(f"points have {f.shape[1]} objectives, the reference point {ref.size}")
    f = f[np.all(f < ref, axis=1)]
    if not len(f):
        return 0.0
    f = f[pareto_mask(f)]
    return _hv(f, ref)


def _hv(f: np.ndarray, ref: np.ndarray) -> float:
    if f.shape[1] == 1:
        return float(ref[0] - f[:, 0].min())
    if f.shape[1] == 2:
        f = f[np.lexsort((f[:, 1], f[:, 0]))]
        volume, low = 0.0, ref[1]
        for a, b in f:
            if b < low:
                volume += (ref[0] - a) * (low - b)
                low = b
        return float(volume)
    f = f[np.argsort(f[:, -1], kind="stable")]
    volume = 0.0
    for i in range(len(f)):
        top = f[i + 1, -1] if i + 1 < len(f) else ref[-1]
        if top > f[i, -1]:
            below = f[: i + 1, :-1]
            volume += (top - f[i, -1]) * _hv(below[pareto_mask(below)], ref[:-1])
    return float(volume)
