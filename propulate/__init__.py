"""propulate: asynchronous evolutionary optimization over MPI and multitask transfer tuning.

Every public name is imported on first use: importing the package does not initialise MPI
(``Propulator``, ``Islands``) nor load pandas or scipy.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "2.0.0.dev0"

#: Where each public name lives. Imported on first use, so ``import propulate`` stays cheap
#: (no pandas, no scipy.stats) for light commands such as ``python -m propulate suggest``.
_LAZY = {
    "Categorical": "propulate.space",
    "Float": "propulate.space",
    "Integer": "propulate.space",
    "SearchSpace": "propulate.space",
    "Individual": "propulate.population",
    "get_default_propagator": "propulate.propagators",
    "read_history": "propulate.history",
    "set_logger_config": "propulate.logging_config",
    "Islands": "propulate.islands",
    "Propulator": "propulate.propulator",
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
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
