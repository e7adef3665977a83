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

from propulate.models.acquisition import expected_improvement, propose
from propulate.models.fitting import GaussianPrior
from propulate.models.hyperparameters import HyperLayout
from propulate.models.lcm import LCM
from propulate.models.loop import ModelGuidedLoop, TaskRun
from propulate.models.mla import run_mla
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
