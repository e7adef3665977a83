"""The pruners by name (``evolve --pruner SPEC``, the campaign's ``evolve.pruner``).

A pruner is given as a type and options: on the command line compactly as
``TYPE[:KEY=VALUE,...]`` (``asha:min_steps=1,eta=3``), in a campaign config as a mapping
(``{type: asha, min_steps: 1, eta: 3}``) or that same string. :func:`pruner_text` turns
either into the canonical string the run's settings hold; :func:`make_pruner` builds the
pruner of one rank.

Every type also takes ``patience`` (and ``min_delta``): the pruner then stops only runs that
stalled for that many steps (:class:`~propulate.pruners.patience.PatientPruner` around it).
Type ``patience`` alone stops every stalled run.

Each entry of :data:`PRUNERS` names its class as ``"module:Class"`` (imported only when
used) and the options it takes, with their types; a new pruner is its module plus one line.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from propulate.pruners.base import Pruner


@dataclass(frozen=True)
class PrunerType:
    """One registered pruner.

    Attributes
    ----------
    ref : str
        ``"module:Class"``; the class takes the options as keywords.
    options : dict of str to type
        Option name to ``int`` or ``float``.
    help : str
        One line for documentation.
    space : bool
        Whether the class takes the search space as its first argument.
    optuna : bool
        Whether Optuna has the same rule (the Optuna baseline accepts it).
    """

    ref: str
    options: dict[str, type]
    help: str
    space: bool = False
    optuna: bool = True


#: Options every type takes: a patience wrapper around it.
WRAPPER_OPTIONS: dict[str, type] = {"patience": int, "min_delta": float}

#: Pruner type name -> its entry.
PRUNERS: dict[str, PrunerType] = {
    "asha": PrunerType(
        "propulate.pruners.asha:ASHAPruner",
        {"min_steps": float, "eta": int, "bootstrap": int},
        "asynchronous successive halving: rungs at min_steps * eta^k, the best 1/eta go on",
    ),
    "median": PrunerType(
        "propulate.pruners.median:MedianPruner",
        {"startup": int, "warmup": float, "min_values": int},
        "stop a run whose best value is worse than the finished runs' median at that step",
    ),
    "patience": PrunerType(
        "propulate.pruners.patience:PatientPruner",
        {},
        "stop a run that has not improved for `patience` steps",
    ),
    "static": PrunerType(
        "propulate.pruners.surrogates:StaticSurrogate",
        {"margin": float},
        "Propulate 1.2's StaticSurrogate: stop a curve clearly worse than the best run's",
        optuna=False,
    ),
    "dynamic": PrunerType(
        "propulate.pruners.surrogates:DynamicSurrogate",
        {"margin": float},
        "Propulate 1.2's DynamicSurrogate: stop a run whose predicted final loss is clearly "
        "worse than the best",
        space=True,
        optuna=False,
    ),
}


def _number(text: Any, kind: type, key: str) -> int | float:
    if isinstance(text, bool):
        raise ValueError(f"pruner option {key}: expected a number, got {text!r}")
    try:
        value = kind(text) if isinstance(text, str) else text
        if kind is int and isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, kind if kind is int else int | float):
            raise TypeError
    except (TypeError, ValueError):
        what = "a whole number" if kind is int else "a number"
        raise ValueError(f"pruner option {key}: expected {what}, got {text!r}") from None
    return value


def parse_pruner(spec: str | Mapping[str, Any]) -> tuple[str, dict[str, int | float]]:
    """The type and options of a pruner spec (a ``TYPE[:KEY=VALUE,...]`` string or a mapping
    with ``type``).

    Raises
    ------
    ValueError
        An unknown type or option, a value that is not a number, a malformed string.
    """
    if isinstance(spec, Mapping):
        items = dict(spec)
        name = items.pop("type", None)
        if not isinstance(name, str):
            raise ValueError(f"a pruner mapping needs 'type' (one of {', '.join(PRUNERS)})")
        raw: dict[str, Any] = items
    elif isinstance(spec, str):
        name, _, rest = spec.strip().partition(":")
        raw = {}
        for part in filter(None, (p.strip() for p in rest.split(","))):
            key, eq, value = part.partition("=")
            if not eq or not key.strip():
                raise ValueError(f"pruner {spec!r}: write options as KEY=VALUE, got {part!r}")
            raw[key.strip()] = value.strip()
    else:
        raise ValueError(f"a pruner is TYPE[:KEY=VALUE,...] or a mapping, got {spec!r}")
    entry = PRUNERS.get(name)
    if entry is None:
        raise ValueError(f"unknown pruner {name!r}; choose from {', '.join(PRUNERS)}")
    known = {**entry.options, **WRAPPER_OPTIONS}
    options: dict[str, int | float] = {}
    for key, value in raw.items():
        if key not in known:
            raise ValueError(f"pruner {name}: unknown option {key!r}; known: {', '.join(known)}")
        options[key] = _number(value, known[key], key)
    if name == "patience":
        options.setdefault("patience", 3)
    return name, options


def pruner_text(spec: str | Mapping[str, Any]) -> str:
    """The canonical ``TYPE[:KEY=VALUE,...]`` string of a spec (checked, see
    :func:`parse_pruner`); the pruner is also built once, so a bad value fails here."""
    name, options = parse_pruner(spec)
    make_pruner(name, options)
    body = ",".join(
        f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in options.items()
    )
    return f"{name}:{body}" if body else name


def make_pruner(
    spec: str | Mapping[str, Any], options: Mapping[str, Any] | None = None, space: Any = None
) -> Pruner:
    """Build a pruner for one rank.

    Parameters
    ----------
    spec : str or mapping
        A spec (:func:`parse_pruner`), or a type name with ``options``.
    options : mapping, optional
        The options when ``spec`` is a bare type name.
    space : SearchSpace, optional
        The run's search space (for the types that model configurations).

    Raises
    ------
    ValueError
        A bad spec or an option out of its range.
    """
    name, opts = parse_pruner(spec) if options is None else (str(spec), dict(options))
    entry = PRUNERS[name]
    wrapper = {k: opts.pop(k) for k in list(opts) if k in WRAPPER_OPTIONS}
    module, _, cls_name = entry.ref.partition(":")
    cls = getattr(importlib.import_module(module), cls_name)
    if name == "patience":
        return cls(None, **wrapper)
    pruner: Pruner = cls(space, **opts) if entry.space else cls(**opts)
    if wrapper:
        from propulate.pruners.patience import PatientPruner

        pruner = PatientPruner(pruner, **wrapper)
    return pruner
