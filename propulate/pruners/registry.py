"""The pruners by name (``evolve --pruner SPEC``, the campaign's ``evolve.pruner``).

A pruner is given as a spec: on the command line ``TYPE[:KEY=VALUE,...]``
(``asha:min_steps=1,eta=3``), in a campaign config a mapping (``{type: asha, min_steps: 1,
eta: 3}``) or that same string. :data:`PRUNERS` holds one
:class:`~propulate.plugins.registry.Entry` per type: its class as ``"module:Class"``
(imported only when used), its options as a settings dataclass whose defaults are the class's
and its :class:`Capabilities`. A new pruner is its module plus one entry here.

Every type also takes ``patience`` (and ``min_delta``): the pruner then stops only runs that
stalled for that many steps (:class:`~propulate.pruners.patience.PatientPruner` around it).
Type ``patience`` alone stops every stalled run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from propulate.plugins.registry import Entry, NoOptions, Registry, Spec
from propulate.settings.spec import setting

if TYPE_CHECKING:
    from propulate.pruners.base import Pruner


@dataclass(frozen=True)
class Capabilities:
    """What a pruner needs and has.

    Attributes
    ----------
    space : bool
        Its class takes the run's search space as its first argument (it models
        configurations).
    optuna : bool
        Optuna has the same rule (the Optuna baseline runs it).
    """

    space: bool = False
    optuna: bool = True


@dataclass(frozen=True)
class PatienceOptions:
    """Options every pruner takes: stop only runs that stalled."""

    patience: int | None = setting(
        None, "stop only runs that have not improved for this many steps", low=1
    )
    min_delta: float = setting(0.0, "smallest change that counts as an improvement", low=0.0)


@dataclass(frozen=True)
class ASHAOptions:
    """Asynchronous successive halving."""

    min_steps: float = setting(1.0, "the first rung's step", low=0.0, low_open=True)
    eta: int = setting(3, "reduction factor: rungs at min_steps * eta^k", low=2)
    bootstrap: int = setting(0, "runs a rung holds before it stops any", low=0)


@dataclass(frozen=True)
class MedianOptions:
    """Optuna's median rule."""

    startup: int = setting(5, "finished runs before it stops any", low=0)
    warmup: float = setting(0.0, "steps of a run before it may be stopped", low=0.0)
    min_values: int = setting(1, "values at a step before their median counts", low=0)


@dataclass(frozen=True)
class MarginOptions:
    """Propulate 1.2's surrogates' margin."""

    margin: float = setting(
        0.8, "how much worse (relative) a run must be to stop", low=0.0, low_open=True, high=1.0
    )


def _entries() -> list[Entry]:
    return [
        Entry(
            "asha",
            "propulate.pruners.asha:ASHAPruner",
            "asynchronous successive halving: rungs at min_steps * eta^k, the best 1/eta go on",
            ASHAOptions,
            Capabilities(),
        ),
        Entry(
            "median",
            "propulate.pruners.median:MedianPruner",
            "stop a run whose best value is worse than the finished runs' median at that step",
            MedianOptions,
            Capabilities(),
        ),
        Entry(
            "patience",
            "propulate.pruners.patience:PatientPruner",
            "stop a run that has not improved for `patience` steps",
            NoOptions,
            Capabilities(),
        ),
        Entry(
            "static",
            "propulate.pruners.surrogates:StaticSurrogate",
            "Propulate 1.2's StaticSurrogate: stop a curve clearly worse than the best run's",
            MarginOptions,
            Capabilities(optuna=False),
        ),
        Entry(
            "dynamic",
            "propulate.pruners.surrogates:DynamicSurrogate",
            "Propulate 1.2's DynamicSurrogate: stop a run whose predicted final loss is clearly "
            "worse than the best",
            MarginOptions,
            Capabilities(space=True, optuna=False),
        ),
    ]


#: The pruners by type name.
PRUNERS = Registry("pruner", common=PatienceOptions)
for _entry in _entries():
    PRUNERS.register(_entry)


def pruner_spec(spec: str | Mapping[str, Any] | Spec) -> Spec:
    """The checked spec of a pruner (``ValueError`` for an unknown type or option, a value of
    the wrong type or out of range); type ``patience`` names its patience (3 unless given)."""
    checked = PRUNERS.spec(spec)
    if checked.name == "patience" and checked.extra.get("patience") is None:
        extra = {"patience": 3, **{k: v for k, v in checked.extra.items() if k != "patience"}}
        checked = Spec(checked.entry, checked.options, checked.given, extra)
    return checked


def parse_pruner(spec: str | Mapping[str, Any] | Spec) -> tuple[str, dict[str, Any]]:
    """The type and given options of a pruner spec (``patience`` defaults to 3 for type
    ``patience``)."""
    checked = pruner_spec(spec)
    return checked.name, checked.values()


def pruner_text(spec: str | Mapping[str, Any] | Spec) -> str:
    """The canonical ``TYPE[:KEY=VALUE,...]`` string of a spec; the pruner is also built once,
    so a combination its class refuses fails here."""
    checked = pruner_spec(spec)
    build_pruner(checked)
    return checked.text()


def build_pruner(spec: str | Mapping[str, Any] | Spec, space: Any = None) -> Pruner:
    """Build the pruner of ``spec`` for one rank.

    Parameters
    ----------
    spec : str, mapping or Spec
        ``TYPE[:KEY=VALUE,...]``, ``{type: TYPE, ...}`` or a checked spec.
    space : SearchSpace, optional
        The run's search space (for the types that model configurations).
    """
    checked = pruner_spec(spec)
    cls = checked.entry.load()
    wrapper = {k: v for k, v in checked.extra.items() if v is not None}
    if checked.name == "patience":
        return cls(None, **wrapper)
    options = asdict(checked.options)
    pruner: Pruner = cls(space, **options) if checked.entry.capabilities.space else cls(**options)
    if wrapper:
        from propulate.pruners.patience import PatientPruner

        pruner = PatientPruner(pruner, **wrapper)
    return pruner


def make_pruner(
    spec: str | Mapping[str, Any] | Spec,
    options: Mapping[str, Any] | None = None,
    space: Any = None,
) -> Pruner:
    """Build a pruner for one rank from a spec, or from a type name and its ``options`` (the
    older entry point; :func:`build_pruner`)."""
    if options is not None:
        spec = {"type": str(spec), **options}
    return build_pruner(spec, space)
