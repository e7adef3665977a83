"""Loading objectives by reference and binding them to a task.

An objective is a Python callable named ``"package.module:function"``. It is called as

* ``loss(params)`` -- a plain loss over the parameters, or
* ``loss(params, task)`` -- a loss that depends on the task (a mapping, e.g. ``{"m": 1000}``),

and returns a float to minimize. With several MPI ranks per worker the engine calls
``loss(params, comm)`` instead (Propulate 1.2's convention); see :mod:`propulate.engine`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

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
    """
    if takes_second_argument(fn):
        if task is None:
            raise ValueError(f"objective {getattr(fn, '__name__', fn)!r} needs a task (--task)")
        return functools.partial(fn, task=task) if _has_task_kw(fn) else lambda p: fn(p, task)
    return fn


def _has_task_kw(fn: Callable[..., Any]) -> bool:
    import inspect

    try:
        return "task" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def load_objective(ref: str, task: Mapping[str, Any] | None = None) -> Loss:
    """Import ``ref`` (``"module:function"``) and bind ``task`` if it takes one."""
    return bind_task(load_callable(ref), task)


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
