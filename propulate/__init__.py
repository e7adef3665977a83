"""propulate: asynchronous evolutionary optimization over MPI and multitask transfer tuning.

Every name below is imported on first use, so ``import propulate`` is quick and light: it
imports neither MPI, pandas nor scipy until the optimizer, a log reader or a space is needed.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from propulate.islands import Islands
    from propulate.logging_config import set_logger_config
    from propulate.population import Individual
    from propulate.propagators import get_default_propagator
    from propulate.propulator import Propulator
    from propulate.runs.table import read_history
    from propulate.space import Categorical, Float, Integer, SearchSpace
    from propulate.tuningdb.suggest import suggest

__version__ = "2.0.0.dev0"

#: Public name -> the module that defines it.
_LAZY = {
    "Categorical": "propulate.space",
    "Float": "propulate.space",
    "Integer": "propulate.space",
    "SearchSpace": "propulate.space",
    "Individual": "propulate.population",
    "Islands": "propulate.islands",
    "Propulator": "propulate.propulator",
    "get_default_propagator": "propulate.propagators",
    "read_history": "propulate.history",
    "set_logger_config": "propulate.logging_config",
    "suggest": "propulate.tuningdb.suggest",
}

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
    "suggest",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'propulate' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
