"""The CMA-ES search distribution: sampling, the generation update and the stop tests.

Plain numpy on vectors of the unit cube, no individuals: :mod:`propulate.propagators.cmaes`
turns individuals into ranked generations for it. The update is the standard (mu/mu_w,
lambda)-CMA-ES with cumulative step-size adaptation, rank-one and rank-mu covariance updates
and, as an option, active (negative) weights, as in N. Hansen, "The CMA Evolution Strategy:
A Tutorial" (arXiv:1604.00772, 2016), with the strategy parameters the reference
implementation (the ``cma`` package) uses by default (:meth:`Strategy.make`).

Integer coordinates get a *margin* (Hamano et al., "CMA-ES with Margin", GECCO 2022): a
per-coordinate scale keeps the marginal probability of leaving the current integer's cell
at least ``1 / (n * lambda)`` in each direction, so a coordinate never freezes on one integer
while the continuous ones still adapt.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from propulate.space import SearchSpace

#: Stop tests (see :meth:`CMAState.stop_reason`), in unit-cube coordinates.
TOL_X = 1e-12
TOL_FUN = 1e-12
MAX_CONDITION = 1e14
#: The step-size damping's factor on ``sqrt((mueff - 1) / (n + 1))`` in high dimension (the
#: ``cma`` package's; it nears this value as ``n`` grows, 1.6 at ``n = 10``).
DAMPS_INNER = 3.0
#: Generations between two rounds of stop tests.
STOP_EVERY = 5
#: How far the mean update goes from recombining late points towards applying their
#: displacements to the current mean (:meth:`CMAState.update`, ``moves``); chosen on bbob f8,
#: instances 1-5, 16 asynchronous workers (0.25, 0.5 and 0.75 tried).
RECENTRE = 0.5


@dataclass(frozen=True)
class Strategy:
    """The strategy parameters of one population size (fixed for a restart).

    Attributes
    ----------
    n : int
        Dimension.
    lam, mu : int
        Population size and number of positively weighted (selected) individuals.
    weights : numpy.ndarray
        ``lam`` recombination weights, best first; the first ``mu`` sum to 1, the rest are
        negative (active CMA) or 0.
    mueff, cc, cs, c1, cmu, damps, chin : float
        Variance-effective selection mass, cumulation constants, learning rates, step-size
        damping and the expected length of an ``n``-dimensional standard normal vector.
    """

    n: int
    lam: int
    mu: int
    weights: np.ndarray
    mueff: float
    cc: float
    cs: float
    c1: float
    cmu: float
    damps: float
    chin: float

    @classmethod
    def make(cls, n: int, lam: int, active: bool) -> Strategy:
        """The default parameters for dimension ``n`` and population ``lam``."""
        mu = lam // 2
        raw = math.log((lam + 1) / 2) - np.log(np.arange(1, lam + 1))
        pos, neg = raw[:mu], raw[mu:]
        mueff = pos.sum() ** 2 / (pos**2).sum()
        cc = (4 + mueff / n) / (n + 4 + 2 * mueff / n)
        # cs, damps and cmu as the `cma` package (4.x) sets them: a shorter path memory and
        # a rank-mu rate larger by 2 * 0.25 / ((n + 2)^2 + mueff) than the tutorial's, and,
        # for the large populations of IPOP's later restarts, cs at most 1/2 and a stronger
        # damping of the step size (the tutorial's cs nears 1 there, and sigma then follows
        # a single generation's mean shift).
        cs = min(0.5, (mueff + 2) / (n + mueff + 3))
        c1 = 2 / ((n + 1.3) ** 2 + mueff)
        cmu = min(1 - c1, 2 * (mueff - 2 + 1 / mueff + 0.25) / ((n + 2) ** 2 + mueff))
        inner = max(1.0, DAMPS_INNER * (1 - 0.5 ** (n / 9)))
        damps = 1 + 2 * max(0.0, inner * math.sqrt((mueff - 1) / (n + 1)) - 1) + cs
        weights = np.zeros(lam)
        weights[:mu] = pos / pos.sum()
        if active and lam > mu and neg.size and neg.sum() < 0:
            mueff_neg = neg.sum() ** 2 / (neg**2).sum()
            scale = min(
                1 + c1 / cmu if cmu > 0 else math.inf,
                1 + 2 * mueff_neg / (mueff + 2),
                (1 - c1 - cmu) / (n * cmu) if cmu > 0 else math.inf,
            )
            weights[mu:] = neg * scale / -neg.sum()
        chin = math.sqrt(n) * (1 - 1 / (4 * n) + 1 / (21 * n * n))
        return cls(n, lam, mu, weights, mueff, cc, cs, c1, cmu, damps, chin)


class CMAState:
    """A CMA-ES search distribution ``N(mean, sigma^2 A C A)`` in the unit cube.

    Parameters
    ----------
    mean : numpy.ndarray
        Initial mean, shape ``(n,)``.
    sigma : float
        Initial step size.
    lam : int
        Population size.
    active : bool
        Use negative weights for the worst individuals (active CMA).
    integers : numpy.ndarray, optional
        Indices of the integer coordinates (they get the margin).
    borders : callable, optional
        ``borders(mean) -> (lo, hi)``: the unit-cube borders of the cells of the integers
        the mean's integer coordinates decode to (needed with ``integers``).
    eigen_every : int, optional
        Generations between eigendecompositions (default: the usual lazy interval).
    """

    def __init__(
        self,
        mean: np.ndarray,
        sigma: float,
        lam: int,
        active: bool = True,
        integers: np.ndarray | None = None,
        borders: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]] | None = None,
        eigen_every: int | None = None,
    ) -> None:
        n = mean.size
        self.s = Strategy.make(n, lam, active)
        self.mean = np.array(mean, dtype=float)
        self.sigma = float(sigma)
        self.sigma0 = float(sigma)
        self.C = np.eye(n)
        self.B = np.eye(n)
        self.D = np.ones(n)
        self.invsqrtC = np.eye(n)
        self.pc = np.zeros(n)
        self.ps = np.zeros(n)
        self.generation = 0
        self._eigen_at = 0
        s = self.s
        self.eigen_every = eigen_every or max(1, int(1 / (10 * n * (s.c1 + s.cmu))))
        self.integers = np.zeros(0, int) if integers is None else np.asarray(integers, int)
        self.borders = borders
        self.scale = np.ones(n)
        self._sampler: np.ndarray | None = None  # sigma * A B D, rebuilt after an update
        alpha = 1.0 / (n * lam)
        self._z_margin = NormalDist().inv_cdf(1 - alpha)
        self._best_history: deque[float] = deque(maxlen=10 + math.ceil(30 * n / lam))
        stagnation = 120 + math.ceil(30 * n / lam)
        self._medians: deque[float] = deque(maxlen=stagnation)
        self._margin()

    @property
    def n(self) -> int:
        """Dimension."""
        return self.s.n

    @property
    def lam(self) -> int:
        """Population size."""
        return self.s.lam

    # ----------------------------------------------------------------- sampling
    def sample(self, rng: np.random.Generator) -> np.ndarray:
        """One point ``mean + sigma * A B D z`` (not clipped to the cube)."""
        if self._sampler is None:
            self._sampler = (self.sigma * self.scale)[:, None] * (self.B * self.D)
        return self.mean + self._sampler @ rng.standard_normal(self.n)

    # ----------------------------------------------------------------- the update
    def update(
        self,
        xs: np.ndarray,
        ys: np.ndarray,
        losses: np.ndarray,
        tiebreak: np.ndarray | None = None,
        moves: np.ndarray | None = None,
    ) -> None:
        """One generation: points ``xs`` (shape ``(k, n)``) evaluated with ``losses``.

        ``ys`` are the points' steps ``(x - m) / (sigma * scale)`` from the distribution each
        was *sampled* from (another worker's, or this one's before an update). In an
        asynchronous run a generation mixes such points; the new mean recombines the selected
        points themselves and the rank-mu update learns from their sampled steps, while the
        evolution paths (hence the step size and the rank-one update) follow the mean's actual
        move in this distribution's units: with many workers, consecutive generations are drawn
        from one distribution, and their sampled steps, correlated, would keep the step size
        from shrinking. With one worker both are the standard update. ``k`` may differ from
        ``lambda``: the first ``k`` weights are used, the positive ones rescaled to sum to 1.
        Infinite losses (failures) rank last; equal losses are ordered by ``tiebreak`` (smaller
        first) when given.

        ``moves`` (shape ``(k, n)``), when given, are the points' displacements from the mean
        each was sampled from, ``x - m_sampled``; the new mean then goes :data:`RECENTRE` of
        the way from the selected points' weighted sum towards this mean plus the selected
        displacements' weighted sum. The two are the same when every point was sampled from
        this distribution. With many workers a point is sampled from a mean one or two updates
        old, and recombining the points themselves pulls the mean back towards the old means
        (it moves about one update in two); a displacement is what selection found good,
        applied to where the mean is now (the stale-gradient step of asynchronous SGD), and the
        recombined part keeps the workers' means together.
        """
        s, n = self.s, self.n
        order = (
            np.argsort(losses, kind="stable")
            if tiebreak is None
            else np.lexsort((tiebreak, losses))
        )
        k = order.size
        w = s.weights[:k].copy() if k <= s.lam else _stretch(s.weights, k)
        positive = w > 0
        w[positive] /= w[positive].sum()
        y = ys[order]
        old_mean = self.mean
        recombined = w[positive] @ xs[order][positive]
        if moves is None:
            self.mean = recombined
        else:
            displaced = old_mean + w[positive] @ moves[order][positive]
            self.mean = (1 - RECENTRE) * recombined + RECENTRE * displaced
        # The paths follow the mean's actual move: with late points, generations drawn from one
        # distribution would otherwise give correlated steps that keep the step size too large.
        yw = (self.mean - old_mean) / (self.sigma * self.scale)
        self.ps = (1 - s.cs) * self.ps + math.sqrt(s.cs * (2 - s.cs) * s.mueff) * (
            self.invsqrtC @ yw
        )
        self.generation += 1
        norm_ps = float(np.linalg.norm(self.ps))
        hsig = (
            norm_ps / math.sqrt(1 - (1 - s.cs) ** (2 * self.generation))
            < (1.4 + 2 / (n + 1)) * s.chin
        )
        self.pc = (1 - s.cc) * self.pc + hsig * math.sqrt(s.cc * (2 - s.cc) * s.mueff) * yw
        wc = w.copy()
        negative = wc < 0
        if negative.any():
            # Negative weights act on Mahalanobis-normalized directions (keeps C positive).
            z = y[negative] @ self.invsqrtC.T
            wc[negative] *= n / np.maximum(np.einsum("ij,ij->i", z, z), 1e-300)
        c1a = s.c1 * (1 - (1 - hsig) * s.cc * (2 - s.cc))
        self.C = (
            (1 - c1a - s.cmu * w.sum()) * self.C
            + s.c1 * np.outer(self.pc, self.pc)
            + s.cmu * (y.T * wc) @ y
        )
        self.sigma *= math.exp(min(1.0, (s.cs / s.damps) * (norm_ps / s.chin - 1)))
        if self.generation - self._eigen_at >= self.eigen_every:
            self.decompose()
        self._sampler = None
        fs = np.sort(losses[np.isfinite(losses)])
        if fs.size:
            self._best_history.append(float(fs[0]))
            self._medians.append(float(np.median(fs)))
            self._last_spread = float(fs[-1] - fs[0])
        self._moved = float(np.max(np.abs(self.mean - old_mean)))
        self._margin()

    def decompose(self) -> None:
        """Eigendecomposition ``C = B diag(D^2) B^T`` (and ``C^-1/2``)."""
        self.C = (self.C + self.C.T) / 2
        d2, self.B = np.linalg.eigh(self.C)
        d2 = np.maximum(d2, 1e-300)
        self.D = np.sqrt(d2)
        self.invsqrtC = (self.B / self.D) @ self.B.T
        self._eigen_at = self.generation
        self._sampler = None

    def _margin(self) -> None:
        """Widen integer coordinates so each side of the mean's cell keeps probability
        ``alpha``: the marginal std is at least the distance to the nearer cell border over
        the ``1 - alpha`` normal quantile."""
        ints = self.integers
        if not ints.size or self.borders is None:
            return
        std = self.sigma * np.sqrt(np.maximum(np.diag(self.C)[ints], 1e-300))
        lo, hi = self.borders(self.mean)
        m = self.mean[ints]
        # the distance to the farther border of the mean's cell: leaving that way too keeps
        # probability alpha
        far = np.maximum(m - lo, hi - m)
        self.scale[ints] = np.maximum(1.0, far / self._z_margin / std)

    # ----------------------------------------------------------------- stop tests
    def stop_reason(self) -> str | None:
        """Why this run of the distribution is over (a restart is due), or None."""
        if self.generation < 2 or self.generation % STOP_EVERY:
            return None
        spread = self.sigma * max(
            float(np.max(self.scale * np.sqrt(np.diag(self.C)))),
            float(np.max(np.abs(self.pc))),
        )
        if spread < TOL_X:
            return "tolx"
        full = len(self._best_history) == self._best_history.maxlen
        if full and (
            max(self._best_history) - min(self._best_history) < TOL_FUN
            and getattr(self, "_last_spread", math.inf) < TOL_FUN
        ):
            return "tolfun"
        if self.D.size and (self.D.max() / self.D.min()) ** 2 > MAX_CONDITION:
            return "condition"
        i = self.generation % self.n
        if np.all(self.mean == self.mean + 0.1 * self.sigma * self.D[i] * self.B[:, i]):
            return "noeffectaxis"
        if np.any(self.mean == self.mean + 0.2 * self.sigma * np.sqrt(np.diag(self.C))):
            return "noeffectcoord"
        meds = self._medians
        if len(meds) == meds.maxlen:
            k = max(1, len(meds) // 5)
            items = list(meds)
            if np.median(items[-k:]) >= np.median(items[:k]):
                return "stagnation"
        if self.sigma > 1e3 * self.sigma0 * max(1.0, float(self.D.max())):
            return "tolupsigma"
        return None


class Choices:
    """The categorical parameters' probability vectors (:class:`.cmaes.CMAPropagator`)."""

    def __init__(self, space: SearchSpace, names: Sequence[str]) -> None:
        self.names = list(names)
        self.choices = [space.dimensions[n].choices for n in self.names]  # type: ignore[union-attr]
        self.index = [{c: i for i, c in enumerate(ch)} for ch in self.choices]
        self.reset()

    def reset(self) -> None:
        self.p = [np.full(len(ch), 1.0 / len(ch)) for ch in self.choices]

    def sample(self, rng: np.random.Generator) -> dict[str, str]:
        return {
            n: ch[int(rng.choice(len(ch), p=p))]
            for n, ch, p in zip(self.names, self.choices, self.p, strict=True)
        }

    def update(self, picks: list[Mapping[str, Any]], weights: np.ndarray, s: Strategy) -> None:
        """Move towards the weighted choices of the selected (positive weight) individuals."""
        rate = min(0.5, s.mueff / (2 * (s.mueff + s.n)))
        for j, (n, p) in enumerate(zip(self.names, self.p, strict=True)):
            target = np.zeros(p.size)
            for ind, w in zip(picks, weights, strict=True):
                target[self.index[j][ind[n]]] += w
            q = (1 - rate) * p + rate * target / target.sum()
            floor = 1.0 / (s.lam * p.size)
            q = np.maximum(q, floor)
            self.p[j] = q / q.sum()


def _stretch(weights: np.ndarray, k: int) -> np.ndarray:
    """Weights for more than ``lambda`` individuals: the extra ones get weight 0."""
    out = np.zeros(k)
    out[: weights.size] = weights
    return out
