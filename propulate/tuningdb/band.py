"""The LCM's loss band for an unseen task, calibrated on the training tasks.

:func:`band_calibration` runs :func:`propulate.transfer.band.leave_one_task_out` (the method
is described there) on the LCM posterior that ``tuningdb update`` stores: a held-out task's
coefficients are interpolated from its two nearest other training tasks, as for a new task
(:func:`propulate.tuningdb.predictor.expected_loss`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from propulate.models.kernel import cross_covariance
from propulate.space import SearchSpace
from propulate.transfer.band import BAND_COVERAGE, leave_one_task_out

__all__ = ["BAND_COVERAGE", "band_calibration"]


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
