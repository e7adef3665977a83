"""Nelder-Mead as a propagator: ``ParallelNelderMead`` (Propulate 1.2's class and signature).

Each worker runs its own downhill simplex (Nelder and Mead 1965) on its own evaluations, one
evaluation per call: the simplex's vertices are evaluated one by one, then each step proposes
the reflection of the worst vertex and, depending on its loss, an expansion, an outside or
inside contraction, or a shrink of the simplex towards its best vertex (``n`` evaluations).
Workers started from the same ``start`` build differently oriented simplices, so an island
runs several searches side by side ("parallel"); the island's population is not used.

The outcome of each proposal reaches the propagator through
:meth:`~propulate.propagators.base.Propagator.observe`; a proposal that the engine replaced
(it had been evaluated already) takes the loss known for that configuration. Where 1.2 was
wrong or silent, this class does the right thing: points are kept inside the limits (a
proposal outside is put on the border), integers are searched on a continuous simplex and
rounded, a simplex that has collapsed (diameter below ``1e-9`` of the ranges, or losses equal
to ``1e-12``) restarts around the island's best configuration with the initial size, and a
resumed run rebuilds the simplex from the worker's best evaluations. Integer and categorical
parameters are coordinates of the simplex decoded to the integer or choice whose cell holds
them (a categorical's choices in their listed order); a space of categorical parameters only
is refused. ``scale`` is the initial edge length as a fraction (x 0.1) of each
parameter's range: the default 1.0 gives edges of 10 % of the ranges.
"""

from __future__ import annotations

import math
import random
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from propulate.plugins.facts import RunFacts
from propulate.population import Individual
from propulate.propagators.base import Propagator
from propulate.propagators.registry import NMOptions
from propulate.propagators.unit import UnitCodec
from propulate.space import SearchSpace

#: Initial edge length (unit cube) per unit of ``scale``.
EDGE = 0.1
#: Simplex steps a call takes at most on configurations evaluated before (their known losses)
#: before it proposes one anyway (the engine then replaces it).
KNOWN_STEPS = 100


class ParallelNelderMead(Propagator):
    """One Nelder-Mead search per worker (module docstring).

    Parameters
    ----------
    limits : limits or SearchSpace
        The search space (a float or integer parameter at least).
    rng : random.Random, optional
        Random number generator (simplex orientation, random start).
    start : array-like, optional
        The first simplex's corner, in the parameters' units and order (default: uniform
        random in the limits).
    alpha, gamma, rho, sigma : float
        Reflection, expansion, contraction and shrink coefficients.
    scale : float
        Initial edge length, in tenths of each parameter's range.
    """

    def __init__(
        self,
        limits: Mapping[str, Any] | SearchSpace,
        rng: random.Random | None = None,
        start: Sequence[float] | np.ndarray | None = None,
        alpha: float = 1.0,
        gamma: float = 2.0,
        rho: float = 0.5,
        sigma: float = 0.5,
        scale: float = 1.0,
    ) -> None:
        super().__init__(-1, 1, rng)
        self.space = SearchSpace.from_limits(limits)
        self.limits = limits
        self.codec = UnitCodec(self.space, "Nelder-Mead")
        if not (alpha > 0 and gamma > 1 and 0 < rho <= 0.5 and 0 < sigma < 1 and scale > 0):
            raise ValueError(
                "need alpha > 0, gamma > 1, 0 < rho <= 0.5, 0 < sigma < 1 and scale > 0"
            )
        self.alpha, self.gamma, self.rho, self.sigma, self.scale = alpha, gamma, rho, sigma, scale
        self.start = None if start is None else np.asarray(start, dtype=float)
        if self.start is not None and self.start.size != self.codec.n:
            raise ValueError(f"start needs {self.codec.n} values, got {self.start.size}")
        self.rank: int | None = None
        self.simplex: list[np.ndarray] = []
        self.losses: list[float] = []
        self._todo: list[np.ndarray] = []  # points to evaluate before the next decision
        self._results: list[float] = []
        self._phase = "init"
        self._pending: Individual | None = None
        self._seq = 0
        self._known: dict[Hashable, float] = {}
        self._own: list[tuple[float, np.ndarray]] = []
        self._best: tuple[float, np.ndarray] | None = None

    # ----------------------------------------------------------------- the seam
    def bind(self, island: int, rank: int) -> None:
        """Learn the rank, to recognise its own evaluations after a resume."""
        self.rank = int(rank)

    def observe(self, individual: Individual) -> None:
        """Note the loss of every configuration; feed its own proposal's to the simplex."""
        loss = math.inf if individual.failed or individual.loss is None else individual.loss
        x = self.codec.encode(individual)
        key = self.space.key(individual)
        self._known[key] = min(loss, self._known.get(key, math.inf))
        if math.isfinite(loss) and (self._best is None or loss < self._best[0]):
            self._best = (loss, x)
        state = individual.state if isinstance(individual.state, dict) else {}
        mine = individual is self._pending or (
            self.rank is not None and individual.rank == self.rank and "nm" in state
        )
        if not mine:
            return
        self._own.append((loss, x))
        if individual is self._pending or state.get("nm") == self._seq:
            self._pending = None
            self._feed(loss)

    def __call__(self, inds: Sequence[Individual] = ()) -> Individual:
        if self._pending is not None:  # replaced by the engine: it was evaluated before
            self._pending, pending = None, self._pending
            self._feed(self._known.get(self.space.key(pending), math.inf))
        if not self.simplex and self._phase == "init" and not self._todo:
            self._begin()
        for _ in range(KNOWN_STEPS):  # a vertex evaluated before: its known loss, no proposal
            child = Individual(self.codec.decode(np.clip(self._todo[0], 0.0, 1.0)))
            known = self._known.get(self.space.key(child))
            if known is None:
                break
            self._feed(known)  # leaves the next vertex to evaluate in self._todo
        else:
            child = Individual(self.codec.decode(np.clip(self._todo[0], 0.0, 1.0)))
        self._seq += 1
        child.state = {"nm": self._seq}
        self._pending = child
        return child

    # ----------------------------------------------------------------- the simplex
    def _begin(self, around: np.ndarray | None = None) -> None:
        """A new simplex: from ``around``, the start, the worker's best evaluations (after a
        resume) or a random corner."""
        n = self.codec.n
        self.simplex, self.losses, self._results = [], [], []
        if around is None and len(self._own) > n:
            best = sorted(self._own, key=lambda t: t[0])[: n + 1]
            self.simplex = [x for _, x in best]
            self.losses = [loss for loss, _ in best]
            self._phase = "reflect"
            self._reflect()
            return
        edge = EDGE * self.scale
        if around is None and self.start is None and self._best is not None:
            # taking over from another method: polish the best configuration it found, along
            # this worker's own random directions (workers polishing one point must not
            # propose the same vertices)
            around = self._best[1]
            gauss = [[self.rng.gauss(0.0, 1.0) for _ in range(n)] for _ in range(n)]
            directions = np.linalg.qr(np.array(gauss))[0]
        else:  # along the axes, each in a random sense
            if around is None:
                around = (
                    self.codec.encode(dict(zip(self.codec.names, self.start, strict=True)))
                    if self.start is not None
                    else np.fromiter((self.rng.random() for _ in range(n)), float, n)
                )
            directions = np.diag([1.0 if self.rng.random() < 0.5 else -1.0 for _ in range(n)])
        points = [around.copy()]
        for i in range(n):  # a step that leaves the cube goes the other way
            step = edge * directions[:, i]
            inside = np.all((around + step >= 0.0) & (around + step <= 1.0))
            points.append(np.clip(around + step if inside else around - step, 0.0, 1.0))
        self._phase, self._todo = "init", points

    def _feed(self, loss: float) -> None:
        """The loss of the proposal ``self._todo[0]``."""
        if not self._todo:
            return
        x = np.clip(self._todo.pop(0), 0.0, 1.0)
        self._results.append(loss)
        if self._phase in ("init", "shrink"):
            if self._phase == "init":
                self.simplex.append(x)
                self.losses.append(loss)
            else:
                i = len(self._results)
                self.simplex[i], self.losses[i] = x, loss
            if not self._todo:
                self._results = []
                self._next()
            return
        self._step(x, loss)

    def _next(self) -> None:
        """Order the simplex, restart a collapsed one, else propose a reflection."""
        order = np.argsort(self.losses, kind="stable")
        self.simplex = [self.simplex[i] for i in order]
        self.losses = [self.losses[i] for i in order]
        diameter = max(float(np.max(np.abs(v - self.simplex[0]))) for v in self.simplex[1:])
        spread = self.losses[-1] - self.losses[0]
        if diameter < 1e-9 or (math.isfinite(spread) and spread < 1e-12):
            self._begin(self._best[1] if self._best is not None else None)
            return
        self._phase = "reflect"
        self._reflect()

    def _centroid(self) -> np.ndarray:
        return np.mean(self.simplex[:-1], axis=0)

    def _reflect(self) -> None:
        c = self._centroid()
        self._todo, self._results = [c + self.alpha * (c - self.simplex[-1])], []

    def _step(self, x: np.ndarray, loss: float) -> None:
        best, second, worst = self.losses[0], self.losses[-2], self.losses[-1]
        c = self._centroid()
        if self._phase == "reflect":
            self._xr, self._fr = x, loss
            if loss < best:
                self._phase, self._todo = "expand", [c + self.gamma * (x - c)]
            elif loss < second:
                self._replace(x, loss)
            elif loss < worst:
                self._phase, self._todo = "outside", [c + self.rho * (x - c)]
            else:
                self._phase, self._todo = "inside", [c + self.rho * (self.simplex[-1] - c)]
            return
        if self._phase == "expand":
            self._replace(*((x, loss) if loss < self._fr else (self._xr, self._fr)))
        elif (self._phase == "outside" and loss <= self._fr) or (
            self._phase == "inside" and loss < worst
        ):
            self._replace(x, loss)
        else:  # shrink towards the best vertex
            b = self.simplex[0]
            self._phase = "shrink"
            self._todo = [b + self.sigma * (v - b) for v in self.simplex[1:]]
            self._results = []

    def _replace(self, x: np.ndarray, loss: float) -> None:
        self.simplex[-1], self.losses[-1] = x, loss
        self._next()


def nm_propagator(
    space: SearchSpace, options: NMOptions, rng: random.Random, run: RunFacts
) -> Propagator:
    """The registry's ``nm``: one Nelder-Mead search per worker from a random corner."""
    return ParallelNelderMead(
        space,
        rng=rng,
        alpha=options.alpha,
        gamma=options.gamma,
        rho=options.rho,
        sigma=options.sigma,
        scale=options.scale,
    )
