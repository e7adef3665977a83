"""Callables named by reference (``"package.module:function"``) and their positional arity."""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from typing import Any


def load_callable(ref: str) -> Callable[..., Any]:
    """Import ``"package.module:function"`` (or a dotted ``"package.module.function"``).

    Raises
    ------
    ImportError
        With a message naming the reference when the module or attribute is missing.
    """
    if ":" in ref:
        module_name, _, attr = ref.partition(":")
    else:
        module_name, _, attr = ref.rpartition(".")
    if not module_name or not attr:
        raise ImportError(f"{ref!r} is not of the form 'module:function'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise ImportError(f"cannot import module {module_name!r} of {ref!r}: {err}") from err
    obj: Any = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ImportError(f"module {module_name!r} has no attribute {attr!r}") from None
    if not callable(obj):
        raise ImportError(f"{ref!r} is not callable")
    return obj


def _arity(fn: Callable[..., Any]) -> int:
    """Number of positional parameters ``fn`` accepts (2 when it takes ``*args``)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return 1
    n = 0
    for p in sig.parameters.values():
        if p.kind is inspect.Parameter.VAR_POSITIONAL:
            return 2
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
            n += 1
    return n
