"""Multi-start L-BFGS-B over a subset of hyperparameters, optionally with a Gaussian prior.

:meth:`propulate.models.lcm.LCM.fit` hands its negative log likelihood (value and gradient) to
:func:`minimize_restarts`; a :class:`GaussianPrior` turns that into a maximum a posteriori fit.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
from scipy import optimize

from propulate.models.hyperparameters import HyperLayout

#: ``objective(theta_free, mask) -> (value, gradient over the free entries)``.
Objective = Callable[[np.ndarray, np.ndarray], tuple[float, np.ndarray]]


@dataclass(frozen=True)
class GaussianPrior:
    """An independent Gaussian prior on the entries of the flat hyperparameter vector.

    Attributes
    ----------
    mean : array
        Prior mean of every entry (log units for log-scaled blocks).
    std : array
        Prior standard deviation of every entry; ``inf`` leaves an entry unpenalized.
    """

    mean: np.ndarray
    std: np.ndarray

    @classmethod
    def on_blocks(
        cls,
        layout: HyperLayout,
        mean: np.ndarray,
        std: Mapping[str, float],
        mask: np.ndarray | None = None,
    ) -> GaussianPrior:
        """A prior centred on ``mean`` with one width per block, limited to ``mask``.

        Parameters
        ----------
        layout : HyperLayout
            The model's layout.
        mean : array
            Prior mean, laid out by ``layout``.
        std : mapping
            Block name to the prior standard deviation of its entries; blocks not named are
            unpenalized.
        mask : boolean array, optional
            Penalize only these entries.
        """
        full = layout.pack({name: std.get(name, math.inf) for name in layout.shapes}, log=False)
        if mask is not None:
            full = np.where(mask, full, math.inf)
        return cls(np.asarray(mean, dtype=float), full)

    def restricted(self, mask: np.ndarray) -> GaussianPrior:
        """The prior on the ``mask`` entries only."""
        mean = np.broadcast_to(np.asarray(self.mean, float), mask.shape)[mask]
        std = np.broadcast_to(np.asarray(self.std, float), mask.shape)[mask]
        if np.any(std <= 0):
            raise ValueError("prior standard deviations must be positive")
        return GaussianPrior(mean, std)

    def penalize(self, objective: Objective) -> Objective:
        """``objective`` plus the negative log prior (up to a constant) of the free entries.

        The prior must already be :meth:`restricted` to the free entries.
        """
        mean, std = self.mean, self.std

        def fun(theta: np.ndarray, free: np.ndarray) -> tuple[float, np.ndarray]:
            value, grad = objective(theta, free)
            r = np.where(np.isinf(std), 0.0, (theta - mean) / std)
            return value + 0.5 * float(r @ r), grad + r / std

        return fun


def minimize_restarts(
    objective: Objective,
    start: np.ndarray,
    bounds: list[tuple[float, float]],
    mask: np.ndarray,
    random_start: Callable[[], np.ndarray],
    restarts: int,
    max_iter: int,
    tol: float,
) -> tuple[float, np.ndarray, dict[str, int]]:
    """Minimize ``objective`` over the ``mask`` entries by L-BFGS-B from several starts.

    Parameters
    ----------
    objective : callable
        ``objective(theta[mask], mask) -> (value, gradient)``.
    start : array
        The full first starting vector (entries outside ``mask`` stay as they are).
    bounds : list of (float, float)
        Bounds of every entry of the full vector.
    mask : boolean array
        The entries optimized.
    random_start : callable
        Returns a fresh full starting vector for each further start.
    restarts : int
        Number of starts (at least one).
    max_iter : int
        L-BFGS-B iterations per start.
    tol : float
        Relative reduction of the objective below which a start has converged (``ftol``).

    Returns
    -------
    value, theta, info
        The best value, the full vector reaching it and the summed iteration and evaluation
        counts.
    """
    free_bounds = [b for b, m in zip(bounds, mask, strict=True) if m]
    low, high = [b[0] for b in free_bounds], [b[1] for b in free_bounds]
    best_val, best_theta = math.inf, np.array(start, dtype=float)
    info = {"iterations": 0, "evaluations": 0}
    theta = np.array(start, dtype=float)
    for r in range(max(1, restarts)):
        if r > 0:
            theta = np.array(random_start(), dtype=float)
        res = optimize.minimize(
            objective,
            np.clip(theta[mask], low, high),
            args=(mask,),
            jac=True,
            method="L-BFGS-B",
            bounds=free_bounds,
            options={"maxiter": max_iter, "ftol": tol, "gtol": 1e-6},
        )
        info["iterations"] += int(res.nit)
        info["evaluations"] += int(res.nfev)
        if res.fun < best_val:
            best_val = float(res.fun)
            best_theta = theta.copy()
            best_theta[mask] = res.x
    return best_val, best_theta, info
