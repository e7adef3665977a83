"""Baseline optimizers run through the same ``evolve`` command line and evaluation records.

* :mod:`propulate.baselines.optuna_worker` -- Optuna's TPE sampler with every MPI rank a worker
  on one shared journal-file storage (``evolve --method optuna``).

Uniform random search (``--method random``) runs in the island engine itself with a propagator
that only draws uniform configurations.
"""

from __future__ import annotations

__all__ = ["run_optuna"]


def __getattr__(name: str) -> object:
    # Lazy: importing the package must not import optuna (an optional dependency).
    if name == "run_optuna":
        from propulate.baselines.optuna_worker import run_optuna

        return run_optuna
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
