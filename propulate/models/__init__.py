"""Multitask Gaussian-process models and transfer tuning.

* :mod:`~propulate.models.lcm` -- the linear coregionalization model (fit, predict, save/load);
* :mod:`~propulate.models.hyperparameters` -- the LCM's hyperparameter blocks and their layout;
* :mod:`~propulate.models.fitting` -- multi-start L-BFGS-B, optionally with a Gaussian prior;
* :mod:`~propulate.models.model_file` -- the LCM's JSON file format;
* :mod:`~propulate.models.gpy_bridge` -- the same model in GPy, for comparison;
* :mod:`~propulate.models.acquisition` -- expected improvement and its constrained maximization;
* :mod:`~propulate.models.sampling` -- training tasks, initial designs, training sets;
* :mod:`~propulate.models.mla` -- the model-guided loop over MPI ranks (MLA);
* :mod:`~propulate.models.transfer` -- TLA1 and TLA2 for new tasks.
"""

from propulate.models.acquisition import expected_improvement, propose
from propulate.models.lcm import LCM
from propulate.models.mla import ModelGuidedLoop, TaskRun, run_mla
from propulate.models.sampling import (
    TaskData,
    build_lcm,
    initial_designs,
    sample_tasks,
    subsample,
    training_set_from_runs,
)
from propulate.models.transfer import extend_model, run_tla2, tla1

__all__ = [
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
