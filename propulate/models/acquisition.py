"""Expected improvement and its constrained maximization over the parameter space.

For a task with best observation ``y_min`` and posterior mean ``mu`` and deviation ``sigma`` at
``x`` (standardized units of :class:`propulate.models.lcm.LCM`), with
``z = (y_min - mu) / sigma``::

    EI(x) = (y_min - mu) Phi(z) + sigma phi(z)

:func:`propose` maximizes it per task by a multi-start local search: a Latin hypercube of
feasible candidates scored by EI, then L-BFGS-B in the unit cube from the best few, decoded to
valid values (integers rounded, categoricals indexed). Decoded points that violate the task's
constraint or repeat an evaluated configuration are never proposed. ``extra`` candidates (in MLA
the other tasks' best configurations) join the scored pool and are always refined too, so a task
stuck in a local minimum sees the basins its neighbours found. ``near`` confines the search to
balls around given points (MLA's local rounds: the other tasks' best configurations).
"""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence
from typing import Any

import numpy as np
from scipy import optimize
from scipy.stats import norm

from propulate.models.lcm import LCM
from propulate.models.linalg import blas_threads
from propulate.space import Params, SearchSpace


def expected_improvement(mu: np.ndarray, sigma: np.ndarray, y_min: float) -> np.ndarray:
    """Expected improvement below ``y_min`` (minimization).

    Parameters
    ----------
    mu, sigma : array
        Posterior mean and standard deviation (same units as ``y_min``).
    y_min : float
        The best observed value.
    """
    mu = np.asarray(mu, dtype=float)
    sigma = np.maximum(np.asarray(sigma, dtype=float), 1e-12)
    z = (y_min - mu) / sigma
    return np.maximum((y_min - mu) * norm.cdf(z) + sigma * norm.pdf(z), 0.0)


def task_best(model: LCM, task: int) -> float | None:
    """The task's best training output in standardized units (``None`` without data)."""
    sel = model.task_index == task
    return float(model.z[sel].min()) if sel.any() else None


def propose(
    model: LCM,
    task: int,
    space: SearchSpace,
    task_values: Mapping[str, Any] | None,
    evaluated: Container[tuple[Any, ...]],
    rng: np.random.Generator,
    n_candidates: int = 256,
    n_local: int = 3,
    extra: Sequence[Params] = (),
    near: tuple[np.ndarray, float] | None = None,
) -> tuple[Params | None, float]:
    """The feasible, not yet evaluated configuration of largest EI found for one task.

    Parameters
    ----------
    model : LCM
        A fitted model; ``task`` is its output index.
    task : int
        Task index in the model.
    space : SearchSpace
        Parameter space (encoding and constraint).
    task_values : mapping, optional
        The task's values, handed to a task-dependent constraint.
    evaluated : container of keys
        :meth:`SearchSpace.key` of every configuration already evaluated for this task.
    rng : numpy Generator
        Source of the candidate design.
    n_candidates : int
        Size of the scored Latin hypercube of starting points.
    n_local : int
        Number of best candidates refined by L-BFGS-B.
    extra : sequence of configurations
        Further candidates (e.g. other tasks' incumbents), scored and always refined.
    near : (array (k, d), float), optional
        Centres (encoded) and a radius: only configurations within that Euclidean distance
        (unit cube) of a centre are considered, and the candidate design is drawn around the
        centres instead of over the whole space.

    Returns
    -------
    params, ei
        The proposal (``None`` when no unseen feasible configuration was found) and its EI in
        standardized units.
    """
    with blas_threads(len(model.y)):
        return _propose(
            model, task, space, task_values, evaluated, rng, n_candidates, n_local, extra, near
        )


def _propose(
    model: LCM,
    task: int,
    space: SearchSpace,
    task_values: Mapping[str, Any] | None,
    evaluated: Container[tuple[Any, ...]],
    rng: np.random.Generator,
    n_candidates: int,
    n_local: int,
    extra: Sequence[Params],
    near: tuple[np.ndarray, float] | None,
) -> tuple[Params | None, float]:
    def inside(p: Params) -> bool:
        return near is None or nearest_distance(near[0], space.encode(p)) <= near[1]

    seeded = [p for p in extra if space.satisfies(p, task_values) and inside(p)]
    if near is None:
        pool = space.latin_hypercube(n_candidates, seed=rng, task=task_values)
    else:
        pool = [
            p for p in around(space, near, n_candidates, rng) if space.satisfies(p, task_values)
        ]
    cands = [p for p in pool if space.key(p) not in evaluated and inside(p)]
    n_lhs = len(cands)
    cands += [p for p in seeded if space.key(p) not in evaluated]
    if not cands:
        for _ in range(20 * n_candidates):  # small discrete spaces: look for any unseen point
            p = space.sample(rng, task_values)
            if space.key(p) not in evaluated and inside(p):
                cands.append(p)
                break
        if not cands:
            return None, 0.0
    U = space.encode_many(cands)
    mu, var = model.predict_standardized(U, task)
    y_min = task_best(model, task)
    if y_min is None:
        y_min = float(mu.min())
    ei = expected_improvement(mu, np.sqrt(var), y_min)
    best_i = int(np.argmax(ei))
    best_p, best_ei = cands[best_i], float(ei[best_i])

    def neg_ei(u: np.ndarray) -> float:
        p = space.decode(u)
        if not space.satisfies(p, task_values) or not inside(p):
            return 0.0
        m, v = model.predict_standardized(u[None, :], task)
        return -float(expected_improvement(m, np.sqrt(v), y_min)[0])

    starts = [U[i] for i in np.argsort(-ei[:n_lhs], kind="stable")[:n_local]]
    starts += [space.encode(p) for p in seeded]  # evaluated incumbents too: refine around them
    for u0 in starts:
        res = optimize.minimize(
            neg_ei, u0, method="L-BFGS-B", bounds=[(0.0, 1.0)] * space.dim, options={"maxiter": 50}
        )
        p = space.decode(res.x)
        if space.key(p) in evaluated or not space.satisfies(p, task_values) or not inside(p):
            continue
        m, v = model.predict_standardized(space.encode(p)[None, :], task)
        value = float(expected_improvement(m, np.sqrt(v), y_min)[0])
        if value > best_ei:
            best_p, best_ei = p, value
    return best_p, best_ei


def nearest_distance(points: np.ndarray, u: np.ndarray) -> float:
    """Euclidean distance from ``u`` to the nearest row of ``points`` (``inf`` when empty)."""
    if len(points) == 0:
        return float("inf")
    return float(np.sqrt(((points - u) ** 2).sum(axis=1)).min())


def around(
    space: SearchSpace, near: tuple[np.ndarray, float], n: int, rng: np.random.Generator
) -> list[Params]:
    """``n`` configurations drawn uniformly from boxes of half-width ``radius`` around random
    centres (``near = (centres, radius)``, unit cube), decoded to valid values."""
    centres, radius = near
    C = centres[rng.integers(len(centres), size=n)]
    U = np.clip(C + rng.uniform(-radius, radius, size=C.shape), 0.0, 1.0)
    return [space.decode(u) for u in U]


def untried_incumbent(
    space: SearchSpace,
    task_values: Mapping[str, Any] | None,
    tried: Sequence[Params],
    incumbents: Sequence[Params | None],
    radius: float,
) -> Params | None:
    """The first of ``incumbents`` that is feasible for the task and far from all it ``tried``.

    Parameters
    ----------
    space : SearchSpace
        Parameter space (encoding and constraint).
    task_values : mapping, optional
        The task's values, handed to a task-dependent constraint.
    tried : sequence of configurations
        The task's evaluated configurations.
    incumbents : sequence of configurations or None
        Other tasks' best configurations, nearest task first (``None``: a task without one).
    radius : float
        A candidate within this Euclidean distance (unit cube) of a tried configuration counts
        as tried: the task already knows that basin.
    """
    U = space.encode_many(list(tried)) if tried else np.empty((0, space.dim))
    for p in incumbents:
        if p is None or not space.satisfies(p, task_values):
            continue
        if nearest_distance(U, space.encode(p)) > radius:
            return space.canonical(p)
    return None
