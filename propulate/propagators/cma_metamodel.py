"""A quadratic model of CMA-ES's best evaluations, whose minimum it proposes once a generation.

On smooth problems a full quadratic fitted to the best evaluations of the current restart
often points straight at the optimum, where the distribution would need many generations to
walk (ill-conditioned ellipsoids, the sphere): Nevergrad's ``MetaModel`` wraps CMA-ES the same
way, and its ``NGOpt`` picks that wrapper for budgets of about 100 evaluations per parameter.

:class:`QuadraticModel` keeps the restart's latest evaluations (at most
``WINDOW x`` the model's ``(n + 1)(n + 2) / 2`` coefficients), fits the coefficients by least
squares to the best ``FIT x`` that many of them, in the distribution's coordinates
``(x - mean) / sigma``, and proposes the model's minimum when the model is convex there and
its minimum lies in the unit cube and within ``RADIUS x sqrt(n)`` of the mean in the
distribution's own metric (farther, a quadratic fitted near the mean says little). The
proposal carries no CMA-ES sample, so the distribution takes it in as an injected individual
(Hansen 2011), and only when it is the restart's best so far: a wrong model costs one
evaluation a generation and does not move the distribution.

Chosen on bbob 10-D at 100 x D (development instances 1-5, all 24 functions, ``cma``),
share of the 51 targets reached, with ``FIT`` 2 and ``RADIUS`` 10:

================================  ==========================  ==============================
runs                              without                     with the model
================================  ==========================  ==============================
instances 1-3, one worker         0.218                       0.243 (twice: the same run)
instances 1-3, two workers        0.206, 0.206                0.241, 0.205
instances 4-5, two workers        0.191, 0.194, 0.208, 0.221  0.217, 0.237, 0.238, 0.243, 0.251
================================  ==========================  ==============================

Two asynchronous workers do not give the same run twice, with the model or without: what each
has seen when it updates (and fits) depends on their timing. One worker repeats its run. On
instances 1-3 with two workers, ``RADIUS`` 3, 5, 20 and unbounded gave 0.234, 0.200, 0.228 and
0.216, and ``FIT`` 1.2, 1.5 and 3 (``RADIUS`` 10) 0.209, 0.245 and 0.222; on instances 4-5 one
model proposal a generation from the island's first worker only gave 0.230, 0.242 and 0.230, a
little below one from every worker. The gains are on the sphere, the ill-conditioned functions
f12-f14, Schaffers' f17 and Gallagher's f22. Each fit costs a least-squares solve of
``2 (n + 1)(n + 2) / 2`` rows (0.7 ms in 10-D here), once a generation, so the registry's
``cma`` uses it only for budgets of at most :data:`AUTO_BUDGET` evaluations per parameter,
where evaluations cost more than that.
"""

from __future__ import annotations

import math
from collections import deque
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from propulate.propagators.cma_core import CMAState

#: Evaluations fitted, as a multiple of the model's coefficients.
FIT = 2.0
#: Evaluations kept (the latest), as a multiple of the model's coefficients.
WINDOW = 3.0
#: The farthest proposal from the mean, in the distribution's metric, over ``sqrt(n)``.
RADIUS = 10.0
#: The registry's ``cma`` models when the budget is at most this many evaluations per parameter.
AUTO_BUDGET = 300
#: ... and the space has at least this many parameters: it was measured in 10-D only, and in
#: 1-D, with CMA-ES's population of 4 and a proposal from each of two workers every generation,
#: the model's proposals would take half the evaluations.
AUTO_MIN_DIM = 10


def coefficients(n: int) -> int:
    """The number of coefficients of a full quadratic in ``n`` variables."""
    return (n + 1) * (n + 2) // 2


class QuadraticModel:
    """The latest evaluations of a CMA-ES restart and the minimum of their quadratic model.

    Parameters
    ----------
    n : int
        The distribution's dimension.
    """

    def __init__(self, n: int) -> None:
        self.n = n
        self.fit_size = int(FIT * coefficients(n))
        self.points: deque[tuple[np.ndarray, float]] = deque(maxlen=int(WINDOW * coefficients(n)))
        self._upper = np.triu_indices(n)

    def add(self, x: np.ndarray, loss: float) -> None:
        """Keep an evaluation (its unit-cube coordinates; a failure is left out)."""
        if math.isfinite(loss):
            self.points.append((np.array(x, dtype=float), float(loss)))

    def clear(self) -> None:
        """Forget the evaluations (a restart)."""
        self.points.clear()

    def propose(self, state: CMAState) -> np.ndarray | None:
        """The model's minimum (unit-cube coordinates), or ``None`` when there are too few
        evaluations, the model is not convex, or its minimum lies outside the cube or too far
        from the mean."""
        if len(self.points) < self.fit_size:
            return None
        best = sorted(self.points, key=lambda p: p[1])[: self.fit_size]
        X = np.array([p[0] for p in best])
        y = np.array([p[1] for p in best])
        Z = (X - state.mean) / state.sigma
        i, j = self._upper
        F = np.hstack([np.ones((len(Z), 1)), Z, Z[:, i] * Z[:, j]])
        coef, *_ = np.linalg.lstsq(F, y, rcond=None)
        n = self.n
        H = np.zeros((n, n))
        H[i, j] = coef[n + 1 :]
        H = H + H.T  # the Hessian: a squared term's coefficient counts twice on the diagonal
        if not np.all(np.isfinite(H)) or np.linalg.eigvalsh(H)[0] <= 0.0:
            return None
        z = -np.linalg.solve(H, coef[1 : n + 1])
        if np.linalg.norm(state.invsqrtC @ (z / state.scale)) > RADIUS * math.sqrt(n):
            return None
        x = state.mean + state.sigma * z
        if x.min() < 0.0 or x.max() > 1.0:
            return None
        return x
