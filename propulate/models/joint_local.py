"""The joint model beyond a thousand points: hyperparameters from a subsample, each task's
posterior from its neighbourhood of tasks.

A dense fit of the joint GP (:class:`propulate.models.joint_gp.JointGP`) costs one Cholesky
factor of all points per likelihood evaluation. Measured on this machine (2 shared cores, load
about 10; ``OMP_NUM_THREADS=1``): one likelihood and gradient took 0.03 s at 240 points, 0.15 s
at 500, 0.79 s at 1,000 and 2.8 s at 2,000, a fit from one start 1.9 s, 6.5 s and 49 s up to
1,000 points; at 200 tasks x 20 evaluations (4,000 points) every MLA round would spend many
minutes fitting. Two facts of the model make a cheaper one as good:

* the hyperparameters (lengthscales, signal and noise) are shared by all tasks, so a fit on a
  subsample estimates them: every task keeps its best points and a spread
  (:func:`propulate.models.sampling.subsample`), at most ``fit_points`` in all
  (:func:`fit_subsampled`; :data:`FIT_POINTS` = 500, where a likelihood evaluation costs a
  fifth of one at 1,000);
* the kernel's task lengthscale is short against the task space once there are that many
  tasks, so a task's posterior hardly depends on far tasks' points: each task is predicted from
  the points of its nearest tasks, at least ``points`` of them (:func:`local_view`), with the
  whole model's output scaling.

:class:`LocalJointGP` is the MLA model hook's model above :data:`DENSE_MAX` points; transfer
(:mod:`propulate.models.joint_transfer`) uses the same two functions on large models.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from propulate.models.joint_gp import JointGP
from propulate.models.sampling import subsample

#: Above this many training points MLA and transfer use the subsample fit and local posteriors.
DENSE_MAX = 1000
#: Points of a task's neighbourhood (its nearest tasks' points, whole tasks).
NEIGHBOURHOOD = 400
#: Points of the subsample the hyperparameters are fitted on, above :data:`DENSE_MAX`.
FIT_POINTS = 500


def fit_subsampled(
    model: JointGP,
    restarts: int = 2,
    seed: int | None = 0,
    fit_points: int = FIT_POINTS,
    max_iter: int = 200,
) -> JointGP:
    """Fit ``model``'s hyperparameters on a subsample of at most about ``fit_points`` points
    (each task its share: its best half and a farthest-point spread), starting from its
    current ones; sets them on ``model`` and returns it (not factorized as a whole)."""
    cap = max(2, fit_points // model.n_tasks)
    keep = []
    for j in range(model.n_tasks):
        idx = np.flatnonzero(model.task_index == j)
        if len(idx):
            keep.append(idx[subsample(model.X[idx], model.y[idx], cap)])
    sel = np.concatenate(keep)
    sub = JointGP(model.U, model.X[sel], model.task_index[sel], model.y[sel], model.log_output)
    sub.set_theta(model.get_theta())
    sub.fit(restarts=restarts, seed=seed, max_iter=max_iter)
    model.set_theta(sub.get_theta())
    model.log_likelihood_value = sub.log_likelihood_value
    model.fit_info = {**sub.fit_info, "points": len(sel)}
    return model


def neighbours_of(model: JointGP, u_task: np.ndarray, points: int = NEIGHBOURHOOD) -> np.ndarray:
    """Indices of the training points of the tasks nearest to ``u_task`` (unit task cube),
    whole tasks in order of distance until at least ``points`` points are taken."""
    dist = ((model.U - np.asarray(u_task)[None, :]) ** 2).sum(axis=1)
    counts = np.bincount(model.task_index, minlength=model.n_tasks)
    order = np.argsort(dist, kind="stable")
    upto = int(np.searchsorted(np.cumsum(counts[order]), points)) + 1
    tasks = np.zeros(model.n_tasks, bool)
    tasks[order[:upto]] = True
    return np.flatnonzero(tasks[model.task_index])


def local_view(model: JointGP, u_task: np.ndarray, points: int = NEIGHBOURHOOD) -> JointGP:
    """``model`` restricted to the points of the tasks nearest ``u_task``: the same tasks
    (``U``), hyperparameters, output scaling and ``info``, fewer points."""
    sel = neighbours_of(model, u_task, points)
    view = JointGP(
        model.U, model.X[sel], model.task_index[sel], model.y[sel], model.log_output, model.info
    )
    view.y_mean, view.y_std = model.y_mean, model.y_std
    z = np.log(view.y) if view.log_output else view.y
    view.z = (z - model.y_mean) / model.y_std
    view.set_theta(model.get_theta())
    view.log_likelihood_value = model.log_likelihood_value
    return view


class LocalJointGP:
    """The joint model for MLA above :data:`DENSE_MAX` points: hyperparameters fitted on a
    subsample (:func:`fit_subsampled`), each task's posterior on its neighbourhood
    (:func:`local_view`, computed once per task and fit).

    It answers what MLA's loop and acquisition ask of a model (``y``, ``z``, ``task_index``,
    :meth:`predict_standardized`, :meth:`fit`, :meth:`get_theta` / :meth:`set_theta`,
    :meth:`save`); parameters as :class:`~propulate.models.joint_gp.JointGP`, and
    ``fit_points`` / ``points`` as above (default :data:`FIT_POINTS` / :data:`NEIGHBOURHOOD`).
    """

    def __init__(
        self,
        U: np.ndarray,
        X: np.ndarray,
        task_index: np.ndarray,
        y: np.ndarray,
        log_output: bool = False,
        info: dict[str, Any] | None = None,
        fit_points: int | None = None,
        points: int | None = None,
    ) -> None:
        self.full = JointGP(U, X, task_index, y, log_output, info)
        self.fit_points = FIT_POINTS if fit_points is None else fit_points
        self.points = NEIGHBOURHOOD if points is None else points
        self._views: dict[int, JointGP] = {}

    def __getattr__(self, name: str) -> Any:  # data and scaling: the whole model's
        if name in ("U", "X", "task_index", "y", "z", "n_tasks", "log_output", "info"):
            return getattr(self.full, name)
        raise AttributeError(name)

    def get_theta(self) -> np.ndarray:
        """The shared hyperparameters (:meth:`JointGP.get_theta`)."""
        return self.full.get_theta()

    def set_theta(self, theta: np.ndarray) -> None:
        """Set the shared hyperparameters (drops the tasks' posteriors)."""
        self.full.set_theta(theta)
        self._views = {}

    def fit(self, restarts: int = 2, seed: int | None = 0, max_iter: int = 200) -> LocalJointGP:
        """Fit the hyperparameters on the subsample (:func:`fit_subsampled`)."""
        fit_subsampled(self.full, restarts, seed, self.fit_points, max_iter)
        self._views = {}
        return self

    def view(self, task: int) -> JointGP:
        """Task ``task``'s neighbourhood model (:func:`local_view`), cached."""
        if task not in self._views:
            self._views[task] = local_view(self.full, self.full.U[task], self.points)
        return self._views[task]

    def predict_standardized(self, Xs: np.ndarray, task: int) -> tuple[np.ndarray, np.ndarray]:
        """Task ``task``'s posterior mean and variance on its neighbourhood, standardized."""
        return self.view(task).predict_standardized(Xs, task)

    def predict(self, Xs: np.ndarray, task: int) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean and variance in output units."""
        return self.view(task).predict(Xs, task)

    def to_dict(self) -> dict[str, Any]:
        """The whole model's data and hyperparameters (a :class:`JointGP` file)."""
        return self.full.to_dict()

    def save(self, path: str | Path) -> None:
        """Write the whole model as a :class:`JointGP` file."""
        self.full.save(path)
