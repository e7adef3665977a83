"""Particle swarm optimization as propagators (Propulate 1.2's classes and signatures).

As in Propulate 1.2, each worker moves its own particle(s): one propagator per rank, built
with the rank (``BasicPSO(inertia, c_cognitive, c_social, rank, limits, rng)``), usually inside
``Conditional(pop_size, pso, InitUniformPSO(limits, rng=rng, rank=rank))``. A particle's
current position is its worker's youngest individual for it, its personal best that worker's
best individual for it, the swarm's best the best individual of the island; the velocity
travels with the individual (``state["v"]``, in units of each parameter's range).

The engine tells a propagator its rank (:meth:`~propulate.propagators.base.Propagator.bind`),
so ``rank=None`` works too, and the worker's individuals are followed through
:meth:`~propulate.propagators.base.Propagator.observe` (failed ones included) rather than
found by scanning the population on every call; a caller that never calls ``observe`` gets
the population scan of 1.2.

Where 1.2 was wrong, these classes do the right thing: positions are kept inside the limits
(a coordinate that would leave is put on the border and its velocity component set to 0; 1.2
never clipped them), a worker without an individual of its own yet starts a particle at a
uniformly random position instead of failing, integer and categorical parameters (1.2 took
floats only) are moved on a continuous position (``state["x"]``) and decoded to the integer
or choice whose cell holds it (a categorical's choices in their listed order), and
log-scaled parameters move on their log scale. A space of categorical parameters only is
refused.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from propulate.plugins.facts import RunFacts
from propulate.population import Individual
from propulate.propagators.base import Propagator, Stochastic
from propulate.propagators.registry import PSOOptions
from propulate.propagators.unit import UnitCodec
from propulate.space import SearchSpace

Limits = Mapping[str, Any] | SearchSpace
Vec = np.ndarray


def _loss(ind: Individual) -> float:
    return math.inf if ind.failed or ind.loss is None else float(ind.loss)


class _Swarm(Propagator):
    """What every PSO variant shares: the particles of this worker and the update loop.

    Parameters
    ----------
    rank : int or None
        The MPI rank whose individuals are this worker's particles (``None``: told by the
        engine through :meth:`bind`).
    limits : limits or SearchSpace
        The search space (a float or integer parameter at least).
    rng : random.Random
        Random number generator.
    particles : int
        Particles this worker moves in turn (1.2: one per rank).
    """

    uses_velocity = True

    def __init__(
        self, rank: int | None, limits: Limits, rng: random.Random | None, particles: int = 1
    ) -> None:
        super().__init__(-1, 1, rng)
        self.space = SearchSpace.from_limits(limits)
        self.limits = limits
        self.codec = UnitCodec(self.space, type(self).__name__)
        self.rank = rank
        if particles < 1:
            raise ValueError(f"particles must be at least 1, got {particles}")
        self.particles = particles
        self._turn = 0
        self._latest: dict[int, Individual] = {}
        self._pbest: dict[int, Individual] = {}
        self._gbest: Individual | None = None
        self._observed = False

    # ----------------------------------------------------------------- the seam
    def bind(self, island: int, rank: int) -> None:
        """Learn the rank when not given at construction."""
        if self.rank is None:
            self.rank = int(rank)

    def observe(self, individual: Individual) -> None:
        """Follow this worker's particles and the swarm's best."""
        self._observed = True
        if not individual.failed and individual.loss is not None:
            if self._gbest is None or individual.loss < self._gbest.loss:  # type: ignore[operator]
                self._gbest = individual
        k = self._particle(individual)
        if k is None:
            return
        latest = self._latest.get(k)
        if latest is None or individual.generation >= latest.generation:
            self._latest[k] = individual
        best = self._pbest.get(k)
        if _loss(individual) < (math.inf if best is None else _loss(best)):
            self._pbest[k] = individual

    # ----------------------------------------------------------------- breeding
    def __call__(self, inds: Sequence[Individual] = ()) -> Individual:
        k = self._turn % self.particles
        self._turn += 1
        latest, pbest, gbest = self._state(inds, k)
        if latest is None:
            return self._fresh(k)
        x = self._position(latest)
        v = self._velocity(latest)
        p = self._position(pbest) if pbest is not None else x
        g = self._position(gbest) if gbest is not None else p
        r1 = self._uniform(self.codec.n)
        r2 = self._uniform(self.codec.n)
        v = self.velocity(v, x, p, g, r1, r2)
        x = x + v
        out = (x < 0.0) | (x > 1.0)
        v[out] = 0.0  # absorbing walls: the particle stops on the border
        return self._child(np.clip(x, 0.0, 1.0), v, k)

    def velocity(self, v: Vec, x: Vec, p: Vec, g: Vec, r1: Vec, r2: Vec) -> Vec:
        """The particle's new velocity from its velocity ``v``, position ``x``, personal best
        ``p``, the swarm's best ``g`` and uniform draws ``r1``, ``r2`` (unit-cube vectors; each
        variant's update rule)."""
        raise NotImplementedError

    # ----------------------------------------------------------------- helpers
    def _particle(self, ind: Individual) -> int | None:
        """Which of this worker's particles ``ind`` is (None: not one of them)."""
        if self.rank is None or ind.rank != self.rank:
            return None
        state = ind.state if isinstance(ind.state, dict) else {}
        k = state.get("p", 0)
        return k if isinstance(k, int) and 0 <= k < self.particles else None

    def _state(
        self, inds: Sequence[Individual], k: int
    ) -> tuple[Individual | None, Individual | None, Individual | None]:
        if self._observed:
            return self._latest.get(k), self._pbest.get(k), self._gbest
        # 1.2's way: find them in the population handed over
        latest = pbest = gbest = None
        for ind in inds:
            if ind.failed or ind.loss is None:
                continue
            if gbest is None or ind.loss < gbest.loss:  # type: ignore[operator]
                gbest = ind
            if self._particle(ind) == k:
                if latest is None or ind.generation >= latest.generation:
                    latest = ind
                if pbest is None or ind.loss < pbest.loss:  # type: ignore[operator]
                    pbest = ind
        return latest, pbest, gbest

    def _uniform(self, n: int) -> np.ndarray:
        r = self.rng.random
        return np.fromiter((r() for _ in range(n)), dtype=float, count=n)

    def _position(self, ind: Individual) -> np.ndarray:
        state = ind.state if isinstance(ind.state, dict) else {}
        x = state.get("x")
        if x is not None and len(x) == self.codec.n:
            return np.asarray(x, dtype=float)
        return self.codec.encode(ind)

    def _velocity(self, ind: Individual) -> np.ndarray:
        state = ind.state if isinstance(ind.state, dict) else {}
        v = state.get("v")
        if v is not None and len(v) == self.codec.n:
            return np.asarray(v, dtype=float)
        return np.zeros(self.codec.n)

    def _fresh(self, k: int, v_init_limit: float | np.ndarray = 0.1) -> Individual:
        """A particle at a uniformly random position with a random velocity."""
        n = self.codec.n
        x = self._uniform(n)
        v = (2 * self._uniform(n) - 1) * np.asarray(v_init_limit, dtype=float)
        return self._child(x, v, k)

    def _child(self, x: np.ndarray, v: np.ndarray, k: int) -> Individual:
        child = Individual(self.codec.decode(x), rank=-1 if self.rank is None else self.rank)
        state: dict[str, Any] = {"p": k}
        if self.uses_velocity:
            state["v"] = v.tolist()
        if self.codec.discrete.size:
            state["x"] = x.tolist()
        child.state = state
        return child


class BasicPSO(_Swarm):
    """PSO with inertia (Shi and Eberhart 1998): ``v' = w v + c_c r_1 (p - x) + c_s r_2 (g - x)``.

    Parameters
    ----------
    inertia : float
        Inertia weight ``w``.
    c_cognitive : float
        Pull towards the particle's personal best ``p``.
    c_social : float
        Pull towards the swarm's best ``g``.
    rank : int or None
        The rank of the worker the propagator lives on (``None``: told by the engine).
    limits : limits or SearchSpace
        The search space (a float or integer parameter at least).
    rng : random.Random
        Random number generator (``r_1``, ``r_2`` are uniform per coordinate).
    particles : int
        Particles this worker moves in turn (1.2: one).
    """

    def __init__(
        self,
        inertia: float,
        c_cognitive: float,
        c_social: float,
        rank: int | None,
        limits: Limits,
        rng: random.Random | None = None,
        *,
        particles: int = 1,
    ) -> None:
        super().__init__(rank, limits, rng, particles)
        self.inertia, self.c_cognitive, self.c_social = inertia, c_cognitive, c_social

    def velocity(self, v: Vec, x: Vec, p: Vec, g: Vec, r1: Vec, r2: Vec) -> Vec:
        """The inertia update."""
        return self.inertia * v + self.c_cognitive * r1 * (p - x) + self.c_social * r2 * (g - x)


class VelocityClampingPSO(BasicPSO):
    """:class:`BasicPSO` with each velocity component clamped to ``v_limits`` times the
    parameter's range.

    Parameters are those of :class:`BasicPSO` plus ``v_limits`` (a float or one per
    parameter).
    """

    def __init__(
        self,
        inertia: float,
        c_cognitive: float,
        c_social: float,
        rank: int | None,
        limits: Limits,
        rng: random.Random | None,
        v_limits: float | np.ndarray,
        *,
        particles: int = 1,
    ) -> None:
        super().__init__(inertia, c_cognitive, c_social, rank, limits, rng, particles=particles)
        self.v_limits = np.broadcast_to(np.asarray(v_limits, dtype=float), (self.codec.n,))

    def velocity(self, v: Vec, x: Vec, p: Vec, g: Vec, r1: Vec, r2: Vec) -> Vec:
        """The inertia update, clamped."""
        return np.clip(super().velocity(v, x, p, g, r1, r2), -self.v_limits, self.v_limits)


class StatelessPSO(_Swarm):
    """PSO without velocity: ``x' = x + c_c r_1 (p - x) + c_s r_2 (g - x)``.

    Parameters
    ----------
    c_cognitive, c_social : float
        The pulls towards the particle's own best and the swarm's best.
    rank, limits, rng, particles
        As for :class:`BasicPSO`.
    """

    uses_velocity = False

    def __init__(
        self,
        c_cognitive: float,
        c_social: float,
        rank: int | None,
        limits: Limits,
        rng: random.Random | None = None,
        *,
        particles: int = 1,
    ) -> None:
        super().__init__(rank, limits, rng, particles)
        self.c_cognitive, self.c_social = c_cognitive, c_social

    def velocity(self, v: Vec, x: Vec, p: Vec, g: Vec, r1: Vec, r2: Vec) -> Vec:
        """The step itself (no memory of the last one)."""
        return self.c_cognitive * r1 * (p - x) + self.c_social * r2 * (g - x)


class ConstrictionPSO(StatelessPSO):
    """PSO with Clerc and Kennedy's constriction factor
    ``chi = 2 / |2 - phi - sqrt(phi^2 - 4 phi)|``, ``phi = c_c + c_s`` (which must exceed 4):
    ``v' = chi (v + c_c r_1 (p - x) + c_s r_2 (g - x))``.

    Parameters are those of :class:`StatelessPSO`; their sum must exceed 4.
    """

    uses_velocity = True

    def __init__(
        self,
        c_cognitive: float,
        c_social: float,
        rank: int | None,
        limits: Limits,
        rng: random.Random | None = None,
        *,
        particles: int = 1,
    ) -> None:
        phi = c_cognitive + c_social
        if phi <= 4:
            raise ValueError(f"c_cognitive + c_social must exceed 4, got {phi}")
        super().__init__(c_cognitive, c_social, rank, limits, rng, particles=particles)
        self.chi = 2.0 / abs(2.0 - phi - math.sqrt(phi * phi - 4.0 * phi))

    def velocity(self, v: Vec, x: Vec, p: Vec, g: Vec, r1: Vec, r2: Vec) -> Vec:
        """The constricted update."""
        return self.chi * (v + super().velocity(v, x, p, g, r1, r2))


class CanonicalPSO(ConstrictionPSO):
    """:class:`ConstrictionPSO` with velocities clamped to each parameter's range (1.2's
    canonical PSO: constriction and velocity clamping with factor 1)."""

    def velocity(self, v: Vec, x: Vec, p: Vec, g: Vec, r1: Vec, r2: Vec) -> Vec:
        """The constricted update, clamped."""
        return np.clip(super().velocity(v, x, p, g, r1, r2), -1.0, 1.0)


class InitUniformPSO(Stochastic):
    """A new particle at a uniformly random position with a random velocity of at most
    ``v_init_limit`` times each parameter's range (Propulate 1.2's signature).

    With ``parents > 0`` it replaces its input with probability ``probability`` and otherwise
    passes a copy on.

    Parameters
    ----------
    limits : limits or SearchSpace
        The search space.
    rank : int or None
        The rank of the worker it lives on (``None``: told by the engine).
    parents : int
        0: always a new particle; 1: replace the input stochastically.
    probability : float
        Probability of a new particle when ``parents > 0``.
    rng : random.Random, optional
        Random number generator.
    v_init_limit : float or array
        Largest initial velocity component, as a fraction of each range.
    """

    def __init__(
        self,
        limits: Limits,
        rank: int | None = None,
        parents: int = 0,
        probability: float = 1.0,
        rng: random.Random | None = None,
        v_init_limit: float | np.ndarray = 0.1,
    ) -> None:
        super().__init__(parents, 1, probability, rng)
        self._swarm = StatelessPSO(0.0, 0.0, rank, limits, self.rng)
        self._swarm.uses_velocity = True
        self.space, self.limits, self.rank = self._swarm.space, limits, rank
        self.v_init_limit = v_init_limit

    def bind(self, island: int, rank: int) -> None:
        """Learn the rank when not given at construction."""
        self._swarm.bind(island, rank)
        self.rank = self._swarm.rank

    def __call__(self, inds: Sequence[Individual] | Individual = ()) -> Individual:
        if self.parents > 0 and self.rng.random() >= self.probability:
            ind = inds if isinstance(inds, Individual) else inds[0]
            return ind.copy()
        return self._swarm._fresh(0, self.v_init_limit)


def pso_propagator(
    space: SearchSpace, options: PSOOptions, rng: random.Random, run: RunFacts
) -> Propagator:
    """The registry's ``pso``: canonical PSO with ``particles`` particles per worker, started at
    random positions."""
    return CanonicalPSO(
        options.cognitive, options.social, None, space, rng, particles=options.particles
    )
