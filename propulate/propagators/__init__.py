"""Propagators: selection, crossover, mutation, initialization and their composition, and
the search methods CMA-ES (:mod:`.cmaes`), particle swarms (:mod:`.pso`), Nelder-Mead
(:mod:`.nm`), tree-structured Parzen estimator sampling (:mod:`.tpe`), Bayesian optimization
(:mod:`.bo`, and :mod:`.bayesopt` with the development branch's names) and the portfolio of
islands (:mod:`.portfolio`).

Names and signatures follow Propulate 1.2, so its scripts run unchanged. The search methods'
classes are imported on first use.
"""

import importlib
from typing import Any

from propulate.propagators.base import (
    Compose,
    Conditional,
    FunctionPropagator,
    Propagator,
    Stochastic,
)
from propulate.propagators.default import get_default_propagator
from propulate.propagators.ga import (
    CrossoverMultiple,
    CrossoverSigmoid,
    CrossoverUniform,
    InitUniform,
    IntervalMutationNormal,
    PointMutation,
    RandomPointMutation,
)
from propulate.propagators.selection import SelectMax, SelectMin, SelectUniform

#: Public name -> the module that defines it (imported on first use).
_LAZY = {
    "ActiveCMA": "cmaes",
    "BasicCMA": "cmaes",
    "CMAAdapter": "cmaes",
    "CMAPropagator": "cmaes",
    "BayesianOptimizer": "bayesopt",
    "BasicPSO": "pso",
    "CanonicalPSO": "pso",
    "ConstrictionPSO": "pso",
    "InitUniformPSO": "pso",
    "StatelessPSO": "pso",
    "VelocityClampingPSO": "pso",
    "ParallelNelderMead": "nm",
    "Portfolio": "portfolio",
    "PrunedPool": "pruned_pool",
    "TPE": "tpe",
}

__all__ = [
    "ActiveCMA",
    "BasicCMA",
    "BasicPSO",
    "BayesianOptimizer",
    "CMAAdapter",
    "CMAPropagator",
    "CanonicalPSO",
    "ConstrictionPSO",
    "InitUniformPSO",
    "ParallelNelderMead",
    "Portfolio",
    "PrunedPool",
    "StatelessPSO",
    "TPE",
    "VelocityClampingPSO",
    "Compose",
    "Conditional",
    "CrossoverMultiple",
    "CrossoverSigmoid",
    "CrossoverUniform",
    "FunctionPropagator",
    "InitUniform",
    "IntervalMutationNormal",
    "PointMutation",
    "Propagator",
    "RandomPointMutation",
    "SelectMax",
    "SelectMin",
    "SelectUniform",
    "Stochastic",
    "get_default_propagator",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'propulate.propagators' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"propulate.propagators.{module}"), name)
    globals()[name] = value
    return value
