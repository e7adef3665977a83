"""Multitask Gaussian-process models and transfer tuning.

* :mod:`~propulate.models.lcm` -- the linear coregionalization model (fit, predict, save/load);
* :mod:`~propulate.models.hyperparameters` -- the LCM's hyperparameter blocks and their layout;
* :mod:`~propulate.models.fitting` -- multi-start L-BFGS-B, optionally with a Gaussian prior;
* :mod:`~propulate.models.model_file` -- the LCM's JSON file format;
* :mod:`~propulate.models.gpy_bridge` -- the same model in GPy, for comparison;
* :mod:`~propulate.models.acquisition` -- expected improvement and its constrained maximization;
* :mod:`~propulate.models.sampling` -- training tasks, initial designs, training sets;
* :mod:`~propulate.models.loop` -- the model-guided loop over MPI ranks (MLA, TLA1, TLA2);
* :mod:`~propulate.models.mla` -- MLA: one LCM over several tasks;
* :mod:`~propulate.models.transfer` -- TLA1 and TLA2 for new tasks.
"""

from __future__ import annotations

import importlib
from typing import Any

#: Public name -> the module defining it; imported on first use, so importing one module of
#: the package (e.g. :mod:`~propulate.models.kernel` for a prediction) does not load the rest
#: (scipy's optimizers, the MPI loop).
_LAZY = {
    "GaussianPrior": "fitting",
    "HyperLayout": "hyperparameters",
    "LCM": "lcm",
    "ModelGuidedLoop": "loop",
    "TaskData": "sampling",
    "TaskRun": "loop",
    "build_lcm": "sampling",
    "expected_improvement": "acquisition",
    "extend_model": "transfer",
    "initial_designs": "sampling",
    "propose": "acquisition",
    "run_mla": "mla",
    "run_tla2": "transfer",
    "sample_tasks": "sampling",
    "subsample": "sampling",
    "tla1": "transfer",
    "training_set_from_runs": "sampling",
}

__all__ = [
    "GaussianPrior",
    "HyperLayout",
    "LCM",
    "ModelGuidedLoop",
    "TaskData",
    "TaskRun",
    "build_lcm",
    "expected_improvement",
    "extend_model",
    "initial_designs",
    "propose",
    "run_mla",
    "run_tla2",
    "sample_tasks",
    "subsample",
    "tla1",
    "training_set_from_runs",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
