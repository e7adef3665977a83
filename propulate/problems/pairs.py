"""Two-objective test functions (run with ``--objectives f1:min,f2:min``).

* :func:`zdt1` -- Zitzler, Deb and Thiele's ZDT1 over ``x0 ... x{n-1}`` in ``[0, 1]`` (any
  ``n >= 2``, usually 30): ``f1 = x0``, ``g = 1 + 9 mean(x1 ... x{n-1})``,
  ``f2 = g (1 - sqrt(f1 / g))``. Its Pareto front is ``f2 = 1 - sqrt(f1)`` (``g = 1``), whose
  hypervolume with respect to ``(1.1, 1.1)`` is ``1.21 - 1/3 ~= 0.8767``.
* :func:`demo_pair` -- the multitask demo function against a cost growing with ``x`` (tasks
  ``t`` in ``[0, 10]``, ``x`` in ``[0, 1]``).
* :func:`two_spheres` -- the squared distances of a point to two centres,
  ``(-1, ..., -1)`` and ``(1, ..., 1)``, over any float parameters: every point of the
  segment between them is Pareto-optimal.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

#: ZDT1's Pareto front's hypervolume with respect to (1.1, 1.1): ``1.21 - 1/3``.
ZDT1_HYPERVOLUME = 1.21 - 1.0 / 3.0


def zdt1(params: Mapping[str, Any]) -> dict[str, float]:
    """ZDT1 of ``params["x0"], params["x1"], ...`` (all in ``[0, 1]``)."""
    xs = [float(params[f"x{i}"]) for i in range(len(params))]
    f1 = xs[0]
    g = 1.0 + 9.0 * sum(xs[1:]) / (len(xs) - 1)
    return {"f1": f1, "f2": g * (1.0 - math.sqrt(f1 / g))}


def two_spheres(params: Mapping[str, Any]) -> dict[str, float]:
    """``{"f1": |x + 1|^2, "f2": |x - 1|^2}`` over the numeric parameters."""
    xs = [float(v) for v in params.values() if not isinstance(v, str)]
    return {
        "f1": sum((x + 1.0) ** 2 for x in xs),
        "f2": sum((x - 1.0) ** 2 for x in xs),
    }


def demo_pair(params: Mapping[str, Any], task: Mapping[str, Any]) -> dict[str, float]:
    """The multitask demo function (:func:`propulate.problems.demo.demo_loss`) as ``loss``
    against a ``cost`` that grows with ``x`` (``cost = x``): a task-dependent two-objective
    problem whose single-objective optima are its extremes (``--objectives loss,cost``)."""
    from propulate.problems.demo import demo_loss

    return {"loss": demo_loss(params, task), "cost": float(params["x"])}
