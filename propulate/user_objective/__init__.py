"""The user's objective: a Python callable named by reference, or a program run as one.

(The objective functions that ship with the package are :mod:`propulate.problems`; a run's
declared objectives, their names and directions, :mod:`propulate.runs.declared_objectives`.)

* :func:`load_objective`, :func:`objective_from_config`, :func:`bind_task`, :func:`read_task`
  -- load a ``"module:function"`` or a config's ``objective:`` value and bind it to a task;
* :class:`Command` -- a program (often an MPI one) whose stdout holds the loss, with a
  launcher, timeouts, repeats (median) and re-measurement of a new best;
* :func:`add_command_arguments`, :func:`command_from_args` -- the command line's flags for it;
* :func:`is_outlier`, :func:`nearest_losses` -- a simple outlier rule for noisy losses.
"""

from propulate.user_objective.cli import add_command_arguments, command_from_args
from propulate.user_objective.command import CONFIG_KEYS, Command, Measured
from propulate.user_objective.loading import (
    Loss,
    bind_task,
    load_objective,
    objective_from_config,
    read_task,
    takes_second_argument,
)
from propulate.user_objective.noise import is_outlier, median, nearest_losses
from propulate.user_objective.process import clean_environment

__all__ = [
    "CONFIG_KEYS",
    "Command",
    "Loss",
    "Measured",
    "add_command_arguments",
    "bind_task",
    "clean_environment",
    "command_from_args",
    "is_outlier",
    "load_objective",
    "median",
    "nearest_losses",
    "objective_from_config",
    "read_task",
    "takes_second_argument",
]
