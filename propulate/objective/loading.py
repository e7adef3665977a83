"""Loading objectives by reference or from a config, and binding them to a task.

An objective is a Python callable named ``"package.module:function"``, or a program described
by a mapping (see :class:`propulate.objective.Command`). A callable is called as

* ``loss(params)`` -- a plain loss over the parameters, or
* ``loss(params, task)`` -- a loss that depends on the task (a mapping, e.g. ``{"m": 1000}``),

and returns a float to minimize. With several MPI ranks per worker the engine calls
``loss(params, comm)`` instead (Propulate 1.2's convention); see :mod:`propulate.engine`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from propulate.space import _arity, load_callable

Loss = Callable[[Mapping[str, Any]], float]


def takes_second_argument(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` accepts a second positional argument (a task or a communicator)."""
    return _arity(fn) >= 2


def bind_task(fn: Callable[..., float], task: Mapping[str, Any] | None) -> Loss:
    """A one-argument loss: ``fn`` itself, or ``fn`` with ``task`` bound as second argument.

    Raises
    ------
    ValueError
        When ``fn`` needs a task and none is given.

    A :class:`~propulate.objective.Command` is bound with its own ``bind`` (it stays a
    ``Command``, so its ``confirm`` remains reachable); it needs no task.
    """
    from propulate.objective.command import Command

    if isinstance(fn, Command):
        return fn.bind(task)
    if takes_second_argument(fn):
        if task is None:
            raise ValueError(f"objective {getattr(fn, '__name__', fn)!r} needs a task (--task)")
        if _has_task_kw(fn):
            return functools.partial(fn, task=task)
        from propulate.engine.steps import accepts_report

        if accepts_report(fn):  # keep the reporter reachable (propulate.engine.steps)
            return lambda p, report=None: fn(p, task, report=report)
        return lambda p: fn(p, task)
    return fn


def _has_task_kw(fn: Callable[..., Any]) -> bool:
    import inspect

    try:
        return "task" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def load_objective(ref: str, task: Mapping[str, Any] | None = None) -> Loss:
    """Import ``ref`` (``"module:function"``) and bind ``task`` if it takes one.

    ``ref`` may also name a YAML or JSON file (``*.yaml``, ``*.yml``, ``*.json``) holding a
    command objective's mapping; see :func:`objective_from_config`.
    """
    return objective_from_config(ref, task)


#: File suffixes read as a command objective's mapping by :func:`objective_from_config`.
OBJECTIVE_FILE_SUFFIXES = (".yaml", ".yml", ".json")


def objective_from_config(
    value: str | Mapping[str, Any],
    task: Mapping[str, Any] | None = None,
    space_names: Iterable[str] | None = None,
) -> Loss:
    """The objective a config's ``objective:`` value describes, bound to ``task``.

    Parameters
    ----------
    value : str or mapping
        ``"module:function"`` (imported); a mapping with ``command`` (a
        :class:`~propulate.objective.Command`, see ``Command.from_config``); or the path of a
        YAML/JSON file holding such a mapping.
    task : mapping or None
        Task values handed to the objective (the callable's second argument, the command's
        placeholders).
    space_names : iterable of str or None
        The parameter names; given, a command is checked at once (``Command.check``), so an
        unknown placeholder or a missing program fails before any evaluation.

    Raises
    ------
    ImportError
        A reference that does not import.
    ValueError
        A bad mapping, or a command failing its check.
    """
    from propulate.objective.command import Command

    if isinstance(value, str) and value.endswith(OBJECTIVE_FILE_SUFFIXES):
        try:
            with open(value) as fh:
                loaded = yaml.safe_load(fh)
        except yaml.YAMLError as err:
            raise ValueError(f"{value}: not YAML/JSON ({str(err).splitlines()[0]})") from None
        if not isinstance(loaded, Mapping):
            raise ValueError(f"{value}: an objective file must hold a mapping with 'command'")
        value = loaded
    if isinstance(value, Mapping):
        cmd = Command.from_config(value).bind(task)
        if space_names is not None:
            cmd.check(space_names, task or ())
        return cmd
    if not isinstance(value, str):
        raise ValueError(
            f"objective must be 'module:function' or a mapping with 'command', got {value!r}"
        )
    return bind_task(load_callable(value), task)


def read_task(path: str | Path) -> dict[str, Any]:
    """Read a task spec file: ``{"id": str, "task": {name: value, ...}, ...}``.

    A file holding a bare mapping of task values is accepted too; its id is the file's stem.
    """
    with open(path) as fh:
        spec = json.load(fh)
    if not isinstance(spec, dict):
        raise ValueError(f"{path}: a task spec must be a JSON object")
    if "task" not in spec:
        spec = {"id": Path(path).stem, "task": spec}
    spec.setdefault("id", Path(path).stem)
    if not isinstance(spec["task"], dict):
        raise ValueError(f"{path}: 'task' must be an object of task values")
    return spec
