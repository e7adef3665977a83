"""propulate: asynchronous evolutionary optimization over MPI and multitask transfer tuning.

The optimizer (``Propulator``, ``Islands``) is imported lazily, so importing the package (for
its spaces, logs or models) does not initialise MPI.
"""

from __future__ import annotations

from typing import Any

from propulate.history import read_history
from propulate.logging_config import set_logger_config
from propulate.population import Individual
from propulate.propagators import get_default_propagator
from propulate.space import Categorical, Float, Integer, SearchSpace

__version__ = "2.0.0.dev0"

__all__ = [
    "Categorical",
    "Float",
    "Individual",
    "Integer",
    "Islands",
    "Propulator",
    "SearchSpace",
    "__version__",
    "get_default_propagator",
    "read_history",
    "set_logger_config",
]


def __getattr__(name: str) -> Any:
    if name == "Islands":
        from propulate.islands import Islands

        return Islands
    if name == "Propulator":
        from propulate.propulator import Propulator

        return Propulator
    raise AttributeError(f"module 'propulate' has no attribute {name!r}")
