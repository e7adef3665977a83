"""Leave-one-task-out calibration of a multitask Gaussian process's loss band (numpy only).

A posterior's standard deviation at an unseen task measures what the model does not know at the
points it was fitted on; it does not measure how wrong the model is about a task it never saw,
nor that the configuration it predicts is the one it is most optimistic about. Nor does it grow
for a task whose neighbours were evaluated at the same points: there the model is certain of a
value it never measured. So the band of an unseen task's predicted loss is
``sigmas x sqrt(var + floor^2)`` either side of the mean, ``var`` the posterior variance, both
numbers chosen by :func:`leave_one_task_out`:

* each training task in turn (at most :data:`MAX_HELD_OUT` of them, spread over the list) is
  predicted as an unseen task from the other tasks' points, with the fitted hyperparameters;
* at the held-out task's best evaluated points (the 15 % with the least measured loss, at
  least three: a predicted optimum is meant to be as good), the absolute residuals of the
  measured outputs are taken with the posterior standard deviations there;
* ``floor`` is the median residual: the misfit between tasks that the posterior does not see;
* each residual over ``sqrt(var + floor^2)`` is a score, and ``sigmas`` is their conformal
  quantile at :data:`BAND_COVERAGE`: the ``ceil((n + 1) coverage)``-th least of the ``n``.

A task between trained ones is predicted from closer neighbours than a held-out one, so the
band is, if anything, on the wide side there. A loss none of whose training values is negative
(a runtime, an error rate) gets no negative prediction: :func:`cut_at_zero`. The LCM's calibration
(:func:`propulate.tuningdb.predictor.band_calibration`) and the joint model's
(:meth:`propulate.transfer.joint_posterior.JointPosterior.calibration`) differ only in how a
held-out task is predicted.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

#: The share of unseen tasks' measured losses the band is calibrated to hold.
BAND_COVERAGE = 0.9
#: Training tasks held out in turn at most (each costs one Cholesky factorization).
MAX_HELD_OUT = 12
#: Share of a held-out task's points (its best measured) that are scored, and at least.
SCORED_SHARE, SCORED_MIN = 0.15, 3


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


def never_negative(losses: np.ndarray) -> bool:
    """Whether a loss cannot be negative: it has training values and none is below zero (a
    runtime, an error rate); its predictions are then :func:`cut_at_zero`."""
    losses = np.asarray(losses, dtype=float)
    return bool(losses.size and losses.min() >= 0.0)


def cut_at_zero(prediction: dict[str, float]) -> dict[str, float]:
    """``loss``, ``loss_low`` and ``loss_high`` of a loss that cannot be negative (every training
    loss was at least zero), each raised to zero where the Gaussian band went below it."""
    return {k: max(float(v), 0.0) for k, v in prediction.items()}
