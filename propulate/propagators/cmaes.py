"""CMA-ES as an asynchronous propagator, with IPOP restarts (Propulate 1.2's names).

Every worker of an island keeps the island's search distribution (:mod:`.cma_core`) and
samples its next configuration from it. The distribution learns from the evaluated
individuals the worker holds through :meth:`CMAPropagator.observe` -- its own and its island
peers' -- and is updated each time ``lambda`` of them have arrived, a generation being
whatever was evaluated last, whichever worker evaluated it. The workers of an island see the
same individuals, so their distributions stay close without any message of their own.

Each child carries ``state = {"cma": [island, restart, seed, generation], "y": step, "s":
sigma}``: the distribution it was sampled from, its sampled step ``(x - mean) / sigma`` in that
distribution's units and that distribution's step size (and ``"k"``, the integer coordinates'
scales, in a space with integers), so ``sigma * y`` is its displacement from the mean it was
drawn from. A generation mixes children sampled before and after the last update, by this
worker or a peer whose distribution differs a little (the workers' evaluations overlap and
arrive in different orders), so the covariance learns from each child's step as drawn, not
re-measured against this worker's distribution; the evolution paths follow the mean's actual
move (:meth:`.cma_core.CMAState.update`), which also keeps the peers' step sizes together.

With many workers per island a generation's children were mostly drawn from a mean one or two
updates old, and recombining them pulls the mean back to where they were drawn: it moves about
one update in two. When the generation's children were drawn on average at least one update
ago, the new mean therefore goes halfway (:data:`.cma_core.RECENTRE`) from recombining the
selected children towards applying their displacements to the current mean. Displacements
alone would leave the workers' means apart for good (each worker applies them to its own
mean), and with two workers on bbob f8 the halfway update, applied to every generation, left
one of five instances unsolved in each of three runs; few workers therefore keep the standard
update. bbob f8, development instances 1-5, 16 workers, 5 ms evaluations, seeds 11-13: median
evaluations to 1e-8 of 10,681, 9,209 and 9,241 (one instance unsolved in the first) against
10,158, 11,986 and 11,437 (one unsolved in the last) before; the package needs 5,181.

Restarts (IPOP-CMA-ES, Auger and Hansen 2005): when a stop test fires (the distribution has
collapsed, the losses are flat, progress stagnates, the covariance is ill-conditioned), the
distribution restarts from a random mean with the population size doubled. A worker that meets
a child of a later restart (or of the same restart with a smaller seed, when two workers
restarted at once) adopts that restart -- the seed fixes its mean -- so the island's workers
keep one distribution; children of earlier restarts are left out of the update. A worker that
has not sampled from its restart yet adopts the same restart of any seed it meets: a resumed
run goes on with the distributions its records describe. Individuals
from elsewhere (immigrants of other islands, other propagators, the run's initial
configurations) are *injected* (Hansen 2011, "Injecting external solutions into CMA-ES") when
they are better than anything of the restart so far: they take part in the next update with
their step clipped to a typical length, so a good immigrant pulls the distribution without
breaking its step-size adaptation (the others would only add noise to the update).

Spaces: float parameters (log-scaled ones on their log scale) and integers live in the unit
cube; integers get the margin of :mod:`.cma_core`, and their continuous sampled values travel
in ``state["u"]``, so the update sees what was sampled, not the rounded value. Each categorical
parameter has its own probability vector over its choices, moved towards the choices of the
generation's selected individuals, with every choice keeping probability at least
``1 / (lambda * k)`` (``k`` choices) so none is lost for good. A space of categorical
parameters only is refused.

The limits: a sample outside the cube is drawn again, up to ``RESAMPLES`` times, so the
distribution learns from points of the space (one worker, bbob f10 and f12, instances 1-5:
evaluating the sample clipped into the cube and penalising its distance outside pinned the
mean to a border of the rotated ellipsoid and the bent cigar, whose optima lie inside; to
1e-8 on f10 in a median of 4,514 evaluations against 4,134 when drawn again, and on f12 7
of 20 runs against 15). A sample still outside after that is clipped into the cube and
its distance outside penalised in the update.
"""

from __future__ import annotations

import logging
import math
import random
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from propulate.plugins.facts import RunFacts
from propulate.population import Individual
from propulate.propagators.base import Propagator
from propulate.propagators.cma_core import Choices, CMAState
from propulate.propagators.cma_metamodel import AUTO_BUDGET, AUTO_MIN_DIM, QuadraticModel
from propulate.propagators.registry import CMAOptions
from propulate.propagators.unit import UnitCodec, unit_clip
from propulate.space import SearchSpace

log = logging.getLogger("propulate")

#: Initial step size in the unit cube (COCO's examples: 2 on [-5, 5]).
SIGMA0 = 0.2
#: Draws of a sample before one outside the cube is clipped into it (and its distance
#: outside penalised in the update).
RESAMPLES = 20
#: Largest population doubling of IPOP.
MAX_DOUBLINGS = 9


class CMAAdapter:
    """How :class:`CMAPropagator` updates the covariance (Propulate 1.2's strategy object).

    :class:`BasicCMA` uses the ``mu`` best of each generation; :class:`ActiveCMA` also pushes
    the covariance away from the worst ones (negative weights).
    """

    active = False


class BasicCMA(CMAAdapter):
    """The original CMA-ES covariance update (positive weights only)."""

    active = False


class ActiveCMA(CMAAdapter):
    """Active CMA-ES (Jastrebski and Arnold 2006): negative weights for the worst individuals."""

    active = True


class CMAPropagator(Propagator):
    """Asynchronous IPOP-CMA-ES (module docstring); one per worker.

    Propulate 1.2's signature: ``CMAPropagator(BasicCMA() | ActiveCMA(), limits, rng=rng)``
    runs unchanged. Differences from 1.2, where it was wrong: samples are kept inside the
    limits (1.2 evaluated points outside them), integers stay integers and categorical
    parameters are searched, the distribution is updated from the evaluated generation
    rather than re-selected from the population on every call, and it restarts.

    Parameters
    ----------
    adapter : CMAAdapter, optional
        :class:`BasicCMA` or :class:`ActiveCMA` (default active, as the ``cma`` package).
    limits : limits or SearchSpace
        The search space.
    decompose_in_each_generation : bool
        Eigendecompose the covariance after every generation instead of lazily.
    select_worst_all_time : bool
        Accepted for 1.2 compatibility; active CMA uses the generation's own worst (the
        all-time worst are not samples of the current distribution).
    pop_size : int, optional
        The first population size ``lambda`` (default ``4 + floor(3 ln n)``); each restart
        doubles it.
    pool_size : int
        Accepted for 1.2 compatibility (generations replace its pre-selection pool).
    rng : random.Random, optional
        Random number generator (a 1.0-style positional ``rng`` in third place works too).
    sigma0 : float
        Initial step size as a fraction of each parameter's range.
    restarts : bool
        Restart with a doubled population when a stop test fires (IPOP).
    inject : bool
        Let individuals from elsewhere (immigrants, other propagators) take part in updates.
    metamodel : bool
        Once per generation, propose the minimum of a quadratic model of the restart's best
        evaluations instead of a sample (:mod:`.cma_metamodel`); it takes part in the update as
        an injected individual when it is the restart's best so far. Needs ``inject``; a space
        with categorical parameters ignores it.
    """

    def __init__(
        self,
        adapter: CMAAdapter | None = None,
        limits: Mapping[str, Any] | SearchSpace | None = None,
        decompose_in_each_generation: bool | random.Random = False,
        select_worst_all_time: bool = False,
        pop_size: int | None = None,
        pool_size: int = 3,
        rng: random.Random | None = None,
        *,
        sigma0: float = SIGMA0,
        restarts: bool = True,
        inject: bool = True,
        metamodel: bool = False,
    ) -> None:
        if isinstance(decompose_in_each_generation, random.Random):  # Propulate 1.0 order
            rng, decompose_in_each_generation = decompose_in_each_generation, False
        if limits is None:
            raise ValueError("CMAPropagator needs the search space (limits)")
        super().__init__(-1, 1, rng)
        self.adapter = adapter if adapter is not None else ActiveCMA()
        self.space = SearchSpace.from_limits(limits)
        self.limits = limits
        self.codec = UnitCodec(self.space, "CMA-ES", categorical="separate")
        self.choices = Choices(self.space, self.codec.categorical)
        n = self.codec.n
        self.lam0 = int(pop_size) if pop_size else 4 + int(3 * math.log(n))
        if self.lam0 < 2:
            raise ValueError(f"pop_size must be at least 2, got {pop_size}")
        if not 0 < sigma0 <= 1:
            raise ValueError(f"sigma0 must be in (0, 1], got {sigma0}")
        self.sigma0 = sigma0
        self.eigen_every = 1 if decompose_in_each_generation else None
        self.select_worst_all_time = select_worst_all_time
        self.pool_size = pool_size
        self.restarts, self.inject = restarts, inject
        self.island = 0
        self.state: CMAState | None = None
        self.restart, self.seed = -1, 0
        self._provisional = False
        self._np: np.random.Generator | None = None
        self._gen: list[tuple[np.ndarray, np.ndarray, float, Individual, float]] = []
        self._mine: tuple[Individual, np.ndarray, np.ndarray] | None = None
        self._best = math.inf  # the best loss of this restart's generations so far
        self.metamodel = (
            QuadraticModel(self.codec.n)
            if metamodel and inject and not self.choices.names
            else None
        )
        self._modelled = -1  # the generation of the last model proposal

    # ----------------------------------------------------------------- the seam
    def bind(self, island: int, rank: int) -> None:
        """Learn the island (it marks the children, so immigrants are told apart)."""
        self.island = int(island)

    def __call__(self, inds: Sequence[Individual] = ()) -> Individual:
        state = self._ensure()
        self._provisional = False
        rng = self._rng()
        if self.metamodel is not None and state.generation != self._modelled:
            self._modelled = state.generation
            x = self.metamodel.propose(state)
            if x is not None:  # no "cma" tag: observed as an injected individual
                return Individual(self.codec.decode(x))
        for _ in range(RESAMPLES):  # a sample outside the cube is drawn again
            raw = state.sample(rng)
            if raw.min() >= 0.0 and raw.max() <= 1.0:
                break
        x = unit_clip(raw)
        child = Individual(self.codec.decode(x))
        if self.choices.names:
            child.update(self.choices.sample(rng))
            child = Individual({n: child[n] for n in self.space.names})
        tag: dict[str, Any] = {"cma": [self.island, self.restart, self.seed, state.generation]}
        # the step in the sampling distribution's units: every worker updates with it as drawn
        step = (raw - state.mean) / (state.sigma * state.scale)
        tag["y"] = step.tolist()  # a float survives the records' JSON exactly
        tag["s"] = state.sigma  # with "y" (and "k"): its displacement from the mean (_move)
        if self.codec.integers.size:
            tag["k"] = state.scale[self.codec.integers].tolist()
            tag["u"] = x[self.codec.integers].tolist()
        outside = np.flatnonzero(raw != x)
        if outside.size:  # where the sample left the cube, and by how much
            tag["o"] = [[int(i), float(raw[i] - x[i])] for i in outside]
        child.state = tag
        self._mine = (child, raw, step)  # observe need not decode its own child again
        return child

    def observe(self, individual: Individual) -> None:
        """Take an evaluated individual into the current generation (module docstring)."""
        state = self._ensure()
        own = individual.state.get("cma") if isinstance(individual.state, dict) else None
        loss = math.inf if individual.failed or individual.loss is None else individual.loss
        penalty = 0.0
        if own is not None and len(own) == 4 and own[0] == self.island:
            restart, seed = int(own[1]), int(own[2])
            if (restart, seed) != (self.restart, self.seed):
                if restart > self.restart or (
                    restart == self.restart and (self._provisional or seed < self.seed)
                ):
                    state = self._start(restart, seed)
                else:
                    return  # an earlier restart's child, or the losing twin of a restart
            step = individual.state.get("y")
            mine = self._mine
            if mine is not None and mine[0] is individual:
                x, step = mine[1], mine[2]  # the sample itself, outside the cube or not
                self._mine = None
            else:
                x = self._vector(individual)
                for i, excess in individual.state.get("o", ()):
                    x[i] += excess  # the sample itself: the update sees the unbounded search
            penalty = sum(excess * excess for _, excess in individual.state.get("o", ()))
            if step is not None and len(step) == state.n:
                y = np.array(step, dtype=float)  # as drawn, whichever worker drew it
            else:  # a record without its step
                y = self._injected(state, x)
        elif self.inject and loss < self._best:  # a foreign individual that improves on it
            y = self._injected(state, self._vector(individual))
            x = state.mean + state.sigma * state.scale * y
        else:
            return
        self._best = min(self._best, loss)
        if self.metamodel is not None:
            self.metamodel.add(x, loss)
        self._gen.append((x, y, loss, individual, penalty))
        if len(self._gen) >= state.lam:
            self._update(state)

    # ----------------------------------------------------------------- internals
    def _rng(self) -> np.random.Generator:
        # Created on first use, so a resumed worker (which reseeds its rng) draws afresh.
        if self._np is None:
            self._np = np.random.default_rng(self.rng.getrandbits(64))
        return self._np

    def _ensure(self) -> CMAState:
        if self.state is None:
            self._start(0, self.rng.getrandbits(31))
            self._provisional = True  # until it samples: a resume adopts the run's restart
        return self.state  # type: ignore[return-value]

    def _start(self, restart: int, seed: int) -> CMAState:
        """Begin restart ``restart`` (population ``lambda0 * 2^restart``, mean from ``seed``)."""
        codec = self.codec
        lam = self.lam0 * 2 ** min(restart, MAX_DOUBLINGS)
        mean = np.random.default_rng(seed).uniform(0.1, 0.9, codec.n)
        self.state = CMAState(
            mean,
            self.sigma0,
            lam,
            active=self.adapter.active,
            integers=codec.integers,
            borders=codec.cell_borders,
            eigen_every=self.eigen_every,
        )
        self.restart, self.seed = restart, seed
        self._provisional = False
        self._gen = []
        self._best = math.inf
        if self.metamodel is not None:
            self.metamodel.clear()
        self.choices.reset()
        return self.state

    def _vector(self, ind: Individual) -> np.ndarray:
        x = self.codec.encode(ind)
        u = ind.state.get("u") if isinstance(ind.state, dict) else None
        if u is not None and len(u) == self.codec.integers.size:
            x[self.codec.integers] = u
        return x

    def _moves(self, state: CMAState, gen: Sequence[tuple[Any, ...]], xs: np.ndarray) -> np.ndarray:
        """The generation's displacements from the means its children were drawn from; the
        point's own from this mean for an injected individual or a record without them (the
        mean does not change while a generation gathers)."""
        moves = xs - state.mean
        for i, g in enumerate(gen):
            move = self._move(g[3].state, state.n) if self._own(g[3]) else None
            if move is not None:
                moves[i] = move
        return moves

    def _own(self, ind: Individual) -> list[Any] | None:
        """The ``"cma"`` tag of a child of this island's current distribution, else ``None``
        (an injected individual: another island's child, another propagator's, a record)."""
        tag = ind.state.get("cma") if isinstance(ind.state, dict) else None
        if tag is None or len(tag) != 4 or tag[:3] != [self.island, self.restart, self.seed]:
            return None
        return tag

    def _move(self, tag: Mapping[str, Any], n: int) -> np.ndarray | None:
        """A child's displacement from the mean it was sampled from, ``sigma * scale * y``,
        from its tag (``None`` for a record without the sampling step size)."""
        y, sigma = tag.get("y"), tag.get("s")
        if y is None or sigma is None or len(y) != n:
            return None
        scale = np.ones(n)
        k = tag.get("k")
        if k is not None and len(k) == self.codec.integers.size:
            scale[self.codec.integers] = k
        return float(sigma) * scale * np.asarray(y, dtype=float)

    def _injected(self, state: CMAState, x: np.ndarray) -> np.ndarray:
        """The step from the mean to ``x``, clipped to length ``sqrt(n) + 2n / (n + 2)`` in
        the distribution's own metric."""
        n = state.n
        y = (x - state.mean) / (state.sigma * state.scale)
        norm = float(np.linalg.norm(state.invsqrtC @ y))
        limit = math.sqrt(n) + 2 * n / (n + 2)
        if norm > limit:
            y *= limit / norm
        return y

    def _late(self, state: CMAState, gen: Sequence[tuple[Any, ...]]) -> bool:
        """Whether the generation's children were sampled, on average, at least one update
        ago (many workers per island): only then does the update apply their displacements
        (:data:`.cma_core.RECENTRE`). With few workers the mean update is the standard one.
        Injected individuals count as sampled now."""
        ages = [state.generation - int(tag[3]) if (tag := self._own(g[3])) else 0 for g in gen]
        return sum(ages) >= len(ages)

    @staticmethod
    def _penalty_weight(state: CMAState, losses: np.ndarray) -> float:
        """The weight of the squared distance outside the cube: one standard deviation
        outside in one coordinate costs ``1 / n`` of the generation's spread of losses
        (interquartile)."""
        finite = losses[np.isfinite(losses)]
        if finite.size < 2:
            return 0.0
        q1, q3 = np.percentile(finite, [25, 75])
        variance = state.sigma**2 * float(np.mean(np.diag(state.C) * state.scale**2))
        return float(q3 - q1) / max(state.n * variance, 1e-300)

    def _update(self, state: CMAState) -> None:
        gen, self._gen = self._gen, []
        xs = np.array([g[0] for g in gen])
        ys = np.array([g[1] for g in gen])
        losses = np.array([g[2] for g in gen])
        penalties = np.array([g[4] for g in gen])
        moves = self._moves(state, gen, xs) if self._late(state, gen) else None
        if penalties.any():
            losses = losses + self._penalty_weight(state, losses) * penalties
            state.update(xs, ys, losses, penalties, moves=moves)
        else:
            state.update(xs, ys, losses, moves=moves)
        if self.choices.names:
            order = np.argsort(losses, kind="stable")[: state.s.mu]
            picks = [gen[i][3] for i in order]
            self.choices.update(picks, state.s.weights[: len(picks)], state.s)
        reason = state.stop_reason()
        if reason is not None and self.restarts:
            what = (self.island, self.restart, reason, state.generation)
            log.debug("CMA-ES island %d restart %d ends (%s) after %d generations", *what)
            self._start(self.restart + 1, self.rng.getrandbits(31))
            self._provisional = True  # a replayed run may have restarted otherwise


def cma_propagator(
    space: SearchSpace, options: CMAOptions, rng: random.Random, run: RunFacts
) -> Propagator:
    """The registry's ``cma``: active IPOP-CMA-ES (population ``4 + 3 ln n`` unless given),
    with the quadratic model's proposals (:mod:`.cma_metamodel`) when ``metamodel`` is ``on``,
    or ``auto``, the run's budget is at most :data:`.cma_metamodel.AUTO_BUDGET` evaluations
    per parameter and the space has at least :data:`.cma_metamodel.AUTO_MIN_DIM` parameters."""
    o = options
    per_parameter = run.budget_per_parameter
    metamodel = o.metamodel == "on" or (
        o.metamodel == "auto"
        and per_parameter is not None
        and per_parameter <= AUTO_BUDGET
        and run.dim >= AUTO_MIN_DIM
    )
    return CMAPropagator(
        ActiveCMA(),
        space,
        rng=rng,
        pop_size=o.pop_size,
        sigma0=o.sigma0,
        restarts=o.restarts,
        metamodel=metamodel,
    )
