"""Early stopping of evaluations from their intermediate values (pruners).

:class:`~propulate.pruners.base.Pruner` is the interface: intermediate values of a running
evaluation in, continue or stop out, learning from the finished evaluations of every rank.
The pruners: :class:`ASHAPruner` (asynchronous successive halving), :class:`MedianPruner`,
:class:`PatientPruner` (a patience wrapper), and Propulate 1.2's :class:`StaticSurrogate` and
:class:`DynamicSurrogate`; by name in :mod:`propulate.pruners.registry`. Each name is imported
on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from propulate.pruners.base import Pruner

if TYPE_CHECKING:
    from propulate.pruners.asha import ASHAPruner
    from propulate.pruners.median import MedianPruner
    from propulate.pruners.patience import PatientPruner
    from propulate.pruners.registry import make_pruner
    from propulate.pruners.surrogates import DynamicSurrogate, LegacySurrogate, StaticSurrogate

_LAZY = {
    "ASHAPruner": "propulate.pruners.asha",
    "MedianPruner": "propulate.pruners.median",
    "PatientPruner": "propulate.pruners.patience",
    "StaticSurrogate": "propulate.pruners.surrogates",
    "DynamicSurrogate": "propulate.pruners.surrogates",
    "LegacySurrogate": "propulate.pruners.surrogates",
    "make_pruner": "propulate.pruners.registry",
}

__all__ = [
    "ASHAPruner",
    "DynamicSurrogate",
    "LegacySurrogate",
    "MedianPruner",
    "PatientPruner",
    "Pruner",
    "StaticSurrogate",
    "make_pruner",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'propulate.pruners' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
