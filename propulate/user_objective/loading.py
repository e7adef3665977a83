"""Loading objectives by reference or from a config, and binding them to a task.

An objective is a Python callable named ``"package.module:function"``, or a program described
by a mapping (see :class:`propulate.user_objective.Command`). A callable is called as

* ``loss(params)`` -- a plain loss over the parameters, or
* ``loss(params, task)`` -- a loss that depends on the task (a mapping, e.g. ``{"m": 1000}``),

and returns a float to minimize. With several MPI ranks per worker the engine calls
``loss(params, comm)`` instead (Propulate 1.2's convention); see :mod:`propulate.engine`.
A parameter named ``report`` (the pruning reporter), ``comm`` or ``*_comm`` is never the task,
and a task parameter with a default may go without one (:func:`task_parameter`).
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from propulate.space import load_callable

Loss = Callable[[Mapping[str, Any]], float]


#: Names of a second parameter that is never the task: the pruning reporter
#: (:mod:`propulate.engine.steps`) and a multi-rank worker's communicator (Propulate 1.2's
#: ``loss(params, comm)``); a name ending in ``_comm`` (e.g. ``subgroup_comm``) is one too.
NOT_TASK_NAMES = frozenset({"report", "comm"})


def _not_task(param: inspect.Parameter) -> bool:
    return param.name in NOT_TASK_NAMES or param.name.endswith("_comm")


def task_parameter(fn: Callable[..., Any]) -> inspect.Parameter | None:
    """The parameter of ``fn`` that receives the task, or ``None`` when it takes none.

    The first parameter is the parameters' mapping. The task goes to a later parameter named
    ``task`` if ``fn`` has one, else to its next positional parameter (or ``*args``) not
    named ``report``, ``comm`` or ``*_comm`` (see :data:`NOT_TASK_NAMES`).
    """
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None
    if params and params[0].kind is inspect.Parameter.VAR_POSITIONAL:
        return params[0]  # fn(*args): the task is its second argument, if given
    later = params[1:]
    for p in later:
        if p.name == "task" and p.kind not in _VARIADIC:
            return p
    for p in later:
        if p.kind is inspect.Parameter.VAR_POSITIONAL:
            return p
        if p.kind in _POSITIONAL and not _not_task(p):
            return p
    return None


_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
_VARIADIC = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


def takes_second_argument(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` takes a task (see :func:`task_parameter`)."""
    return task_parameter(fn) is not None


def needs_task(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` cannot be called without a task: its task parameter has no default
    (``*args`` and a defaulted parameter are optional)."""
    param = task_parameter(fn)
    return (
        param is not None
        and param.kind is not inspect.Parameter.VAR_POSITIONAL
        and param.default is inspect.Parameter.empty
    )


def bind_task(fn: Callable[..., float], task: Mapping[str, Any] | None) -> Loss:
    """A one-argument loss: ``fn`` itself, or ``fn`` with ``task`` bound to its task parameter.

    The task parameter is found by :func:`task_parameter`: a parameter named ``report`` or
    ``comm`` is never the task. Without a task, ``fn`` is returned as it is when its task
    parameter is optional (has a default, or is ``*args``).

    A :class:`~propulate.user_objective.Command` is bound with its own ``bind`` (it stays a
    ``Command``, so its ``confirm`` remains reachable); it needs no task.

    Raises
    ------
    ValueError
        When ``fn`` needs a task and none is given; the message names the parameter taken
        for the task.
    """
    from propulate.user_objective.command import Command

    if isinstance(fn, Command):
        return fn.bind(task)
    param = task_parameter(fn)
    if param is None:
        return fn
    if task is None:
        if needs_task(fn):
            raise ValueError(
                f"objective {getattr(fn, '__name__', fn)!r} needs a task (--task): its "
                f"parameter {param.name!r} is taken for the task (give it a default, or name "
                "it 'report' or 'comm' if it is the pruning reporter or a communicator)"
            )
        return fn
    return _with_task(fn, param, task)


def _with_task(fn: Callable[..., Any], param: inspect.Parameter, task: Mapping[str, Any]) -> Loss:
    """``fn`` with ``task`` given to ``param``; its other parameters (the reporter, a
    communicator) stay reachable and visible in the result's signature."""
    sig = inspect.signature(fn)
    index = max(list(sig.parameters).index(param.name), 1)  # fn(*args): after the params
    by_name = param.kind in (
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        inspect.Parameter.KEYWORD_ONLY,
    )

    def bound(*args: Any, **kwargs: Any) -> Any:
        if param.kind is inspect.Parameter.KEYWORD_ONLY or (by_name and len(args) < index):
            return fn(*args, **{param.name: task}, **kwargs)
        return fn(*args[:index], task, *args[index:], **kwargs)

    functools.update_wrapper(bound, fn)
    rest = [p for p in sig.parameters.values() if p.name != param.name]
    bound.__signature__ = sig.replace(parameters=rest)  # type: ignore[attr-defined]
    return bound


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
        :class:`~propulate.user_objective.Command`, see ``Command.from_config``); or the path of a
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
    from propulate.user_objective.command import Command

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
