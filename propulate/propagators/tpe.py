"""Tree-structured Parzen estimator (TPE) sampling as an asynchronous propagator.

The method of Bergstra et al. (2011), the sampler Optuna and Hyperopt users know: the
evaluated configurations are split by loss into the best ``gamma`` share ("below") and the
rest ("above"); a kernel density is fitted to each, ``l(x)`` and ``g(x)``, and of
``candidates`` configurations drawn from ``l`` the one with the largest ``l(x) / g(x)`` is
proposed. Its densities here are multivariate (each component is one observed configuration
with a product kernel over the parameters, as in BOHB), so parameters that must move together
(a learning rate with its batch size) are modelled together.

The model is rebuilt from what the worker observes (:meth:`TPE.observe`: its own results, its
island peers', immigrants and, on a resume, the records), so every worker of an island uses
the same data and no state is carried on the individuals. Under a pruner a stopped
configuration has no loss; it ranks after every finished one, by the step it reached (later
first) and then by its value there (:func:`~propulate.propagators.pruned_pool.pruned_rank`),
so the split uses the partial curves while few runs have finished. Failed evaluations are
ignored.

In a conditional space each evaluation's kernel covers the parameters it holds. A candidate
drawn from it takes the parameters it lacks from the prior and is then reduced to the ones its
values activate. A candidate's density counts only the parameters it activates: one that a
component lacks counts there at the prior's density, so each branch is modelled on the
evaluations that had it.

In a space with forbidden clauses the proposal is the best candidate that no clause excludes
(the engine still checks every child, and the constraint function, as for every propagator).

Kernels, in the encoded unit cube of :meth:`~propulate.space.SearchSpace.encode` (log-scaled
parameters on their logarithm): a number gets a Gaussian truncated to ``[0, 1]`` with width
``max(0.2 * n ** (-1 / (d + 4)), 0.01)`` for ``n`` components in ``d`` dimensions (Scott's
rule of thumb on the unit range); an integer is treated as a number and rounded on decoding; a
categorical keeps its observed value with probability ``1 - eps`` and spreads ``eps`` over the
others (``eps = 0.2``, or less with two choices). Each density has one more component, the
uniform prior, with weight ``prior_weight``, so no region is ever ruled out.

Best for budgets of tens to a few thousand evaluations, and under a pruner
(``--pruner asha``); the model costs ``O(candidates x n x d)`` per child: in 10-D about 5 ms at
1,000 known evaluations and 20 ms at 4,000, nothing beside an objective that trains a network,
but the limit of its throughput on a cheap one. Several objectives need weights, as for every
single-objective propagator.
"""

from __future__ import annotations

import bisect
import math
import random
from collections.abc import Sequence

import numpy as np
from scipy.special import logsumexp, ndtr, ndtri

from propulate.plugins.facts import RunFacts
from propulate.population import Individual
from propulate.propagators.base import Propagator
from propulate.propagators.pruned_pool import pruned_rank
from propulate.propagators.registry import TPEOptions
from propulate.space import Categorical, SearchSpace
from propulate.space.search import INACTIVE

#: Smallest kernel width in the unit cube.
MIN_WIDTH = 0.01


class TPE(Propagator):
    """Tree-structured Parzen estimator sampling (module docstring).

    Parameters
    ----------
    space : SearchSpace
        The search space (conditions and forbidden clauses included).
    rng : random.Random, optional
        This worker's random stream.
    startup : int
        Uniformly random configurations until this many evaluations are known.
    candidates : int
        Configurations drawn from ``l`` per child; the best ``l / g`` is proposed.
    gamma : float
        Share of the known evaluations in ``l`` (at least one, at most ``max_below``).
    max_below : int
        Cap on the evaluations in ``l``.
    prior_weight : float
        Weight of the uniform prior component in each density (each evaluation weighs 1).
    """

    def __init__(
        self,
        space: SearchSpace,
        rng: random.Random | None = None,
        startup: int = 10,
        candidates: int = 24,
        gamma: float = 0.1,
        max_below: int = 25,
        prior_weight: float = 1.0,
    ) -> None:
        super().__init__(-1, 1, rng)
        if not 0 < gamma < 1:
            raise ValueError(f"gamma must be in (0, 1), got {gamma}")
        if startup < 1 or candidates < 1 or max_below < 1 or prior_weight <= 0:
            raise ValueError("startup, candidates and max_below must be >= 1, prior_weight > 0")
        self.space = space
        self.startup, self.candidates = startup, candidates
        self.gamma, self.max_below, self.prior_weight = gamma, max_below, prior_weight
        dims = list(space.dimensions.values())
        #: Categorical columns and their number of choices; the others are numbers.
        self.cat = np.array([isinstance(d, Categorical) for d in dims])
        self.k = np.array([len(d.choices) if isinstance(d, Categorical) else 1 for d in dims])
        #: Per column: the probability a categorical kernel gives the other choices.
        self.eps = np.minimum(0.2, (self.k - 1) / self.k)
        #: Known evaluations, best first: (rank key, arrival); their encoded configurations
        #: are the rows ``arrival`` of :attr:`_x` (grown by doubling).
        self.known: list[tuple[tuple[float, float, float], int]] = []
        self._x = np.empty((16, space.dim))

    @property
    def observes(self) -> bool:
        """It learns every evaluated individual."""
        return True

    def observe(self, individual: Individual) -> None:
        """Keep a finished or pruned evaluation (failed ones carry no information on the loss)."""
        loss = individual.loss
        if loss is not None and math.isfinite(loss):
            key = (0.0, float(loss), 0.0)
        else:
            rank = pruned_rank(individual)
            if rank is None:
                return
            key = (1.0, *rank)
        try:
            x = self.space.encode(individual)
        except (KeyError, ValueError):
            return  # not a configuration of this space (e.g. another space's immigrant)
        n = len(self.known)
        if n == len(self._x):
            self._x = np.concatenate([self._x, np.empty_like(self._x)])
        self._x[n] = x
        bisect.insort(self.known, (key, n))

    def split(self) -> tuple[np.ndarray, np.ndarray]:
        """The encoded configurations of ``l`` (the best) and of ``g`` (the rest)."""
        n_below = min(max(1, math.ceil(self.gamma * len(self.known))), self.max_below)
        xs = self._x[[arrival for _, arrival in self.known]]
        return xs[:n_below], xs[n_below:]

    def __call__(self, inds: Sequence[Individual] = ()) -> Individual:
        d = self.space.dim
        if len(self.known) < self.startup:
            return Individual(self.space.decode([self.rng.random() for _ in range(d)]))
        gen = np.random.default_rng(self.rng.getrandbits(63))
        below, above = self.split()
        cands = self._sample(below, gen)
        if self.space.conditions:  # what each candidate activates, its inactive ones marked
            cands = self.space.encode_many(self.space.decode_many(cands))
        score = self._log_density(cands, below) - self._log_density(cands, above)
        if self.space.forbidden:  # the best candidate no forbidden clause excludes, if any
            allowed = np.array([not self._forbidden(c) for c in self.space.decode_many(cands)])
            if allowed.any():
                score = np.where(allowed, score, -np.inf)
        return Individual(self.space.decode(cands[int(np.argmax(score))]))

    def _forbidden(self, params: dict) -> bool:
        return any(clause.forbids(params) for clause in self.space.forbidden)

    # ------------------------------------------------------------------ densities
    def _width(self, n: int) -> float:
        return max(0.2 * n ** (-1.0 / (self.space.dim + 4)), MIN_WIDTH)

    def _sample(self, centres: np.ndarray, gen: np.random.Generator) -> np.ndarray:
        """``candidates`` draws from the density over ``centres`` with its prior."""
        n, d = centres.shape
        weights = np.append(np.ones(n), self.prior_weight)
        comp = gen.choice(n + 1, size=self.candidates, p=weights / weights.sum())
        out = gen.random((self.candidates, d))  # the prior's draws, kept where comp == n
        h = self._width(n)
        for row, j in enumerate(comp):
            if j == n:
                continue
            mu = centres[j]
            # A truncated normal by its inverse CDF on [0, 1]: exact and never rejected.
            lo, hi = ndtr(-mu / h), ndtr((1.0 - mu) / h)
            q = lo + gen.random(d) * (hi - lo)
            x = np.clip(mu + h * _ndtri(q), 0.0, 1.0)
            # A categorical keeps its value or moves to another cell uniformly.
            moved = gen.random(d) < self.eps
            cell = np.floor(mu * self.k)
            other = (cell + 1 + np.floor(gen.random(d) * (self.k - 1))) % self.k
            x = np.where(self.cat, (np.where(moved, other, cell) + 0.5) / self.k, x)
            inactive = mu == INACTIVE
            if inactive.any():  # a parameter the component lacks: drawn from the prior
                x = np.where(inactive, gen.random(d), x)
            out[row] = x
        return out

    def _log_density(self, x: np.ndarray, centres: np.ndarray) -> np.ndarray:
        """The log density of each row of ``x`` under the mixture over ``centres`` and the
        uniform prior (categoricals as probabilities of their cells, scaled to the cube)."""
        m = len(x)
        n = len(centres)
        log_prior = np.full(m, math.log(self.prior_weight))
        if n == 0:
            return log_prior - math.log(self.prior_weight)
        h = self._width(n)
        active = centres != INACTIVE  # (n, d); all True in an unconditional space
        centres = np.where(active, centres, 0.5)
        z = (x[:, None, :] - centres[None, :, :]) / h  # (m, n, d)
        norm = np.log(ndtr((1.0 - centres) / h) - ndtr(-centres / h))  # (n, d)
        num = -0.5 * z**2 - 0.5 * math.log(2 * math.pi) - math.log(h) - norm[None]
        same = np.floor(x[:, None, :] * self.k) == np.floor(centres[None, :, :] * self.k)
        eps = self.eps
        spread = np.log(np.maximum(eps, 1e-300) / np.maximum(self.k - 1, 1))
        cat = np.where(same, np.log1p(-eps), spread)
        cat = cat + np.log(self.k)  # a probability per cell, as a density on the unit cube
        terms = np.where(self.cat, cat, num)  # (m, n, d)
        if self.space.conditions:
            # A parameter inactive in x does not count; one active in x that the component
            # lacks counts at the prior's density, 1 (log 0).
            terms = np.where((x != INACTIVE)[:, None, :] & active[None, :, :], terms, 0.0)
        per = terms.sum(axis=2)  # (m, n)
        both = np.concatenate([per, log_prior[:, None]], axis=1)
        return logsumexp(both, axis=1) - math.log(n + self.prior_weight)


def _ndtri(q: np.ndarray) -> np.ndarray:
    return ndtri(np.clip(q, 1e-16, 1 - 1e-16))


def tpe_propagator(
    space: SearchSpace, options: TPEOptions, rng: random.Random, run: RunFacts
) -> TPE:
    """The registry's ``tpe``."""
    return TPE(
        space,
        rng,
        startup=options.startup,
        candidates=options.candidates,
        gamma=options.gamma,
        max_below=options.max_below,
        prior_weight=options.prior_weight,
    )
