"""Command-line options derived from the settings' descriptions (:mod:`propulate.settings`).

Each described field of a settings dataclass becomes one option: its flag, its help with the
default, its value checked against the declared range while parsing. Options default to
``None``, so :func:`settings_from_args` knows which ones were given.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from propulate.cli.argtypes import real, whole
from propulate.settings import Setting, describe


def _shown(value: Any) -> str:
    return "none" if value is None else str(value)


def _parser(item: Setting) -> Any:
    """The argparse ``type`` of a setting: its value checked against the declared range."""
    if item.kind is int:
        return whole(int(item.low)) if item.low is not None else int
    if item.kind is float:
        low = -math.inf if item.low is None else float(item.low)
        high = math.inf if item.high is None else float(item.high)
        return real(low, high, low_open=item.low_open)
    return str


def add_settings(
    group: argparse.ArgumentParser | argparse._ArgumentGroup,
    settings: type,
    names: Iterable[str] | None = None,
    *,
    exclude: Iterable[str] = (),
    choices: Mapping[str, Sequence[Any]] | None = None,
    notes: Mapping[str, str] | None = None,
) -> list[Setting]:
    """Add one option per described setting of ``settings`` to ``group``.

    Parameters
    ----------
    group : parser or argument group
        Where the options go.
    settings : type
        A settings dataclass (:mod:`propulate.settings.stages`).
    names : iterable of str, optional
        Only these settings, in this order (default: every one with a command-line option, in
        field order).
    exclude : iterable of str
        Settings to leave out.
    choices : mapping, optional
        Allowed values of settings whose values a registry holds (e.g. ``method``).
    notes : mapping, optional
        Text added to a setting's help (e.g. the names a registry holds).

    Returns
    -------
    list of Setting
        The settings added.
    """
    items = {s.name: s for s in describe(settings)}
    order = list(names) if names is not None else [n for n, s in items.items() if s.cli]
    skip = set(exclude)
    added = []
    for name in order:
        if name in skip:
            continue
        item = items[name]
        note = (notes or {}).get(name, "")
        text = f"{item.help}{note} (default: {_shown(item.default)})".replace("%", "%%")
        if item.negate and item.flag_help:
            text = item.flag_help
        if item.kind is bool:
            action: Any = "store_false" if item.negate else argparse.BooleanOptionalAction
            group.add_argument(item.flag, dest=name, action=action, default=None, help=text)
        else:
            group.add_argument(
                item.flag,
                dest=name,
                type=_parser(item),
                choices=(choices or {}).get(name, item.choices),
                metavar=item.metavar,
                default=None,
                help=text,
            )
        added.append(item)
    return added


def given_settings(
    args: argparse.Namespace, settings: type, names: Iterable[str] | None = None
) -> dict[str, Any]:
    """The settings of ``settings`` (only ``names``, if given) set on the command line."""
    wanted = None if names is None else set(names)
    return {
        s.name: getattr(args, s.name)
        for s in describe(settings)
        if (wanted is None or s.name in wanted) and getattr(args, s.name, None) is not None
    }


def settings_from_args(
    args: argparse.Namespace, settings: type, names: Iterable[str] | None = None, **fixed: Any
) -> Any:
    """``settings`` built from the options given (only ``names``, if given; the declared
    defaults for the others) and ``fixed`` values."""
    return settings(**{**given_settings(args, settings, names), **fixed})
