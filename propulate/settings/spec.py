"""How a setting is described once and read everywhere.

Every field of a settings dataclass (:mod:`propulate.settings.stages`) is declared with
:func:`setting`: its default, one line of help, its range and how it is spelled on the command
line. :func:`describe` turns a dataclass into :class:`Setting` descriptions, from which the
command-line options (:mod:`propulate.cli.settings_args`), the options a campaign passes to its
jobs (:mod:`propulate.campaign.options`) and the config schema's stage sections
(:func:`json_schema`) are derived, so a setting's default, help and range are written once.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from dataclasses import MISSING, dataclass, fields
from typing import Any

#: Key of a field's description in ``dataclasses.field(metadata=...)``.
KEY = "propulate.setting"


@dataclass(frozen=True)
class Setting:
    """One setting of a stage, as its dataclass field declares it.

    Attributes
    ----------
    name : str
        The field (and config key) name.
    default : Any
        The default value.
    kind : type
        ``int``, ``float``, ``bool`` or ``str``.
    optional : bool
        Whether ``None`` is a value (e.g. "no limit").
    help : str
        One line for ``--help`` and the docs.
    low, high : float or None
        Inclusive range of a number (``None``: unbounded).
    low_open : bool
        The lower bound itself is excluded (``> low``).
    choices : tuple or None
        The allowed values of a string.
    flag : str
        The command-line flag (``--name-with-dashes`` unless declared otherwise).
    negate : bool
        For a ``bool`` defaulting to True: the flag turns it off (e.g. ``--migration`` sets
        ``pollination`` False); ``flag_help`` then says what the flag does.
    flag_help : str or None
        The help of a negating flag.
    metavar : str or None
        The value's name in ``--help``.
    cli : bool
        Whether the stage's command has an option for it.
    config : bool
        Whether a campaign config's stage section has a key for it.
    passed : str
        How a campaign passes it to its jobs: ``"set"`` (whenever it is not ``None``) or
        ``"given"`` (only when the config gives it, so adding a setting does not change the
        options, and re-run the jobs, of existing campaigns).
    schema : dict or None
        The config schema of a setting whose config form is richer than its command-line
        value (e.g. a mapping); ``None``: derived from the kind and range.
    """

    name: str
    default: Any
    kind: type
    optional: bool
    help: str
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    choices: tuple[Any, ...] | None = None
    flag: str = ""
    negate: bool = False
    flag_help: str | None = None
    metavar: str | None = None
    cli: bool = True
    config: bool = True
    passed: str = "set"
    schema: dict[str, Any] | None = None

    def check(self, value: Any) -> Any:
        """``value`` if it is a valid value of this setting, else ``ValueError`` saying why."""
        if value is None:
            if self.optional:
                return None
            raise ValueError(f"{self.name} must be set")
        if self.kind is bool:
            if not isinstance(value, bool):
                raise ValueError(f"{self.name} must be true or false, got {value!r}")
            return value
        if self.kind is str:
            if not isinstance(value, str):
                raise ValueError(f"{self.name} must be a string, got {value!r}")
        elif self.kind is int:
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"{self.name} must be a whole number, got {value!r}")
        elif isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"{self.name} must be a number, got {value!r}")
        elif not math.isfinite(value):
            raise ValueError(f"{self.name} must be finite, got {value!r}")
        if self.choices is not None and value not in self.choices:
            raise ValueError(
                f"{self.name} must be one of {', '.join(map(str, self.choices))}, got {value!r}"
            )
        if self.low is not None and (value < self.low or (self.low_open and value == self.low)):
            raise ValueError(f"{self.name} must be {self.range_text()}, got {value!r}")
        if self.high is not None and value > self.high:
            raise ValueError(f"{self.name} must be {self.range_text()}, got {value!r}")
        return value

    def range_text(self) -> str:
        """The range in words, e.g. ``">= 1"``, ``"in [0, 1]"``, ``"> 0"``."""
        if self.low is not None and self.high is not None:
            return f"in {'(' if self.low_open else '['}{self.low:g}, {self.high:g}]"
        if self.low is not None:
            return f"> {self.low:g}" if self.low_open else f">= {self.low:g}"
        if self.high is not None:
            return f"<= {self.high:g}"
        return "any value"


def setting(
    default: Any,
    help: str,  # noqa: A002 - the word argparse uses
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    choices: tuple[Any, ...] | None = None,
    flag: str | None = None,
    negate: bool = False,
    flag_help: str | None = None,
    metavar: str | None = None,
    cli: bool = True,
    config: bool = True,
    passed: str = "set",
    schema: dict[str, Any] | None = None,
) -> Any:
    """A dataclass field with its description (see :class:`Setting` for the arguments)."""
    meta = {
        "help": help,
        "low": low,
        "high": high,
        "low_open": low_open,
        "choices": choices,
        "flag": flag,
        "negate": negate,
        "flag_help": flag_help,
        "metavar": metavar,
        "cli": cli,
        "config": config,
        "passed": passed,
        "schema": schema,
    }
    return dataclasses.field(default=default, metadata={KEY: meta})


def _kind(annotation: Any) -> tuple[type, bool]:
    """The base type of a field annotation and whether ``None`` is allowed."""
    if isinstance(annotation, str):
        annotation = eval(annotation, {"int": int, "float": float, "bool": bool, "str": str})  # noqa: S307
    args = typing.get_args(annotation)
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        kinds = [a for a in args if a is not type(None)]
        return kinds[0], type(None) in args
    return annotation, False


def describe(settings: type) -> list[Setting]:
    """The :class:`Setting` of every described field of a settings dataclass, in field order."""
    out = []
    for f in fields(settings):
        meta = f.metadata.get(KEY)
        if meta is None:
            continue
        kind, optional = _kind(f.type)
        out.append(
            Setting(
                name=f.name,
                default=None if f.default is MISSING else f.default,
                kind=kind,
                optional=optional,
                help=meta["help"],
                low=meta["low"],
                high=meta["high"],
                low_open=meta["low_open"],
                choices=meta["choices"],
                flag=meta["flag"] or "--" + f.name.replace("_", "-"),
                negate=meta["negate"],
                flag_help=meta["flag_help"],
                metavar=meta["metavar"],
                cli=meta["cli"],
                config=meta["config"],
                passed=meta["passed"],
                schema=meta["schema"],
            )
        )
    return out


def described(settings: type, name: str) -> Setting:
    """The description of one field (``KeyError`` for an undescribed one)."""
    for item in describe(settings):
        if item.name == name:
            return item
    raise KeyError(f"{settings.__name__} has no setting {name!r}")


def defaults(settings: type) -> dict[str, Any]:
    """The defaults of a settings class as a plain dict (for schemas, docs and tests)."""
    return {f.name: f.default for f in fields(settings)}


def from_mapping(settings: type, values: dict[str, Any] | None) -> Any:
    """Build ``settings`` from a config section, each value checked against its description.

    Raises
    ------
    ValueError
        For an unknown key or a value outside its range (naming the key).
    """
    values = dict(values or {})
    known = {f.name for f in fields(settings)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ValueError(f"unknown {settings.__name__} key(s): {', '.join(unknown)}")
    for item in describe(settings):
        if item.name in values:
            values[item.name] = item.check(values[item.name])
    return settings(**values)


def json_schema(settings: type) -> dict[str, Any]:
    """The config schema's properties of a stage: one per setting with a config key."""
    out: dict[str, Any] = {}
    for item in describe(settings):
        if not item.config:
            continue
        if item.schema is not None:
            out[item.name] = {**item.schema, "description": item.help}
            if item.default is not None:
                out[item.name]["default"] = item.default
            continue
        kind = {int: "integer", float: "number", bool: "boolean", str: "string"}[item.kind]
        prop: dict[str, Any] = {"type": kind}  # leave a key out for None
        if item.low is not None:
            prop["exclusiveMinimum" if item.low_open else "minimum"] = item.low
        if item.high is not None:
            prop["maximum"] = item.high
        if item.choices is not None:
            prop["enum"] = list(item.choices)
        if item.default is not None:
            prop["default"] = item.default
        prop["description"] = item.help
        out[item.name] = prop
    return out


def string_or_mapping(value: dict) -> dict:
    """The schema of a setting given as a string or as a non-empty mapping whose values are ``value``."""
    return {
        "oneOf": [
            {"type": "string", "minLength": 1},
            {"type": "object", "minProperties": 1, "additionalProperties": value},
        ]
    }
