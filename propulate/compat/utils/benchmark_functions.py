"""Propulate 1.2's benchmark-function interface: losses by name and their search spaces.

``get_function_search_space(name)`` returns ``(loss, limits)`` for the same fourteen names as
Propulate 1.2 (``bukin``, ``eggcrate``, ``himmelblau``, ``keane``, ``leon``, ``sphere``,
``rosenbrock``, ``step``, ``quartic``, ``bisphere``, ``birastrigin``, ``rastrigin``, ``griewank``,
``schwefel``), with the same parameter names (``"a"``, ``"b"``, ...) and limits. Unlike 1.2, an
unknown name raises :class:`ValueError`. The functions themselves, their known minima and
n-dimensional variants live in :mod:`propulate.problems.benchmark`. ``parse_arguments`` is
the tutorials' command line (:mod:`propulate.compat.utils.tutorial_arguments`).
"""

from __future__ import annotations

from propulate.compat.utils.tutorial_arguments import parse_arguments
from propulate.problems.benchmark import (
    FUNCTIONS,
    KeyedLoss,
    birastrigin,
    bisphere,
    bukin_n6,
    egg_crate,
    get_benchmark,
    griewank,
    himmelblau,
    keane,
    leon,
    quartic,
    rastrigin,
    rosenbrock,
    schwefel,
    sphere,
    step,
)

__all__ = [
    "FUNCTION_NAMES",
    "birastrigin",
    "bisphere",
    "bukin_n6",
    "egg_crate",
    "get_function_search_space",
    "griewank",
    "himmelblau",
    "keane",
    "leon",
    "parse_arguments",
    "quartic",
    "rastrigin",
    "rosenbrock",
    "schwefel",
    "sphere",
    "step",
]

#: The names ``get_function_search_space`` accepts.
FUNCTION_NAMES: tuple[str, ...] = tuple(FUNCTIONS)


def get_function_search_space(fname: str) -> tuple[KeyedLoss, dict[str, tuple[float, float]]]:
    """The loss function and search space of a benchmark function.

    Parameters
    ----------
    fname : str
        The function's name, one of :data:`FUNCTION_NAMES`.

    Returns
    -------
    KeyedLoss
        The loss, called as ``loss(params) -> float`` with ``params`` mapping each parameter
        name to its value.
    dict[str, tuple[float, float]]
        The limits: parameter name -> (low, high), all continuous; a fresh copy.

    Raises
    ------
    ValueError
        For an unknown name; the message lists the valid names.
    """
    bench = get_benchmark(fname)
    return bench.function, dict(bench.limits)
