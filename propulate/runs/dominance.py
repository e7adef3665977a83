"""Pareto dominance for several objectives, all minimised (sign maximised ones first).

* :func:`pareto_mask` -- which points no other point dominates (``O(n log n)`` for two
  objectives, ``O(n * front)`` for more);
* :func:`front_ranks`, :func:`nondominated_sort` -- the successive non-dominated fronts
  (NSGA-II's ranks);
* :func:`crowding_distance` -- NSGA-II's crowding distance within one front;
* :func:`rank_and_crowd` -- a population ordered best first by (front, -crowding);
* :func:`best_ranked` -- the first ``k`` of that order, peeling only the fronts it needs;
* :func:`hypervolume` -- the volume dominated by a set up to a reference point (exact).

A point ``a`` dominates ``b`` when it is no worse in every objective and better in one.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

import numpy as np

__all__ = [
    "best_ranked",
    "crowding_distance",
    "dominates",
    "front_ranks",
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


def front_ranks(points: Sequence[Sequence[float]] | np.ndarray) -> np.ndarray:
    """Each point's front: 0 for the non-dominated points, 1 for those non-dominated once
    front 0 is removed, ... (equal points share a front).

    Two objectives: points in lexicographic order join the first front whose last member does
    not dominate them (``O(n log n)``). More: dominance counts peeled front by front
    (``O(m n^2)``, for populations, not whole histories).
    """
    f = _matrix(points)
    n = len(f)
    rank = np.zeros(n, dtype=int)
    if n == 0:
        return rank
    if f.shape[1] == 2:
        tails: list[float] = []  # per front, the second objective of its last member
        last: list[tuple[float, float]] = []
        for i in np.lexsort(f.T[::-1]):
            a, b = float(f[i, 0]), float(f[i, 1])
            k = bisect.bisect_right(tails, b)
            if k > 0 and last[k - 1] == (a, b):
                k -= 1
            if k == len(tails):
                tails.append(b)
                last.append((a, b))
            else:
                tails[k], last[k] = b, (a, b)
            rank[i] = k
        return rank
    le = np.all(f[:, None, :] <= f[None, :, :], axis=2)
    lt = np.any(f[:, None, :] < f[None, :, :], axis=2)
    dom = le & lt  # dom[i, j]: i dominates j
    count = dom.sum(axis=0)
    current, k = np.flatnonzero(count == 0), 0
    while current.size:
        rank[current] = k
        count = count - dom[current].sum(axis=0)
        count[current] = -1
        current, k = np.flatnonzero(count == 0), k + 1
    return rank


def nondominated_sort(points: Sequence[Sequence[float]] | np.ndarray) -> list[np.ndarray]:
    """The fronts of ``points`` as index arrays, front 0 first (:func:`front_ranks`)."""
    rank = front_ranks(points)
    return [np.flatnonzero(rank == k) for k in range(int(rank.max()) + 1)] if rank.size else []


def _crowding(f: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """Crowding distance of every point within its front (all fronts at once)."""
    n, m = f.shape
    crowd = np.zeros(n)
    for k in range(m):
        order = np.lexsort((f[:, k], rank))
        r, v = rank[order], f[order, k]
        first = np.r_[True, r[1:] != r[:-1]]
        last = np.r_[r[1:] != r[:-1], True]
        group = np.cumsum(first) - 1
        span = (v[last] - v[first])[group]
        gap = np.zeros(n)
        inner = ~(first | last) & (span > 0)
        gap[inner] = (v[2:] - v[:-2])[inner[1:-1]] / span[inner]
        gap[first | last] = np.inf
        crowd[order] += gap
    return crowd


def crowding_distance(points: Sequence[Sequence[float]] | np.ndarray) -> np.ndarray:
    """NSGA-II's crowding distance of each point of one front: per objective, the gap between
    its two neighbours over the objective's range, summed; the extremes get ``inf``."""
    f = _matrix(points)
    return _crowding(f, np.zeros(len(f), dtype=int)) if len(f) else np.zeros(0)


def rank_and_crowd(points: Sequence[Sequence[float]] | np.ndarray) -> np.ndarray:
    """Indices of ``points`` best first: by front, then by decreasing crowding distance
    (within its front; ties keep the input order)."""
    f = _matrix(points)
    if not len(f):
        return np.zeros(0, dtype=int)
    rank = front_ranks(f)
    crowd = _crowding(f, rank)
    return np.lexsort((np.arange(len(f)), -crowd, rank))


def best_ranked(points: Sequence[Sequence[float]] | np.ndarray, k: int) -> np.ndarray:
    """The first ``k`` indices of :func:`rank_and_crowd` (fewer when there are fewer points),
    found by peeling off only the fronts they lie in with :func:`pareto_mask`: for a few picks
    out of many points (emigrants of a whole island) it stays ``O(n log n)`` per front for two
    objectives and never builds the ``n x n`` dominance matrix of more."""
    f = _matrix(points)
    remaining = np.arange(len(f))
    out: list[np.ndarray] = []
    need = min(int(k), len(f))
    while need > 0:
        on = pareto_mask(f[remaining])
        front = remaining[on]
        crowd = _crowding(f[front], np.zeros(len(front), dtype=int))
        picked = front[np.lexsort((front, -crowd))][:need]
        out.append(picked)
        need -= len(picked)
        remaining = remaining[~on]
    return np.concatenate(out) if out else np.zeros(0, dtype=int)


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
