"""Propagators: selection, crossover, mutation, initialization and their composition.

Names and signatures follow Propulate 1.2, so its scripts run unchanged.
"""

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

__all__ = [
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
