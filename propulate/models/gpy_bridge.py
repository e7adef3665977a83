"""The bridge to GPy's LCM: the same model as :class:`propulate.models.lcm.LCM`, for comparison.

``GPy.util.multioutput.LCM`` inside ``GPy.models.GPCoregionalizedRegression``, with the RBF
variances fixed at 1 (``B_q`` carries the scale), is the same model: these functions build it
from the training data and hyperparameter blocks (:mod:`propulate.models.hyperparameters`),
read the blocks back, and fit with plain GPy's optimizer. They know nothing of the LCM class.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from propulate.models.hyperparameters import JITTER, Hyper, HyperLayout


def _icms(m: Any, latent: int) -> list[Any]:
    """The per-latent-function parts of a GPy LCM kernel (a single one is not wrapped)."""
    return list(m.kern.parameters) if latent > 1 else [m.kern]


def to_gpy(
    X: np.ndarray, task_index: np.ndarray, z: np.ndarray, layout: HyperLayout, hyper: Hyper
) -> Any:
    """The equivalent ``GPy.models.GPCoregionalizedRegression``.

    Parameters
    ----------
    X : array (n, d)
        Training inputs in the unit cube.
    task_index : array (n,)
        Task of each input.
    z : array (n,)
        Standardized outputs.
    layout : HyperLayout
        The model's sizes.
    hyper : dict
        The hyperparameter blocks (values, not logs).
    """
    import GPy

    kernels = [GPy.kern.RBF(layout.dim, ARD=True) for _ in range(layout.latent)]
    kern = GPy.util.multioutput.LCM(layout.dim, layout.tasks, kernels, W_rank=layout.rank)
    X_list = [X[task_index == i] for i in range(layout.tasks)]
    Y_list = [z[task_index == i, None] for i in range(layout.tasks)]
    m = GPy.models.GPCoregionalizedRegression(X_list, Y_list, kernel=kern)
    for q, icm in enumerate(_icms(m, layout.latent)):
        icm.rbf.variance.fix(1.0)
        icm.rbf.lengthscale[:] = hyper["lengthscale"][q]
        icm.B.W[:] = hyper["W"][q]
        icm.B.kappa[:] = hyper["kappa"][q]
    for i in range(layout.tasks):
        getattr(m.mixed_noise, f"Gaussian_noise_{i}").variance[:] = hyper["noise"][i] + JITTER
    m[:] = m.param_array  # GPy misses some in-place updates: recompute the posterior
    return m


def read_gpy(m: Any, layout: HyperLayout) -> Hyper:
    """The hyperparameter blocks of a model built by :func:`to_gpy` (after GPy fitted it)."""
    hyper = {name: np.zeros(shape) for name, shape in layout.shapes.items()}
    for q, icm in enumerate(_icms(m, layout.latent)):
        var = float(np.ravel(icm.rbf.variance)[0])
        hyper["lengthscale"][q] = np.asarray(icm.rbf.lengthscale)
        hyper["W"][q] = np.asarray(icm.B.W) * math.sqrt(var)
        hyper["kappa"][q] = np.asarray(icm.B.kappa) * var
    for i in range(layout.tasks):
        v = float(np.ravel(getattr(m.mixed_noise, f"Gaussian_noise_{i}").variance)[0])
        hyper["noise"][i] = max(v - JITTER, 1e-12)
    return hyper


def fit_with_gpy(
    m: Any, layout: HyperLayout, restarts: int, seed: int | None, max_iter: int
) -> tuple[Hyper, float, dict[str, int]]:
    """Fit a model built by :func:`to_gpy` with plain GPy's optimizer (a reference).

    Parameters
    ----------
    m : GPy model
        From :func:`to_gpy`; it is optimized in place.
    layout : HyperLayout
        The model's sizes.
    restarts : int
        Optimizer starts.
    seed : int, optional
        Seed of numpy's global generator, which GPy draws its restarts from.
    max_iter : int
        Optimizer iterations per start.

    Returns
    -------
    hyper, log_likelihood, info
        The fitted blocks, the log likelihood and the function-evaluation counts.
    """
    np.random.seed(seed)  # noqa: NPY002 - GPy draws its restarts from the global state
    if restarts > 1:
        m.optimize_restarts(num_restarts=restarts, max_iters=max_iter, verbose=False, robust=True)
    else:
        m.optimize(max_iters=max_iter)
    evaluations = sum(int(getattr(o, "funct_eval", 0)) for o in getattr(m, "optimization_runs", []))
    info = {"iterations": evaluations, "evaluations": evaluations}
    return read_gpy(m, layout), float(m.log_likelihood()), info
