"""Test problems that ship with the package: objective functions to tune.

* :mod:`~propulate.problems.benchmark` -- the Propulate paper's benchmark functions and the
  other functions of Propulate 1.2 (:data:`FUNCTIONS`), with limits and known minima;
* :mod:`~propulate.problems.demo` -- GPTune's multitask demo function ``f(t, x)``;
* :mod:`~propulate.problems.pairs` -- two-objective test functions (ZDT1, two spheres), for
  ``--objectives f1:min,f2:min``;
* :mod:`~propulate.problems.lapack_qr` -- the runtime of LAPACK's blocked QR ``dgeqrt`` over
  block size and BLAS threads, for a matrix shape task. Imported lazily (it loads
  ``scipy.linalg`` and ``threadpoolctl``): ``from propulate.problems import qr_runtime`` works.

Losses are referenced as ``"module:function"``, e.g. ``propulate.problems.benchmark:sphere``,
``propulate.problems.demo:demo_loss``, ``propulate.problems.lapack_qr:qr_runtime``.
"""

from __future__ import annotations

import importlib
from typing import Any

from propulate.problems.benchmark import (
    FUNCTIONS,
    BenchmarkFunction,
    benchmark_nd,
    get_benchmark,
    sphere_nd,
)
from propulate.problems.demo import (
    DEMO_PARAM_LIMITS,
    DEMO_TASK_LIMITS,
    demo_function,
    demo_loss,
    demo_true_optimum,
)

_LAZY = {
    "QR_PARAM_LIMITS": "lapack_qr",
    "QR_TASK_LIMITS": "lapack_qr",
    "cores_per_rank": "lapack_qr",
    "qr_constraint": "lapack_qr",
    "qr_nb_upper": "lapack_qr",
    "qr_param_limits": "lapack_qr",
    "qr_runtime": "lapack_qr",
}

__all__ = [
    "DEMO_PARAM_LIMITS",
    "DEMO_TASK_LIMITS",
    "FUNCTIONS",
    "BenchmarkFunction",
    "benchmark_nd",
    "demo_function",
    "demo_loss",
    "demo_true_optimum",
    "get_benchmark",
    "sphere_nd",
    *_LAZY,
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        module = importlib.import_module(f"{__name__}.{_LAZY[name]}")
        return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
