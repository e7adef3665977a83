"""Bayesian optimization with the class names and arguments of Propulate's development branch.

Propulate's development branch (after 1.2.2) wires Bayesian optimization as one propagator per
rank into a ``Propulator``::

    from propulate.propagators.bayesopt import BayesianOptimizer, MultiStartAcquisitionOptimizer

    prop = BayesianOptimizer(
        limits=limits,
        rank=comm.rank,
        optimizer=MultiStartAcquisitionOptimizer(n_candidates=1024, n_restarts=15),
        acquisition_type="EI",                # or "PI", "UCB"
        acquisition_params={"xi": 0.05, "kappa": 2.5},
        rank_stretch=True,                    # a different exploration weight per rank
        sparse=True, sparse_params={"max_points": 500},
        n_initial=20, initial_design="sobol", # or "random", "lhs"
        rng=rng,
    )
    Propulator(loss_fn, prop, rng=rng, island_comm=comm, generations=100).propulate()

Here :class:`BayesianOptimizer` is the ``bo`` propagator (:class:`propulate.propagators.bo.BO`:
the model, the pending points of the other ranks, the bounded cost) under those names. The
schedule arguments of the development branch's tutorial work too, with the meaning given in
:class:`BayesianOptimizer`.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from propulate.models.acquisition import expected_improvement
from propulate.propagators.bo import BO
from propulate.propagators.bo_search import acquisition
from propulate.space import SearchSpace

__all__ = [
    "BayesianOptimizer",
    "MultiStartAcquisitionOptimizer",
    "create_acquisition",
    "expected_improvement",
]


@dataclass(frozen=True)
class MultiStartAcquisitionOptimizer:
    """How the acquisition is maximized: ``n_candidates`` scored points (half uniform, half
    around the best evaluations), the best ``n_restarts`` refined
    (:func:`propulate.propagators.bo_search.maximize`)."""

    n_candidates: int = 512
    n_restarts: int = 8

    def __post_init__(self) -> None:
        if self.n_candidates < 2 or self.n_restarts < 1:
            raise ValueError("n_candidates must be >= 2 and n_restarts >= 1")


def _weight(kind: str, params: Mapping[str, float] | None) -> float | None:
    params = params or {}
    return params.get("kappa") if kind == "ucb" else params.get("xi")


def create_acquisition(
    acquisition_type: str = "EI", **params: float
) -> Callable[[np.ndarray, np.ndarray, float], np.ndarray]:
    """``f(mean, var, best) -> values`` (higher is better; minimization) of ``EI``, ``PI``
    (margin ``xi``) or ``UCB`` (``kappa``), in the units of ``mean``."""
    from propulate.propagators.bo import WEIGHTS

    kind = acquisition_type.lower()
    weight = _weight(kind, params)
    weight = WEIGHTS[kind] if weight is None else float(weight)
    return lambda mean, var, best: acquisition(kind, mean, var, best, weight)


class BayesianOptimizer(BO):
    """Bayesian optimization on every rank (the ``bo`` propagator, module docstring).

    Parameters
    ----------
    limits : mapping or SearchSpace
        The search space, 1.2-style limits (``{"x": (-5.0, 5.0), ...}``) or a space.
    rank : int, optional
        The rank (the engine also tells it, :meth:`bind`).
    optimizer : MultiStartAcquisitionOptimizer, optional
        The acquisition search's budget (default 512 candidates, 8 refined).
    acquisition_type : str
        ``EI``, ``PI`` or ``UCB``.
    acquisition_params : mapping, optional
        ``xi`` (EI, PI) and ``kappa`` (UCB), in standardized output units.
    rank_stretch : bool
        Multiply the weight by a factor of the rank in ``[factor_min, factor_max]``.
    factor_min, factor_max : float
        The range of that factor.
    sparse : bool
        Hold at most ``sparse_params["max_points"]`` evaluations (default 500) in the model
        (plus those since its last refit); ``False``: all of them.
    sparse_params : mapping, optional
        ``max_points``.
    n_initial : int, optional
        Evaluations from the initial design before the model proposes.
    initial_design : str
        ``sobol``, ``random`` or ``lhs``.
    rng : random.Random, optional
        This rank's random stream.
    p_explore_start, p_explore_end, p_explore_tau : float
        The probability that a proposal is uniformly random instead,
        ``end + (start - end) exp(-n / tau)`` after ``n`` known evaluations (default 0).
    anneal_acquisition : bool
        Shrink the exploration weight as evaluations accumulate: times
        ``sqrt(n_initial / max(n, n_initial))``.
    second_acquisition_type : str, optional
        The acquisition used once this rank has bred ``acq_switch_generation`` children.
    acq_switch_generation : int, optional
        When to switch.
    second_acquisition_params : mapping, optional
        The second acquisition's ``xi`` / ``kappa``.
    """

    def __init__(
        self,
        limits: Mapping[str, Any] | SearchSpace,
        rank: int | None = None,
        optimizer: MultiStartAcquisitionOptimizer | None = None,
        acquisition_type: str = "EI",
        acquisition_params: Mapping[str, float] | None = None,
        rank_stretch: bool = True,
        factor_min: float = 0.5,
        factor_max: float = 2.0,
        sparse: bool = True,
        sparse_params: Mapping[str, Any] | None = None,
        n_initial: int | None = None,
        initial_design: str = "sobol",
        rng: random.Random | None = None,
        p_explore_start: float = 0.0,
        p_explore_end: float = 0.0,
        p_explore_tau: float = 150.0,
        anneal_acquisition: bool = False,
        second_acquisition_type: str | None = None,
        acq_switch_generation: int | None = None,
        second_acquisition_params: Mapping[str, float] | None = None,
    ) -> None:
        space = SearchSpace.from_limits(limits)
        optimizer = optimizer or MultiStartAcquisitionOptimizer()
        kind = acquisition_type.lower()
        max_points = int((sparse_params or {}).get("max_points", 500)) if sparse else None
        super().__init__(
            space,
            rng,
            acquisition=kind,
            weight=_weight(kind, acquisition_params),
            rank_stretch=rank_stretch,
            factor_range=(factor_min, factor_max),
            n_initial=n_initial,
            initial_design=initial_design,
            n_candidates=optimizer.n_candidates,
            n_restarts=optimizer.n_restarts,
            max_points=max_points,
            rank=rank,
        )
        for p in (p_explore_start, p_explore_end):
            if not 0.0 <= p <= 1.0:
                raise ValueError(f"exploration probabilities must be in [0, 1], got {p}")
        if p_explore_tau <= 0:
            raise ValueError("p_explore_tau must be > 0")
        self.limits = limits
        self.explore = (p_explore_start, p_explore_end, p_explore_tau)
        self.anneal = anneal_acquisition
        self.switch: tuple[int, str, float] | None = None
        if second_acquisition_type is not None and acq_switch_generation is not None:
            second = BO(space, acquisition=second_acquisition_type)  # validates the name
            weight = _weight(second.kind, second_acquisition_params)
            self.switch = (
                acq_switch_generation,
                second.kind,
                second.base_weight if weight is None else float(weight),
            )

    def current(self) -> tuple[str, float]:
        """The acquisition after the switch (if any) and its weight, annealed if asked."""
        kind, weight = super().current()
        if self.switch is not None and self.proposals > self.switch[0]:
            kind, weight = self.switch[1], self.switch[2] * self.factor
        if self.anneal:
            weight *= math.sqrt(self.n_initial / max(self.n, self.n_initial))
        return kind, weight

    def explore_probability(self) -> float:
        """``end + (start - end) exp(-n / tau)`` at ``n`` known evaluations."""
        start, end, tau = self.explore
        return end + (start - end) * math.exp(-self.n / tau)
