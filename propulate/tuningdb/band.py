"""The width of ``suggest``'s loss band for an unseen task, calibrated on the training tasks.

The LCM's posterior standard deviation at an unseen task measures what the model does not
know at the points it was fitted on; it does not measure how wrong the model is about a task
it never saw, nor that the configuration it predicts is the one it is most optimistic about.
Nor does it grow for a task whose neighbours were evaluated at the same points: there the
model is certain of a value it never measured. So the band of
:func:`propulate.tuningdb.predictor.expected_loss` is ``sigmas x sqrt(var + floor^2)`` either
side of the mean, ``var`` the posterior variance, both numbers chosen by leave-one-task-out
(:func:`band_calibration`):

* each training task in turn (at most :data:`MAX_HELD_OUT` of them, spread over the list) is
  treated as unseen: its coefficients are interpolated from its two nearest *other* training
  tasks, as for a new task, and the posterior is conditioned on the other tasks' points only,
  with the fitted hyperparameters;
* at the held-out task's best evaluated points (the 15 % with the least measured loss, at
  least three: a predicted optimum is meant to be as good), the absolute residuals of the
  measured outputs are taken with the posterior standard deviations there;
* ``floor`` is the median residual: the misfit between tasks that the posterior does not see;
* each residual over ``sqrt(var + floor^2)`` is a score, and ``sigmas`` is their conformal
  quantile at :data:`BAND_COVERAGE`: the ``ceil((n + 1) coverage)``-th least of the ``n``.

A task between trained ones is predicted from closer neighbours than a held-out one, so the
band is, if anything, on the wide side there.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from propulate.models.kernel import cross_covariance
from propulate.space import SearchSpace

#: The share of unseen tasks' measured losses the band is calibrated to hold.
BAND_COVERAGE = 0.9
#: Training tasks held out in turn at most (each costs one Cholesky factorization).
MAX_HELD_OUT = 12
#: Share of a held-out task's points (its best measured) that are scored, and at least.
SCORED_SHARE, SCORED_MIN = 0.15, 3


def band_calibration(
    post: Mapping[str, Any], task_space: SearchSpace, coverage: float = BAND_COVERAGE
) -> dict[str, float] | None:
    """The band's width for an LCM posterior (module docstring): a held-out task's
    coefficients are interpolated from its two nearest other training tasks.

    Returns
    -------
    dict or None
        ``floor``: the misfit between tasks, in standardized output units (the median residual
        of the held-out scores); ``sigmas``: the multiple of ``sqrt(var + floor^2)`` either side
        of the mean that holds ``coverage`` of the scores. ``None`` with fewer than three
        training tasks of known values (the band stays one standard deviation).
    """
    tasks = post.get("tasks")
    if not tasks or len(tasks) < 3:
        return None
    X = np.asarray(post["X"], dtype=float)
    ti = np.asarray(post["task_index"], dtype=int)
    L = np.asarray(post["L"], dtype=float)
    W = np.asarray(post["W"], dtype=float)  # (Q, tasks, rank)
    kappa = np.asarray(post["kappa"], dtype=float)  # (Q, tasks)
    ls = np.asarray(post["lengthscale"], dtype=float)
    K = L @ L.T  # the training covariance, noise included
    z = K @ np.asarray(post["alpha"], dtype=float)  # the standardized outputs
    T = task_space.encode_many(tasks)

    def held_out(i: int, own: np.ndarray, other: np.ndarray) -> tuple[np.ndarray, float]:
        dist = np.sqrt(((T - T[i]) ** 2).sum(axis=1))
        dist[i] = np.inf
        order = np.argsort(dist, kind="stable")[:2]
        inv = 1.0 / np.maximum(dist[order], 1e-12)
        W_new = np.tensordot(W[:, order, :], inv / inv.sum(), axes=([1], [0]))  # (Q, rank)
        B_row = np.einsum("qr,qjr->qj", W_new, W)
        k = cross_covariance(X[own], X[other], ti[other], B_row, ls)
        return k, float(np.sum(W_new**2) + kappa[:, order[0]].sum())

    return leave_one_task_out(len(tasks), ti, z, K, held_out, coverage)


def leave_one_task_out(
    n_tasks: int,
    task_index: np.ndarray,
    z: np.ndarray,
    K: np.ndarray,
    held_out: Callable[[int, np.ndarray, np.ndarray], tuple[np.ndarray, float]],
    coverage: float = BAND_COVERAGE,
) -> dict[str, float] | None:
    """The band's ``sigmas`` and ``floor`` (:func:`band_calibration`) of any Gaussian process
    over several tasks.

    Parameters
    ----------
    n_tasks : int
        Training tasks (the band needs at least three).
    task_index : array (n,)
        Each training point's task.
    z : array (n,)
        The standardized outputs.
    K : array (n, n)
        The training covariance, noise included.
    held_out : callable
        ``held_out(i, own, other) -> (k, prior)``: for task ``i`` predicted as an unseen task,
        the covariance ``(m, n_other)`` between its points (mask ``own``) and the other tasks'
        (mask ``other``), and its prior variance.
    coverage : float
        The share of held-out scores the band holds.
    """
    if n_tasks < 3:
        return None
    held = np.unique(np.linspace(0, n_tasks - 1, min(n_tasks, MAX_HELD_OUT)).round())
    residuals: list[np.ndarray] = []
    sds: list[np.ndarray] = []
    for i in held.astype(int):
        own, other = task_index == i, task_index != i
        if not own.any() or not other.any():
            continue
        k, prior = held_out(i, own, other)
        Lo = np.linalg.cholesky(K[np.ix_(other, other)])
        v = np.linalg.solve(Lo, k.T)  # numpy only: suggest loads no scipy for this
        mean = v.T @ np.linalg.solve(Lo, z[other])
        sd = np.sqrt(np.maximum(prior - (v**2).sum(axis=0), 1e-12))
        best = np.argsort(z[own], kind="stable")  # the task's best measured points first
        best = best[: max(SCORED_MIN, math.ceil(SCORED_SHARE * len(best)))]
        residuals.append(np.abs(z[own][best] - mean[best]))
        sds.append(sd[best])
    if not residuals:
        return None
    r, sd = np.concatenate(residuals), np.concatenate(sds)
    floor = float(np.median(r))
    s = np.sort(r / np.sqrt(sd**2 + floor**2))
    rank = math.ceil((len(s) + 1) * coverage)
    return {"sigmas": float(s[min(rank, len(s)) - 1]), "floor": floor}
