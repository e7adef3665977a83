"""Utilities: benchmark-function search spaces (Propulate 1.2 compatible) and helpers.

Submodules
----------
benchmark_functions
    ``get_function_search_space(name)`` and the fourteen benchmark losses under Propulate 1.2's
    names (thin layer over :mod:`propulate.problems.benchmark`).
"""

from propulate.compat.utils import benchmark_functions
from propulate.logging_config import set_logger_config
from propulate.propagators.default import get_default_propagator

__all__ = ["benchmark_functions", "get_default_propagator", "set_logger_config"]
