"""Registries of plug-ins: entries with typed options and capabilities, specs resolved once.

A :class:`Registry` holds the :class:`Entry` of every plug-in of one kind (the propagators in
:mod:`propulate.propagators.registry`, the pruners in :mod:`propulate.pruners.registry`). An
entry names its factory as ``"module:callable"`` (imported only when a plug-in is built),
declares its options as a settings dataclass (each field a
:func:`~propulate.settings.spec.setting`: default, help, range) and what it can do (a
capabilities object of the registry's kind).

A plug-in is chosen by a *spec*, written the same way everywhere: ``NAME[:KEY=VALUE,...]`` on
the command line (``ga:crossover_prob=0.8,pop_size=12``) and ``{type: NAME, KEY: VALUE}`` in a
campaign config. :meth:`Registry.spec` checks a spec once -- the name, every option's type and
range -- and returns a :class:`Spec`, whose canonical text the run's settings keep and whose
options are a typed dataclass the factory receives.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from propulate.settings.spec import Setting, describe


@dataclass(frozen=True)
class NoOptions:
    """The options of a plug-in that takes none."""


@dataclass(frozen=True)
class Entry:
    """One registered plug-in.

    Attributes
    ----------
    name : str
        Its name in specs (``--propagator NAME``, ``{type: NAME}``).
    ref : str
        ``"module:callable"``: the factory (or class), imported when the plug-in is built.
    help : str
        One line for ``--help`` and the docs.
    options : type
        A frozen dataclass whose fields are declared with
        :func:`~propulate.settings.spec.setting`; :class:`NoOptions` for none. Its
        ``__post_init__`` may raise ``ValueError`` for combinations the fields' ranges cannot
        express.
    capabilities : Any
        What the plug-in can do (the registry's capabilities class).
    """

    name: str
    ref: str
    help: str
    options: type = NoOptions
    capabilities: Any = None

    def load(self) -> Callable[..., Any]:
        """The factory (imported now)."""
        module, _, attribute = self.ref.partition(":")
        return getattr(importlib.import_module(module), attribute)

    def option_settings(self) -> list[Setting]:
        """The descriptions of its options, in declaration order."""
        return describe(self.options)


@dataclass(frozen=True)
class Spec:
    """A checked choice of one plug-in and its options.

    Attributes
    ----------
    entry : Entry
        The registered plug-in.
    options : Any
        Its options (an instance of ``entry.options``), defaults filled in.
    given : tuple of str
        The options the spec gave, in its order (the canonical text names only these).
    extra : dict
        Options the registry takes for every entry (e.g. a pruner's patience), given ones only.
    """

    entry: Entry
    options: Any
    given: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The plug-in's name."""
        return self.entry.name

    def values(self) -> dict[str, Any]:
        """The given options and their values (the entry's, then the registry's common ones)."""
        own = {k: getattr(self.options, k) for k in self.given}
        return {**own, **self.extra}

    def text(self) -> str:
        """The canonical ``NAME[:KEY=VALUE,...]`` of the spec (given options only)."""
        body = ",".join(f"{k}={_format(v)}" for k, v in self.values().items())
        return f"{self.name}:{body}" if body else self.name

    def __str__(self) -> str:
        return self.text()


def _format(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _convert(item: Setting, value: Any, where: str) -> Any:
    """``value`` (a string from a command line, or a config value) as ``item``'s kind, checked."""
    if isinstance(value, str) and item.kind is not str:
        text = value.strip()
        if item.optional and text.lower() in ("none", "null", ""):
            value = None
        elif item.kind is bool:
            lowered = text.lower()
            if lowered not in ("true", "false", "1", "0", "yes", "no"):
                raise ValueError(f"{where}: expected true or false, got {value!r}")
            value = lowered in ("true", "1", "yes")
        else:
            try:
                number = float(text)
            except ValueError:
                what = "a whole number" if item.kind is int else "a number"
                raise ValueError(f"{where}: expected {what}, got {value!r}") from None
            value = int(number) if item.kind is int and number.is_integer() else number
    elif item.kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    elif item.kind is int and isinstance(value, float) and value.is_integer():
        value = int(value)
    try:
        return item.check(value)
    except ValueError as err:
        raise ValueError(f"{where}: {err}") from None


def split_spec(text: str) -> tuple[str, dict[str, str]]:
    """``"NAME:KEY=VALUE,..."`` -> ``(NAME, {KEY: VALUE})`` (``ValueError`` when malformed)."""
    name, _, rest = text.strip().partition(":")
    raw: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, value = part.partition("=")
        if not eq or not key.strip():
            raise ValueError(f"{text!r}: write options as KEY=VALUE, got {part!r}")
        if key.strip() in raw:
            raise ValueError(f"{text!r}: option {key.strip()!r} is given twice")
        raw[key.strip()] = value.strip()
    return name.strip(), raw


class Registry(Mapping[str, Entry]):
    """The registered plug-ins of one kind, by name.

    Parameters
    ----------
    kind : str
        What the plug-ins are (``"propagator"``, ``"pruner"``), for messages.
    common : type
        Options every entry takes besides its own (a settings dataclass; :class:`NoOptions`).
    """

    def __init__(self, kind: str, common: type = NoOptions) -> None:
        self.kind = kind
        self.common = common
        self._entries: dict[str, Entry] = {}

    # -- the mapping
    def __getitem__(self, name: str) -> Entry:
        try:
            return self._entries[name]
        except KeyError:
            raise KeyError(self.unknown(name)) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}: {', '.join(self._entries)})"

    # -- registering
    def register(self, entry: Entry) -> Entry:
        """Add ``entry`` (``ValueError`` when the name is taken or an option is undeclared)."""
        if entry.name in self._entries:
            raise ValueError(f"a {self.kind} named {entry.name!r} is registered already")
        if not entry.name or not entry.name.replace("_", "").replace("-", "").isalnum():
            raise ValueError(f"a {self.kind} name is letters, digits, - and _: {entry.name!r}")
        if not dataclasses.is_dataclass(entry.options):
            raise ValueError(f"{self.kind} {entry.name}: options must be a dataclass")
        declared = [f.name for f in dataclasses.fields(entry.options)]
        undeclared = sorted(set(declared) - {s.name for s in entry.option_settings()})
        if undeclared:
            raise ValueError(
                f"{self.kind} {entry.name}: declare every option with setting(): {undeclared}"
            )
        clash = sorted(set(declared) & {s.name for s in describe(self.common)})
        if clash:
            raise ValueError(f"{self.kind} {entry.name}: options {clash} are common to all")
        self._entries[entry.name] = entry
        return entry

    def unregister(self, name: str) -> Entry:
        """Remove and return the entry ``name`` (tests register toys at run time)."""
        return self._entries.pop(name)

    def unknown(self, name: Any) -> str:
        """The message for an unknown name, listing the known ones."""
        return f"unknown {self.kind} {name!r}; choose from {', '.join(self._entries)}"

    def names_text(self) -> str:
        """The registered names, comma-separated."""
        return ", ".join(self._entries)

    # -- specs
    def spec(self, spec: str | Mapping[str, Any] | Spec) -> Spec:
        """The checked :class:`Spec` of a ``NAME[:KEY=VALUE,...]`` string or a
        ``{type: NAME, ...}`` mapping.

        Raises
        ------
        ValueError
            An unknown name or option, a value of the wrong type or out of its range, a
            malformed string; the message names the plug-in and the option.
        """
        if isinstance(spec, Spec):
            return spec
        if isinstance(spec, Mapping):
            raw = dict(spec)
            name = raw.pop("type", None)
            if not isinstance(name, str):
                raise ValueError(f"a {self.kind} mapping needs 'type' (one of {self.names_text()})")
        elif isinstance(spec, str):
            name, raw = split_spec(spec)  # type: ignore[assignment]
        else:
            raise ValueError(
                f"a {self.kind} is NAME[:KEY=VALUE,...] or a mapping with 'type', got {spec!r}"
            )
        if name not in self._entries:
            raise ValueError(self.unknown(name))
        entry = self._entries[name]
        own = {s.name: s for s in entry.option_settings()}
        common = {s.name: s for s in describe(self.common)}
        values: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for key, value in raw.items():
            item = own.get(key) or common.get(key)
            if item is None:
                known = ", ".join([*own, *common]) or "none"
                raise ValueError(f"{self.kind} {name}: unknown option {key!r}; known: {known}")
            checked = _convert(item, value, f"{self.kind} {name} option {key}")
            (values if key in own else extra)[key] = checked
        try:
            options = entry.options(**values)
        except ValueError as err:
            raise ValueError(f"{self.kind} {name}: {err}") from None
        return Spec(entry, options, tuple(values), extra)

    def text(self, spec: str | Mapping[str, Any] | Spec) -> str:
        """The canonical text of a spec (checked)."""
        return self.spec(spec).text()
