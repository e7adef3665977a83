"""Parameter and task spaces: typed dimensions, unit-cube encoding, constraints, sampling.

A space is an ordered mapping from names to dimensions (:class:`Float`, :class:`Integer`,
:class:`Categorical`; encoding rules in :mod:`propulate.space.dimensions`) with an optional
constraint (:class:`SearchSpace`, in :mod:`propulate.space.search`), conditional parameters and
forbidden clauses (:mod:`propulate.space.conditions`; ConfigSpace interchange in
:mod:`propulate.space.configspace`). Propulate 1.2 style
``limits`` (``(float, float)``, ``(int, int)``, ``(str, ...)``) convert with
:meth:`SearchSpace.from_limits`. Constraints and objectives may be named by reference,
``"package.module:function"`` (:func:`load_callable`, in :mod:`propulate.space.loading`).
"""

from propulate.space.conditions import Condition, Forbidden
from propulate.space.dimensions import (
    Categorical,
    Dimension,
    Float,
    Integer,
    SpaceError,
    Value,
    make_dimension,
)
from propulate.space.loading import _arity, load_callable
from propulate.space.search import Constraint, Params, SearchSpace, as_space

__all__ = [
    "Categorical",
    "Condition",
    "Constraint",
    "Dimension",
    "Float",
    "Forbidden",
    "Integer",
    "Params",
    "SearchSpace",
    "SpaceError",
    "Value",
    "_arity",
    "as_space",
    "load_callable",
    "make_dimension",
]
