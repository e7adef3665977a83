"""Command templates: split once with shlex, fill ``{name}`` placeholders per argument.

A template such as ``"./app --nb {nb} --label {label}"`` is split into arguments *before* any
value is put in, so a value is always (part of) one argument: spaces, a leading minus sign or
shell characters in a value never change how the command is split, and nothing is evaluated.

Placeholders are ``{name}`` with a Python identifier inside; ``{{`` and ``}}`` stand for literal
braces. Any other brace text (``{}``, ``{1,2}``) is left as it is.

The one exception to "no shell" is a script the user hands to a shell themselves
(``bash -c 'SCRIPT'``, also ``sh``, ``dash``, ``zsh``, ``ksh``): values put into SCRIPT are
quoted with :func:`shlex.quote`, so the shell sees each one as a single word and runs none of
it. Write them bare in the script (``echo {x}``, not ``echo "{x}"``).
"""

from __future__ import annotations

import numbers
import os
import re
import shlex
from collections.abc import Iterable, Mapping
from typing import Any

#: ``{{``, ``}}`` or a placeholder ``{identifier}``.
_TOKEN = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")

#: Programs whose ``-c`` argument is a script: values substituted into it are shell-quoted.
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh"})


def split(template: str, what: str = "command") -> list[str]:
    """``template`` split into arguments like a POSIX shell would (no expansion).

    Raises
    ------
    ValueError
        On unbalanced quotes or an empty template, naming ``what``.
    """
    try:
        argv = shlex.split(template)
    except ValueError as err:
        raise ValueError(f"objective {what} {template!r} cannot be split: {err}") from None
    if not argv and what == "command":
        raise ValueError("objective command is empty")
    return argv


def placeholders(text: str) -> list[str]:
    """The placeholder names in ``text``, in order of first appearance."""
    seen: dict[str, None] = {}
    for m in _TOKEN.finditer(text):
        if m.group(1):
            seen.setdefault(m.group(1))
    return list(seen)


def format_value(value: Any) -> str:
    """A parameter or task value as command-line text.

    Integers print as integers, floats with all their digits (``repr``: ``0.1``, ``1e-05``),
    numpy scalars like the Python numbers they hold, anything else with ``str``.
    """
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        value = value.item()
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return repr(float(value))
    return str(value)


def fill(text: str, values: Mapping[str, Any], quote: bool = False) -> str:
    """``text`` with every placeholder replaced by its value.

    Parameters
    ----------
    text : str
        One argument (or an environment value, or the working directory).
    values : mapping
        Name to value; every placeholder of ``text`` must be a key.
    quote : bool
        Shell-quote each value (for a script handed to ``bash -c``).

    Raises
    ------
    KeyError
        For a placeholder without a value (callers check names beforehand, see :func:`unknown`).
    """

    def one(m: re.Match[str]) -> str:
        if m.group(0) == "{{":
            return "{"
        if m.group(0) == "}}":
            return "}"
        out = format_value(values[m.group(1)])
        return shlex.quote(out) if quote else out

    return _TOKEN.sub(one, text)


def fill_argv(argv: list[str], values: Mapping[str, Any]) -> list[str]:
    """Fill every argument; the script of ``SHELL -c SCRIPT`` gets shell-quoted values.

    The shell may follow a launcher (``mpiexec -n 2 bash -c SCRIPT``): the first argument named
    like a shell, then its first short option holding ``c``, mark the next argument as a script.
    """
    out: list[str] = []
    state = "start"  # -> "shell" (a shell seen) -> "script" (next is its script) -> "done"
    for arg in argv:
        out.append(fill(arg, values, quote=state == "script"))
        if state == "script":
            state = "done"
        elif state == "start" and os.path.basename(arg) in SHELLS:
            state = "shell"
        elif state == "shell" and arg.startswith("-") and not arg.startswith("--") and "c" in arg:
            state = "script"
    return out


def unknown(texts: Iterable[str], known: Iterable[str]) -> list[str]:
    """Placeholders used in ``texts`` that are not in ``known`` (sorted, without repeats)."""
    names = set(known)
    return sorted({p for t in texts for p in placeholders(t)} - names)
