"""propulate: asynchronous evolutionary optimization over MPI and multitask transfer tuning.

Every name below is imported on first use, so ``import propulate`` is quick and light: it
imports neither MPI, pandas nor scipy until the optimizer, a log reader or a space is needed.
As in Propulate 1.2, the subpackages ``propulate.utils`` and ``propulate.propagators`` are
attributes of the package (``propulate.utils.set_logger_config()`` after ``import propulate``),
also imported on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from propulate import _aliases

_aliases.install()  # old module paths (propulate.islands, propulate.objectives.demo, ...) still import

if TYPE_CHECKING:
    from propulate import propagators
    from propulate.compat import utils
    from propulate.compat.islands import Islands
    from propulate.compat.migrator import Migrator
    from propulate.compat.pollinator import Pollinator
    from propulate.compat.propulator import Propulator
    from propulate.compat.surrogate import Surrogate
    from propulate.logging_config import set_logger_config
    from propulate.population import Individual
    from propulate.propagators import get_default_propagator
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
    "Islands": "propulate.compat.islands",
    "Migrator": "propulate.compat.migrator",
    "Pollinator": "propulate.compat.pollinator",
    "Propulator": "propulate.compat.propulator",
    "get_default_propagator": "propulate.propagators",
    "read_history": "propulate.compat.history",
    "set_logger_config": "propulate.logging_config",
    "suggest": "propulate.tuningdb.suggest",
    "Surrogate": "propulate.compat.surrogate",
}

#: Subpackages that are attributes of the package, imported on first use (Propulate 1.2's
#: ``propulate.utils`` lives in the compatibility room).
_SUBMODULES = {"propagators": "propulate.propagators", "utils": "propulate.compat.utils"}

__all__ = [
    "Categorical",
    "Float",
    "Individual",
    "Integer",
    "Islands",
    "Migrator",
    "Pollinator",
    "Propulator",
    "SearchSpace",
    "Surrogate",
    "__version__",
    "get_default_propagator",
    "propagators",
    "read_history",
    "set_logger_config",
    "suggest",
    "utils",
]


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        module = importlib.import_module(_SUBMODULES[name])
        globals()[name] = module
        return module
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'propulate' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY, *_SUBMODULES})
