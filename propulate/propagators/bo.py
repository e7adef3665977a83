"""Bayesian optimization on every worker: asynchronous and decentralized (``--propagator bo``).

Each worker fits its own Gaussian process to every evaluation it learns about
(:meth:`BO.observe`: its own, its island peers', immigrants and, on a resume, the records) and
proposes the configuration that maximizes an acquisition (EI, PI or UCB,
:mod:`propulate.propagators.bo_search`), with no manager: the shape of DeepHyper's
asynchronous decentralized BO on the island model.

* **The model** (:class:`propulate.models.online_gp.OnlineGP`): ARD Matern-5/2 over the encoded
  unit cube (log-scaled parameters on their log; an integer or categorical at its cell's centre,
  proposals snapped to cells, so the model scores exactly what can be proposed; an inactive
  parameter of a conditional space at :data:`~propulate.space.search.INACTIVE`, as the other
  models encode it). Its outputs are the normal scores of the evaluations' ranks (a Gaussian
  copula): a loss many orders of magnitude above the rest, or a failure, costs the fit nothing
  beyond its rank. Finished evaluations rank by loss; pruned ones after them, by the step they
  reached (later first) and their value there, as ``tpe`` ranks them
  (:func:`~propulate.propagators.pruned_pool.pruned_rank`); failed ones last, all tied: the
  model steers away from where they failed.
* **Pending points**: each proposal is sent to the other workers before it is evaluated
  (:class:`propulate.propagators.bo_peers.Peers`); a worker's latest proposal counts as pending
  until its evaluation is observed, and the acquisition conditions on the pending points as a
  kriging believer, so two workers do not propose the same point. A configuration already
  evaluated or pending is never proposed, nor one a forbidden clause excludes (the engine
  checks the constraint function, which may depend on the task, as for every propagator).
* **Conditional spaces**: each candidate's acquisition is scored against the best of its own
  branch (set of active parameters), shrunk towards the best of all branches the more branches
  there are, and the search also refines around each branch's best
  (:meth:`BO._branch_incumbent`): a branch that the design sampled badly is searched again.
* **A per-worker exploration weight**: with ``rank_stretch`` worker ``r`` multiplies the
  acquisition's weight (EI's margin ``xi``, UCB's ``kappa``) by
  ``f_min (f_max / f_min) ** frac(0.5 + r g)`` (``g`` the golden ratio's fractional part): rank
  0 keeps the weight (the geometric mean of the range), the others spread over
  ``[f_min, f_max]`` without repeating, as qUCB draws a ``kappa`` per worker.
* **Bounded cost per proposal**: the hyperparameters are refitted (maximum a posteriori, warm
  start) every ``refit_every`` new evaluations (default: every ``max(1, n // 20)`` at ``n``
  known), on at most ``fit_points`` of them (the best half and a random half); in between the
  factor grows by one bordered row per evaluation. Past ``max_points`` evaluations the model
  holds a subset, chosen at each refit (the best half and a random half of the rest), plus the
  evaluations since.
* The first ``n_initial`` evaluations (all workers together) come from a space-filling design
  of each worker (scrambled Sobol, Latin hypercube or uniform).

Several objectives need weights, as for every single-objective propagator (the records' loss is
their weighted sum). Children carry no state: a resume rebuilds the model from the records, and
one worker with a seed proposes the same configurations on every run.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence

import numpy as np
from scipy.special import ndtri
from scipy.stats import qmc

from propulate.models.linalg import blas_threads
from propulate.models.online_gp import OnlineGP
from propulate.plugins.facts import RunFacts
from propulate.population import Individual
from propulate.propagators.base import Propagator
from propulate.propagators.bo_peers import Peers
from propulate.propagators.bo_search import ACQUISITIONS, Snap, acquisition, maximize
from propulate.propagators.pruned_pool import pruned_rank
from propulate.propagators.registry import BOOptions
from propulate.space import SearchSpace

#: Default exploration weight per acquisition (standardized outputs).
WEIGHTS = {"ei": 0.01, "pi": 0.01, "ucb": 1.96}
DESIGNS = ("sobol", "lhs", "random")
GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0
#: How many of the best finished configurations the acquisition search draws around.
CENTRES = 5


def _branch_of(row: np.ndarray) -> bytes:
    """The branch of an encoded configuration of a conditional space: the mask of its inactive
    parameters (encoded at :data:`~propulate.space.search.INACTIVE`, below zero)."""
    return (row < 0.0).tobytes()


def rank_factor(rank: int, low: float = 0.5, high: float = 2.0) -> float:
    """Worker ``rank``'s multiplier of the exploration weight (module docstring)."""
    frac = (0.5 + rank * GOLDEN) % 1.0
    return low * (high / low) ** frac


class BO(Propagator):
    """Asynchronous decentralized Bayesian optimization (module docstring).

    Parameters
    ----------
    space : SearchSpace
        The search space.
    rng : random.Random, optional
        This worker's random stream.
    acquisition : str
        ``ucb`` (the default, as DeepHyper's), ``ei`` or ``pi``.
    weight : float, optional
        The exploration weight before the rank's factor (default :data:`WEIGHTS`).
    rank_stretch : bool
        Vary the weight between workers (:func:`rank_factor`).
    factor_range : (float, float)
        The range of the rank's factor.
    n_initial : int, optional
        Evaluations from the design before the model proposes (default ``3 d``, at least 5
        and at most 20).
    initial_design : str
        ``sobol``, ``lhs`` or ``random``.
    n_candidates, n_restarts : int
        The acquisition search's candidates and refined starts
        (:func:`~propulate.propagators.bo_search.maximize`).
    refit_every : int, optional
        New evaluations between hyperparameter fits (default ``max(1, n // 20)``).
    max_points : int, optional
        Evaluations the model holds at most (plus those since the last refit); ``None``: all.
    fit_points : int
        Evaluations the hyperparameters are fitted on at most.
    group : int
        Ranks per worker (where the pending points are sent).
    rank : int, optional
        The worker's rank, when known before :meth:`bind` (Propulate 1.2 style).
    """

    def __init__(
        self,
        space: SearchSpace,
        rng: random.Random | None = None,
        acquisition: str = "ucb",
        weight: float | None = None,
        rank_stretch: bool = True,
        factor_range: tuple[float, float] = (0.5, 2.0),
        n_initial: int | None = None,
        initial_design: str = "sobol",
        n_candidates: int = 512,
        n_restarts: int = 8,
        refit_every: int | None = None,
        max_points: int | None = 500,
        fit_points: int = 128,
        group: int = 1,
        rank: int | None = None,
    ) -> None:
        super().__init__(-1, 1, rng)
        acquisition = acquisition.lower()
        if acquisition not in ACQUISITIONS:
            raise ValueError(f"acquisition must be one of {', '.join(ACQUISITIONS)}")
        if initial_design not in DESIGNS:
            raise ValueError(f"initial_design must be one of {', '.join(DESIGNS)}")
        if not 0 < factor_range[0] <= factor_range[1]:
            raise ValueError("factor_range needs 0 < low <= high")
        if n_candidates < 2 or n_restarts < 1 or fit_points < 2:
            raise ValueError("n_candidates >= 2, n_restarts >= 1 and fit_points >= 2 needed")
        if max_points is not None and max_points < 2:
            raise ValueError("max_points must be >= 2 (or None)")
        self.space, self.snap = space, Snap(space)
        d = space.dim
        self.kind, self.base_weight = (
            acquisition,
            WEIGHTS[acquisition] if weight is None else weight,
        )
        self.rank_stretch, self.factor_range = rank_stretch, factor_range
        self.n_initial = max(5, min(3 * d, 20)) if n_initial is None else max(1, n_initial)
        self.initial_design = initial_design
        self.n_candidates, self.n_restarts = n_candidates, n_restarts
        self.refit_every, self.max_points, self.fit_points = refit_every, max_points, fit_points
        self.peers = Peers(group)
        self.rank = 0 if rank is None else rank
        #: Observed evaluations: encoded rows (:attr:`_x`, grown by doubling), their rank keys
        #: (finished ``(0, loss)``, pruned ``(1, -step, value)``, failed ``(2,)``) and the keys
        #: of their configurations.
        self._x = np.empty((16, d))
        self._f = np.empty((16, self.snap.width))  # their model features
        self.known: list[tuple[float, ...]] = []
        self.seen: set[tuple] = set()
        self.gp = OnlineGP(self.snap.width)
        self._held: list[int] = []  # rows the model holds, in its order
        self._fitted_at = 0  # observations at the last hyperparameter fit
        self._synced = 0  # observations the model has seen (held or left out)
        self._design: np.ndarray | None = None
        self._design_used = 0
        self.proposals = 0  # children this worker has bred

    @property
    def observes(self) -> bool:
        """It learns every evaluated individual."""
        return True

    @property
    def factor(self) -> float:
        """This worker's multiplier of the exploration weight (1 without ``rank_stretch``)."""
        return rank_factor(self.rank, *self.factor_range) if self.rank_stretch else 1.0

    @property
    def weight(self) -> float:
        """This worker's exploration weight."""
        return self.base_weight * self.factor

    def current(self) -> tuple[str, float]:
        """The acquisition and the exploration weight of the next proposal."""
        return self.kind, self.weight

    def explore_probability(self) -> float:
        """The probability that the next proposal is drawn uniformly instead (none here)."""
        return 0.0

    def bind(self, island: int, rank: int) -> None:
        """Learn the worker's rank (its exploration weight) and join the other workers."""
        self.rank = rank
        self.peers.connect(rank)

    # ----------------------------------------------------------------- observations
    def observe(self, individual: Individual) -> None:
        """Keep an evaluated individual (finished, pruned or failed) for the model."""
        loss = individual.loss
        if loss is not None and math.isfinite(loss) and not individual.failed:
            key: tuple[float, ...] = (0.0, float(loss))
        elif (pr := pruned_rank(individual)) is not None:
            key = (1.0, *pr)
        else:
            key = (2.0,)
        try:
            x = self.space.encode(individual)
            config = self.space.key(individual)
        except (KeyError, ValueError):
            return  # not a configuration of this space (e.g. another space's immigrant)
        n = len(self.known)
        if n == len(self._x):
            self._x = np.concatenate([self._x, np.empty_like(self._x)])
            self._f = np.concatenate([self._f, np.empty_like(self._f)])
        self._x[n] = x
        self._f[n] = self.snap.features(x)[0]
        self.known.append(key)
        self.seen.add(config)
        self.peers.resolve(x)

    @property
    def n(self) -> int:
        """Observed evaluations."""
        return len(self.known)

    def scores(self) -> np.ndarray:
        """The normal scores of the observations' ranks (equal keys share their mean rank)."""
        n, keys = self.n, self.known
        order = sorted(range(n), key=keys.__getitem__)
        ranks = np.empty(n)
        start = 0
        while start < n:
            end = start
            while end + 1 < n and keys[order[end + 1]] == keys[order[start]]:
                end += 1
            ranks[order[start : end + 1]] = 0.5 * (start + end)
            start = end + 1
        return ndtri((ranks + 0.5) / n)

    # ----------------------------------------------------------------- the model
    def _refit_due(self) -> bool:
        every = self.refit_every if self.refit_every is not None else max(1, self.n // 20)
        return not self._held or self.n - self._fitted_at >= every

    def _choose(
        self, rows: np.ndarray, z: np.ndarray, cap: int, gen: np.random.Generator
    ) -> list[int]:
        """At most ``cap`` of ``rows``: the best half by ``z`` and a random half of the rest."""
        if len(rows) <= cap:
            return rows.tolist()
        order = rows[np.argsort(z[rows], kind="stable")]
        best, rest = order[: cap // 2], order[cap // 2 :]
        pick = gen.choice(len(rest), size=cap - len(best), replace=False)
        return sorted(best.tolist() + rest[np.sort(pick)].tolist())

    def _update(self, z: np.ndarray) -> np.ndarray:
        """Bring the model up to the observations; returns its standardized targets."""
        n = self.n
        if self._refit_due():
            gen = np.random.default_rng(n)
            rows = np.arange(n)
            cap = n if self.max_points is None else self.max_points
            self._held = self._choose(rows, z, cap, gen)
            fit_rows = np.array(self._choose(np.array(self._held), z, self.fit_points, gen))
            zf = z[fit_rows]
            zf = (zf - zf.mean()) / (zf.std() or 1.0)
            restarts = 2 if self._fitted_at == 0 else 1
            self.gp.fit(self._f[fit_rows], zf, seed=n, restarts=restarts)
            self.gp.reset(self._f[self._held])
            self._fitted_at = n
        else:
            for row in range(self._synced, n):
                self._held.append(row)
                self.gp.append(self._f[row])
        self._synced = n
        zh = z[self._held]
        zh = (zh - zh.mean()) / (zh.std() or 1.0)
        self.gp.set_targets(zh)
        return zh

    # ----------------------------------------------------------------- proposals
    def __call__(self, inds: Sequence[Individual] = ()) -> Individual:
        self.peers.receive()
        self.proposals += 1
        explore = self.explore_probability()
        if self.n < self.n_initial:
            u = self._initial()
        elif explore > 0.0 and self.rng.random() < explore:
            u = self.snap(np.array([[self.rng.random() for _ in range(self.space.dim)]]))[0]
        else:
            with blas_threads(self.n):
                u = self._propose()
        child = Individual(self.space.decode(u))
        self.peers.announce(self.space.encode(child))
        return child

    def _forbidden(self, params: dict) -> bool:
        return any(clause.forbids(params) for clause in self.space.forbidden)

    def _initial(self) -> np.ndarray:
        """The next point of this worker's design (a fresh design when it is used up)."""
        d = self.space.dim
        if self._design is None or self._design_used >= len(self._design):
            seed = self.rng.getrandbits(63)
            if self.initial_design == "sobol":
                m = max(1, math.ceil(math.log2(self.n_initial)))
                self._design = qmc.Sobol(d, scramble=True, seed=seed).random_base2(m)
            elif self.initial_design == "lhs":
                self._design = qmc.LatinHypercube(d=d, seed=seed).random(self.n_initial)
            else:
                self._design = np.random.default_rng(seed).random((self.n_initial, d))
            self._design_used = 0
        for _ in range(len(self._design) - self._design_used):
            u = self._design[self._design_used]
            self._design_used += 1
            params = self.space.decode(u)
            if self.space.key(params) not in self.seen and not self._forbidden(params):
                return u
        return np.array([self.rng.random() for _ in range(d)])

    def _finished_by_score(self, z: np.ndarray) -> list[int]:
        """The finished evaluations, best normal score first."""
        return [int(i) for i in np.argsort(z, kind="stable") if self.known[i][0] == 0.0]

    def _branch_bests(self, order: list[int]) -> dict[bytes, int]:
        """In a conditional space, each branch's best finished evaluation (``order``: the
        finished ones, best first), in the order of ``order``; empty without conditions."""
        if not self.space.conditions:
            return {}
        bests: dict[bytes, int] = {}
        for i in order:
            bests.setdefault(_branch_of(self._x[i]), i)
        return bests

    def _centres(self, order: list[int], bests: dict[bytes, int]) -> np.ndarray:
        """The encoded configurations the acquisition search draws around: the
        :data:`CENTRES` best finished ones (``order``) and each branch's best (``bests``) as
        well, so that a branch whose good region the design missed is refined around its best
        point, not only sampled uniformly."""
        chosen = order[:CENTRES]
        chosen += [i for i in bests.values() if i not in chosen]
        return self._x[chosen] if chosen else np.empty((0, self.space.dim))

    def _branch_incumbent(
        self, bests: dict[bytes, int], z: np.ndarray, overall: float
    ) -> Callable[[np.ndarray], np.ndarray] | None:
        """In a conditional space, ``incumbent(U)``: per encoded row, the incumbent its
        acquisition is scored against (``None`` in a space without conditions).

        A branch is a set of active parameters. Against the best of all branches, a branch
        whose good region the design missed looks worse than a refined branch everywhere, and
        the search never went back to it (the two-branch benchmark: 5 of 20 development runs
        stuck in the worse branch). Each candidate is scored against its own branch's best
        finished score (``bests``) instead, moved towards ``overall`` (the best of all) by
        ``1 - 1 / sqrt(branches)``: with two branches each is searched nearly as a problem of
        its own, with many the search stays with the best ones. A branch where nothing has
        finished counts the worst score. The lower confidence bound becomes the improvement
        on the incumbent, so that branches compare by what they have to gain.
        """
        if not self.space.conditions:
            return None
        worst = float(z.max())
        own_best = {branch: float(z[i]) for branch, i in bests.items()}
        share = 1.0 / math.sqrt(max(1, len(own_best)))

        def incumbent(U: np.ndarray) -> np.ndarray:
            own = np.array([own_best.get(_branch_of(row), worst) for row in U])
            return overall + share * (own - overall)

        return incumbent

    def _propose(self) -> np.ndarray:
        gen = np.random.default_rng(self.rng.getrandbits(63))
        z = self.scores()
        zh = self._update(z)
        best = float(zh.min())
        pending = self.peers.points()
        pending = self.snap.features(pending) if len(pending) else None
        (kind, weight), gp, features = self.current(), self.gp, self.snap.features

        order = self._finished_by_score(z)
        bests = self._branch_bests(order)
        incumbent = self._branch_incumbent(bests, z, best)

        def score(U: np.ndarray) -> np.ndarray:
            mean, var = gp.predict(features(U), pending)
            if incumbent is None:
                return acquisition(kind, mean, var, best, weight)
            own = incumbent(U)
            value = acquisition(kind, mean, var, own, weight)
            return value + own if kind == "ucb" else value

        centres = self._centres(order, bests)
        steps = self.snap.steps(gp.lengthscale)
        ranked = maximize(score, self.snap, centres, steps, gen, self.n_candidates, self.n_restarts)
        taken = self.seen | {
            self.space.key(self.space.decode(p)) for p in self.peers.pending.values()
        }
        for u in ranked:
            params = self.space.decode(u)
            if self.space.key(params) not in taken and not self._forbidden(params):
                return u
        return gen.random(self.space.dim)


def bo_propagator(space: SearchSpace, options: BOOptions, rng: random.Random, run: RunFacts) -> BO:
    """The registry's ``bo``: a worker's evaluation spans ``run.ranks_per_worker`` ranks."""
    return BO(
        space,
        rng,
        acquisition=options.acquisition,
        n_initial=options.n_initial,
        initial_design=options.initial_design,
        n_candidates=options.n_candidates,
        n_restarts=options.n_restarts,
        max_points=options.max_points,
        group=run.ranks_per_worker,
    )
