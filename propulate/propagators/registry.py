"""The table of propagators the engine can run by name (``evolve --propagator NAME``, the
campaign's ``evolve.propagator``).

Each entry names a factory ``factory(space, settings, rng) -> Propagator`` as
``"module:function"``, imported only when used: a new propagator is its module plus one line
here. Every registered propagator passes :func:`propulate.testing.check_propagator`.
"""

from __future__ import annotations

import importlib
import random
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from propulate.propagators.base import Propagator
    from propulate.settings import EvolveSettings
    from propulate.space import SearchSpace

#: Propagator name -> ``"module:factory"``.
PROPAGATORS: dict[str, str] = {
    "ga": "propulate.propagators.default:ga_propagator",
    "cma": "propulate.propagators.cmaes:cma_propagator",
    "pso": "propulate.propagators.pso:pso_propagator",
    "nm": "propulate.propagators.nm:nm_propagator",
    "portfolio": "propulate.propagators.portfolio:portfolio_propagator",
    "random": "propulate.propagators.random_search:random_propagator",
    "tpe": "propulate.propagators.tpe:tpe_propagator",
    "bo": "propulate.propagators.bo:bo_propagator",
}

#: The propagators that search several objectives at once (``ga``: Pareto ranking and crowding
#: of the island's population; ``random`` does not rank); the others refuse them unless the
#: objectives have weights (they then minimise the weighted sum, the records' loss).
SEVERAL_OBJECTIVES = frozenset({"ga", "random"})


def make_propagator(
    name: str, space: SearchSpace, settings: EvolveSettings, rng: random.Random
) -> Propagator:
    """Build the registered propagator ``name`` for one rank.

    Parameters
    ----------
    name : str
        A key of :data:`PROPAGATORS`.
    space : SearchSpace
        The search space (a propagator that cannot search it raises ``ValueError`` naming the
        parameter).
    settings : EvolveSettings
        The run's settings (breeding probabilities, pool size, islands, ...).
    rng : random.Random
        This rank's random stream.
    """
    try:
        ref = PROPAGATORS[name]
    except KeyError:
        raise ValueError(
            f"unknown propagator {name!r}; choose from {', '.join(PROPAGATORS)}"
        ) from None
    objectives = getattr(settings, "objectives", None)
    if objectives is not None and name not in SEVERAL_OBJECTIVES:
        from propulate.runs.objectives import Objectives

        declared = Objectives.parse(objectives)
        if not declared.scalar:
            raise ValueError(
                f"propagator {name} optimises one objective, not {len(declared)} "
                f"({', '.join(declared.names)}); use {' or '.join(sorted(SEVERAL_OBJECTIVES))}, "
                "or give weights to minimise their weighted sum"
            )
    module, _, factory = ref.partition(":")
    return getattr(importlib.import_module(module), factory)(space, settings, rng)
