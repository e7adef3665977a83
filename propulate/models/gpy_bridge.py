"""The bridge between :class:`propulate.models.lcm.LCM` and GPy's LCM.

``GPy.util.multioutput.LCM`` inside ``GPy.models.GPCoregionalizedRegression``, with the RBF
variances fixed at 1 (``B_q`` carries the scale), is the same model as ours: these functions
build it from our hyperparameters, read its hyperparameters back, and fit with plain GPy's
optimizer for comparison.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from propulate.models.lcm import LCM


def to_gpy(lcm: LCM) -> Any:
    """The equivalent ``GPy.models.GPCoregionalizedRegression`` with the model's current values."""
    import GPy

    from propulate.models.lcm import JITTER

    kernels = [GPy.kern.RBF(lcm.dim, ARD=True) for _ in range(lcm.latent)]
    kern = GPy.util.multioutput.LCM(lcm.dim, lcm.n_tasks, kernels, W_rank=lcm.rank)
    X_list, Y_list = [], []
    for i in range(lcm.n_tasks):
        sel = lcm.task_index == i
        X_list.append(lcm.X[sel])
        Y_list.append(lcm.z[sel, None])
    m = GPy.models.GPCoregionalizedRegression(X_list, Y_list, kernel=kern)
    parts = kern.parameters if lcm.latent > 1 else [kern]
    for q, icm in enumerate(parts):
        icm.rbf.variance.fix(1.0)
        icm.rbf.lengthscale[:] = lcm.lengthscale[q]
        icm.B.W[:] = lcm.W[q]
        icm.B.kappa[:] = lcm.kappa[q]
    for i in range(lcm.n_tasks):
        getattr(m.mixed_noise, f"Gaussian_noise_{i}").variance[:] = lcm.noise[i] + JITTER
    m[:] = m.param_array  # GPy misses some in-place updates: recompute the posterior
    return m


def read_gpy(lcm: LCM, m: Any) -> None:
    """Copy the hyperparameters of a model built by :func:`to_gpy` into ``lcm``."""
    from propulate.models.lcm import JITTER

    parts = m.kern.parameters if lcm.latent > 1 else [m.kern]
    for q, icm in enumerate(parts):
        var = float(np.ravel(icm.rbf.variance)[0])
        lcm.lengthscale[q] = np.asarray(icm.rbf.lengthscale)
        lcm.W[q] = np.asarray(icm.B.W) * math.sqrt(var)
        lcm.kappa[q] = np.asarray(icm.B.kappa) * var
    for i in range(lcm.n_tasks):
        v = float(np.ravel(getattr(m.mixed_noise, f"Gaussian_noise_{i}").variance)[0])
        lcm.noise[i] = max(v - JITTER, 1e-12)
    lcm._posterior = None


def fit_with_gpy(lcm: LCM, restarts: int, seed: int | None, max_iter: int) -> LCM:
    """Fit ``lcm`` with plain GPy's optimizer (the benchmark's reference)."""
    m = to_gpy(lcm)
    np.random.seed(seed)  # noqa: NPY002 - GPy draws its restarts from the global state
    if restarts > 1:
        m.optimize_restarts(num_restarts=restarts, max_iters=max_iter, verbose=False, robust=True)
    else:
        m.optimize(max_iters=max_iter)
    runs = getattr(m, "optimization_runs", [])
    lcm.fit_info = {"iterations": sum(int(getattr(o, "funct_eval", 0)) for o in runs),
                    "evaluations": sum(int(getattr(o, "funct_eval", 0)) for o in runs)}
    read_gpy(lcm, m)
    lcm.log_likelihood_value = float(m.log_likelihood())
    return lcm
