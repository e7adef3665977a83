"""Test functions of sensitivity analysis, whose Sobol indices are known exactly.

* :func:`ishigami` -- ``sin x1 + a sin^2 x2 + b x3^4 sin x1`` on ``[-pi, pi]^3`` (a = 7,
  b = 0.1): first-order indices (0.314, 0.442, 0), total index of ``x3`` 0.244, all from an
  interaction with ``x1``;
* :func:`g_function` -- Sobol's G-function ``prod_i (|4 x_i - 2| + a_i) / (1 + a_i)`` on
  ``[0, 1]^8`` with ``a = (0, 1, 4.5, 9, 99, 99, 99, 99)``: the smaller ``a_i``, the more
  ``x_i`` matters;
* :func:`shifting_g` -- a multitask campaign objective (floats, an integer and a categorical)
  whose most important parameters change with the task ``t`` in ``[0, 1]``.

:func:`ishigami_indices`, :func:`g_indices` and :func:`shifting_g_indices` give the exact
indices (``benchmarks/sensitivity.py`` compares estimates with them).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

#: Ishigami's constants.
ISHIGAMI_A, ISHIGAMI_B = 7.0, 0.1
#: The G-function's coefficients.
G_A = (0.0, 1.0, 4.5, 9.0, 99.0, 99.0, 99.0, 99.0)
#: :func:`shifting_g`'s factor per choice of ``kind`` and slope per unit of ``n``.
KIND_FACTOR = {"a": 1.0, "b": 1.3, "c": 0.8}
N_SLOPE = 0.02
#: :func:`shifting_g`'s integer range of ``n``.
N_RANGE = (1, 16)


def ishigami(params: Mapping[str, Any]) -> float:
    """Ishigami's function of ``x1, x2, x3`` in ``[-pi, pi]``."""
    x1, x2, x3 = (float(params[k]) for k in ("x1", "x2", "x3"))
    return math.sin(x1) + ISHIGAMI_A * math.sin(x2) ** 2 + ISHIGAMI_B * x3**4 * math.sin(x1)


def ishigami_indices(a: float = ISHIGAMI_A, b: float = ISHIGAMI_B) -> dict[str, list[float]]:
    """Ishigami's exact first-order (``S1``) and total (``ST``) indices."""
    pi = math.pi
    v1 = 0.5 * (1 + b * pi**4 / 5) ** 2
    v2 = a**2 / 8
    v13 = b**2 * pi**8 * (1 / 18 - 1 / 50)
    total = v1 + v2 + v13
    return {
        "S1": [v1 / total, v2 / total, 0.0],
        "ST": [(v1 + v13) / total, v2 / total, v13 / total],
    }


def _g(x: Sequence[float], a: Sequence[float]) -> float:
    return float(np.prod([(abs(4 * xi - 2) + ai) / (1 + ai) for xi, ai in zip(x, a, strict=True)]))


def g_function(params: Mapping[str, Any]) -> float:
    """Sobol's G-function of ``x1 .. x8`` in ``[0, 1]`` with the coefficients :data:`G_A`."""
    return _g([float(params[f"x{i + 1}"]) for i in range(len(G_A))], G_A)


def _product_indices(ratios: Sequence[float]) -> dict[str, list[float]]:
    """Exact indices of a product of independent factors, each given by its variance over its
    squared mean."""
    r = np.asarray(ratios, dtype=float)
    total = float(np.prod(1 + r) - 1)
    st = [float(r[i] * np.prod(np.delete(1 + r, i)) / total) for i in range(len(r))]
    return {"S1": (r / total).tolist(), "ST": st}


def g_indices(a: Sequence[float] = G_A) -> dict[str, list[float]]:
    """The G-function's exact first-order and total indices (each factor has mean 1 and
    variance ``1 / (3 (1 + a_i)^2)``)."""
    return _product_indices([1 / (3 * (1 + ai) ** 2) for ai in a])


def shifting_coefficients(t: float) -> tuple[float, ...]:
    """:func:`shifting_g`'s G coefficients of ``x1 .. x4`` for task ``t``."""
    return (6 * t, 1.5, 6 * (1 - t) + 0.5, 99.0)


def shifting_g(params: Mapping[str, Any], task: Mapping[str, Any]) -> float:
    """A multitask loss over ``x1 .. x4`` in ``[0, 1]``, ``n`` in 1..16 and ``kind`` in a, b, c.

    The G-function of ``x1 .. x4`` with coefficients ``(6 t, 1.5, 6 (1 - t) + 0.5, 99)``, times
    ``KIND_FACTOR[kind]`` and ``1 + 0.02 (n - 1)``: ``x1`` matters most for small ``t``,
    ``x3`` for large ``t``, ``x2`` and ``kind`` in between, ``x4`` never.
    """
    t = float(task["t"])
    x = [float(params[f"x{i + 1}"]) for i in range(4)]
    n = int(params["n"])
    return (
        _g(x, shifting_coefficients(t)) * KIND_FACTOR[str(params["kind"])] * (1 + N_SLOPE * (n - 1))
    )


def shifting_g_indices(t: float) -> dict[str, list[float]]:
    """:func:`shifting_g`'s exact indices for task ``t``, parameters ``x1 .. x4, n, kind``
    (each choice of ``kind`` and each integer ``n`` equally likely)."""
    kind = np.array(list(KIND_FACTOR.values()))
    n = 1 + N_SLOPE * (np.arange(N_RANGE[0], N_RANGE[1] + 1) - 1)
    ratios = [1 / (3 * (1 + ai) ** 2) for ai in shifting_coefficients(t)]
    ratios += [float(n.var() / n.mean() ** 2), float(kind.var() / kind.mean() ** 2)]
    return _product_indices(ratios)
