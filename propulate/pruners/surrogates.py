"""Propulate 1.2's surrogates as pruners: ``StaticSurrogate`` and ``DynamicSurrogate``.

Both compare a running evaluation with the best finished one and stop a curve that is clearly
worse. "Clearly worse" with ``margin`` ``m`` (0 < m <= 1): ``value > best + (1/m - 1) |best|``
-- for positive losses ``value * m > best``, Propulate 1.2's test (``m = 0.8``: more than 25 %
above the best).

* :class:`StaticSurrogate` keeps the curve of the best finished evaluation (lowest loss) and
  stops a running one whose value at a step is clearly worse than the best curve's value at
  that step (Propulate 1.2: "every run with a loss outside the margin of the baseline is
  cancelled"). The first evaluation is never stopped.
* :class:`DynamicSurrogate` predicts the final loss in two steps: a global Gaussian process
  over the configurations and their final losses, and a local one over the running
  evaluation's values by step whose mean is the global prediction for its configuration. It
  stops a run when even the optimistic prediction of its final value (mean minus one standard
  deviation) is clearly worse than the best final loss. The final step is the last step of
  the finished evaluations.

Both learn from the finished evaluations of every rank (:meth:`~propulate.pruners.Pruner.observe`),
so no ``merge`` messages are needed. A user's own surrogate with Propulate 1.2's interface
(``start_run``, ``cancel``, ``update``) runs through :class:`LegacySurrogate`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from propulate.pruners.base import Pruner
from propulate.runs.status import has_loss


def clearly_worse(value: float, best: float, margin: float) -> bool:
    """Whether ``value`` is worse than ``best`` beyond ``margin`` (see the module docstring)."""
    return value > best + (1.0 / margin - 1.0) * abs(best)


def _check_margin(margin: float) -> float:
    if isinstance(margin, bool) or not 0.0 < margin <= 1.0:
        raise ValueError(f"surrogate margin must be in (0, 1], got {margin!r}")
    return float(margin)


def _final(individual: Any) -> tuple[list[list[float]], float] | None:
    """A finished evaluation's curve and loss, when it finished with both."""
    curve = getattr(individual, "curve", None)
    loss = getattr(individual, "loss", None)
    if not curve or loss is None or not has_loss(getattr(individual, "status", None)):
        return None
    return curve, float(loss)


class StaticSurrogate(Pruner):
    """Stop a run whose curve is clearly worse than the best run's at the same step.

    Parameters
    ----------
    margin : float
        In (0, 1]; Propulate 1.2's default 0.8 stops values more than 25 % above the best
        curve's (for positive losses).
    """

    def __init__(self, margin: float = 0.8) -> None:
        self.margin = _check_margin(margin)
        self.best_loss: float | None = None
        self.baseline: dict[float, float] = {}

    def should_stop(self, curve: Sequence[Sequence[float]]) -> bool:
        step, value = curve[-1][0], curve[-1][1]
        base = self.baseline.get(step)
        return base is not None and clearly_worse(value, base, self.margin)

    def observe(self, individual: Any) -> None:
        """Take the curve of a finished evaluation with a lower loss as the new baseline."""
        done = _final(individual)
        if done is not None and (self.best_loss is None or done[1] < self.best_loss):
            self.best_loss = done[1]
            self.baseline = {step: float(v) for step, v in done[0]}


def _matern(r: np.ndarray, nu: float) -> np.ndarray:
    if nu == 1.5:
        a = np.sqrt(3.0) * r
        return (1.0 + a) * np.exp(-a)
    a = np.sqrt(5.0) * r
    return (1.0 + a + a * a / 3.0) * np.exp(-a)


def _distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.sqrt(np.maximum(((a[:, None, :] - b[None, :, :]) ** 2).sum(-1), 0.0))


def gp_predict(
    x: np.ndarray,
    y: np.ndarray,
    at: np.ndarray,
    mean: float,
    nu: float,
    lengthscales: Sequence[float],
    noises: Sequence[float],
) -> tuple[float, float]:
    """Mean and standard deviation at one point ``at`` of a Gaussian process on ``(x, y)``.

    The kernel is ``s2 * (Matern_nu(d / l) + g * I)``: the lengthscale ``l`` and noise ratio
    ``g`` are chosen from the given grids by marginal likelihood, with the signal variance
    ``s2`` at its maximum-likelihood value for each choice; the prior mean is ``mean``.
    """
    r = y - mean
    n = len(y)
    d = _distances(x, x)
    d_at = _distances(at[None, :], x)[0]
    best: tuple[float, np.ndarray, np.ndarray, float, float, float] | None = None
    for length in lengthscales:
        base = _matern(d / length, nu)
        for g in noises:
            try:
                chol = np.linalg.cholesky(base + (g + 1e-9) * np.eye(n))
            except np.linalg.LinAlgError:
                continue
            alpha = np.linalg.solve(chol.T, np.linalg.solve(chol, r))
            s2 = max(float(r @ alpha) / n, 1e-12)
            nll = 0.5 * n * np.log(s2) + np.log(np.diag(chol)).sum()
            if best is None or nll < best[0]:
                best = (nll, chol, alpha, s2, length, g)
    if best is None:
        return float(np.mean(y)), float(np.std(y))
    _, chol, alpha, s2, length, _g = best
    k = _matern(d_at / length, nu)
    v = np.linalg.solve(chol, k)
    mu = mean + float(k @ alpha)
    var = s2 * max(1.0 - float(v @ v), 0.0)
    return mu, float(np.sqrt(var))


class DynamicSurrogate(Pruner):
    """Stop a run whose predicted final loss is clearly worse than the best final loss.

    Parameters
    ----------
    limits : SearchSpace or mapping, optional
        The search space (Propulate 1.2's ``limits``), to encode configurations; without it,
        a configuration's numeric values are its coordinates.
    margin : float
        In (0, 1] (Propulate 1.2's ``allowed_loss_margin``, 0.8).
    max_points : int
        The global model keeps the most recent this many finished evaluations.
    """

    def __init__(self, limits: Any = None, margin: float = 0.8, max_points: int = 200) -> None:
        from propulate.space import SearchSpace

        self.space = None if limits is None else SearchSpace.from_limits(limits)
        self.margin = _check_margin(margin)
        self.max_points = int(max_points)
        self.X: list[np.ndarray] = []
        self.y: list[float] = []
        self.final_step: float | None = None
        self._prior = 0.0

    def _encode(self, params: Mapping[str, Any]) -> np.ndarray:
        if self.space is not None:
            return self.space.encode(params)
        return np.array(
            [float(v) for v in params.values() if isinstance(v, int | float)], dtype=float
        )

    def start(self, params: Any) -> None:
        """The global model's prediction for ``params`` becomes the local model's mean."""
        if len(self.y) < 2:
            self._prior = self.y[0] if self.y else 0.0
            return
        x, y = np.array(self.X[-self.max_points :]), np.array(self.y[-self.max_points :])
        mean, spread = float(np.mean(y)), float(np.std(y)) or 1.0
        mu, _ = gp_predict(
            x, (y - mean) / spread, self._encode(params), 0.0, 1.5, (0.1, 0.3, 1.0), (1e-3, 0.1)
        )
        self._prior = mean + spread * mu

    def should_stop(self, curve: Sequence[Sequence[float]]) -> bool:
        if not self.y or self.final_step is None or curve[-1][0] >= self.final_step:
            return False
        steps = np.array([[float(s)] for s, _ in curve])
        values = np.array([float(v) for _, v in curve])
        span = max(self.final_step, 1.0)
        mu, sd = gp_predict(
            steps / span,
            values,
            np.array([self.final_step / span]),
            self._prior,
            2.5,
            (0.1, 0.3, 1.0),
            (1e-4, 1e-2),
        )
        return clearly_worse(mu - sd, min(self.y), self.margin)

    def observe(self, individual: Any) -> None:
        """Add a finished evaluation's configuration and final loss to the global model."""
        done = _final(individual)
        if done is None:
            return
        curve, loss = done
        self.X.append(self._encode(individual))
        self.y.append(loss)
        last = float(curve[-1][0])
        self.final_step = last if self.final_step is None else max(self.final_step, last)


class LegacySurrogate(Pruner):
    """A surrogate with Propulate 1.2's interface (``start_run(ind)``, ``cancel(loss)``,
    ``update(loss)``) as a pruner.

    Its own evaluations reach it as in Propulate 1.2 (``start_run``, ``cancel`` per value,
    ``update`` with the final or last value). Instead of ``merge``-ing the other ranks'
    ``data()``, each evaluation of another rank is replayed through the same calls, so the
    surrogate learns from every rank without messages of its own.
    """

    def __init__(self, surrogate: Any) -> None:
        for method in ("start_run", "cancel", "update"):
            if not callable(getattr(surrogate, method, None)):
                raise TypeError(f"a surrogate needs a method {method}(), got {surrogate!r}")
        self.surrogate = surrogate
        self._own = False

    def start(self, params: Any) -> None:
        self.surrogate.start_run(params)
        self._own = True

    def should_stop(self, curve: Sequence[Sequence[float]]) -> bool:
        return bool(self.surrogate.cancel(curve[-1][1]))

    def observe(self, individual: Any) -> None:
        curve = getattr(individual, "curve", None) or []
        loss = getattr(individual, "loss", None)
        final = loss if has_loss(getattr(individual, "status", None)) else None
        if final is None and curve:
            final = curve[-1][1]
        if self._own:  # the engine hands over its own evaluation first, right after it ends
            self._own = False
        else:
            if not curve:
                return
            self.surrogate.start_run(individual)
            for _, value in curve:
                self.surrogate.cancel(value)
        if final is not None:
            self.surrogate.update(float(final))


def as_pruner(obj: Any) -> Pruner:
    """``obj`` as a pruner: a :class:`Pruner` itself, or a Propulate-1.2 surrogate wrapped in
    :class:`LegacySurrogate` (``TypeError`` for anything else)."""
    if isinstance(obj, Pruner):
        return obj
    return LegacySurrogate(obj)
