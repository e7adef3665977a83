"""The propagators the engine runs by name (``evolve --propagator SPEC``, the campaign's
``evolve.propagator``).

Each :class:`~propulate.plugins.registry.Entry` of :data:`PROPAGATORS` names its factory as
``"module:function"`` (imported only when used), declares its options as a settings dataclass
and its :class:`Capabilities`. A factory is called as ``factory(space, options, rng, run)``:
the search space, the entry's options (filled in and checked), this rank's random stream and
the run's :class:`~propulate.plugins.facts.RunFacts`. A new propagator is its module plus one
entry here; the command line, the campaign's checks, the config schema, the docs' tables and
the contract tests (:mod:`propulate.contracts`) read this table.

A propagator is chosen by a spec: ``NAME[:KEY=VALUE,...]`` (``ga:pop_size=12``) or a mapping
``{type: NAME, KEY: VALUE}``.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from propulate.plugins.facts import RunFacts
from propulate.plugins.registry import Entry, NoOptions, Registry, Spec
from propulate.propagators.cma_metamodel import AUTO_BUDGET, AUTO_MIN_DIM
from propulate.settings.spec import setting

if TYPE_CHECKING:
    from propulate.propagators.base import Propagator
    from propulate.space import SearchSpace


@dataclass(frozen=True)
class Capabilities:
    """What a propagator can do.

    Attributes
    ----------
    several_objectives : bool
        It searches several objectives at once (Pareto ranking); the others minimise their
        weighted sum and refuse several objectives without weights.
    kinds : frozenset of str
        The parameter kinds it searches as such: ``float``, ``int``, ``categorical``.
    conditional : bool
        It searches conditional spaces (the engine completes every child either way).
    pruned : bool
        It uses pruned evaluations (their curves) when a pruner stops runs early.
    state : bool
        It puts per-individual state on the wire (``Individual.state``).
    composite : bool
        It runs other registered propagators (not a member of a portfolio).
    optuna : str or None
        The Optuna sampler that does the same, for side-by-side measurements.
    """

    several_objectives: bool = False
    kinds: frozenset[str] = frozenset({"float", "int", "categorical"})
    conditional: bool = True
    pruned: bool = False
    state: bool = False
    composite: bool = False
    optuna: str | None = None


# ------------------------------------------------------------------ options of the entries
@dataclass(frozen=True)
class GAOptions:
    """The genetic algorithm's breeding (Propulate's default chain)."""

    pop_size: int = setting(8, "breeding pool per island: the best active individuals", low=2)
    crossover_prob: float = setting(
        0.7, "probability that a child is bred by uniform crossover", low=0.0, high=1.0
    )
    mutation_prob: float = setting(
        0.4, "probability that a child gets a point mutation (one gene redrawn)", low=0.0, high=1.0
    )
    random_init_prob: float = setting(
        0.1, "probability that a bred child is replaced by a random one", low=0.0, high=1.0
    )
    pruned_random_init_prob: float = setting(
        0.3,
        "random_init_prob under a pruner, where a random child is cheap",
        low=0.0,
        high=1.0,
    )
    sigma_factor: float = setting(
        0.05,
        "std of the interval mutation as a fraction of each parameter's range",
        low=0.0,
        low_open=True,
    )


@dataclass(frozen=True)
class CMAOptions:
    """Active IPOP-CMA-ES."""

    sigma0: float = setting(0.2, "initial step size in the unit cube", low=0.0, low_open=True)
    pop_size: int | None = setting(
        None, "first population size (default 4 + 3 ln n; doubles at each restart)", low=2
    )
    restarts: bool = setting(True, "restart with a doubled population when it stagnates")
    metamodel: str = setting(
        "auto",
        "propose the minimum of a quadratic model of the best points once per generation "
        f"(auto: at least {AUTO_MIN_DIM} parameters and at most {AUTO_BUDGET} evaluations per "
        "parameter)",
        choices=("auto", "on", "off"),
        metavar="WHEN",
    )


@dataclass(frozen=True)
class PSOOptions:
    """Canonical particle swarm optimisation."""

    particles: int = setting(8, "particles per worker", low=1)
    cognitive: float = setting(2.05, "attraction to a particle's own best", low=0.0)
    social: float = setting(2.05, "attraction to the swarm's best", low=0.0)

    def __post_init__(self) -> None:
        if self.cognitive + self.social <= 4.0:
            raise ValueError(
                "cognitive + social must exceed 4 (Clerc's constriction), got "
                f"{self.cognitive + self.social:g}"
            )


@dataclass(frozen=True)
class NMOptions:
    """Nelder-Mead, one simplex per worker."""

    alpha: float = setting(1.0, "reflection coefficient", low=0.0, low_open=True)
    gamma: float = setting(2.0, "expansion coefficient", low=1.0, low_open=True)
    rho: float = setting(0.5, "contraction coefficient", low=0.0, low_open=True, high=0.5)
    sigma: float = setting(0.5, "shrink coefficient", low=0.0, low_open=True, high=1.0)
    scale: float = setting(1.0, "initial simplex size in the unit cube", low=0.0, low_open=True)


@dataclass(frozen=True)
class TPEOptions:
    """The tree-structured Parzen estimator."""

    startup: int = setting(10, "random configurations before the model proposes", low=1)
    candidates: int = setting(24, "candidates drawn from the good density per proposal", low=1)
    gamma: float = setting(0.1, "share of observations that are good", low=0.0, low_open=True)
    max_below: int = setting(25, "most observations in the good density", low=1)
    prior_weight: float = setting(1.0, "weight of the uniform prior", low=0.0, low_open=True)


@dataclass(frozen=True)
class BOOptions:
    """Bayesian optimisation on every worker (a GP of all observed evaluations)."""

    acquisition: str = setting(
        "ucb", "acquisition function", choices=("ucb", "ei", "pi"), metavar="NAME"
    )
    n_initial: int | None = setting(
        None, "space-filling configurations before the model proposes (default 3 d, 5 to 20)", low=1
    )
    initial_design: str = setting(
        "sobol", "the initial design", choices=("sobol", "lhs", "random"), metavar="NAME"
    )
    n_candidates: int = setting(512, "random candidates scored per proposal", low=2)
    n_restarts: int = setting(8, "local searches from the best candidates", low=1)
    max_points: int | None = setting(
        500, "observations the GP keeps (a subset past it; none: all)", low=2
    )


@dataclass(frozen=True)
class PortfolioOptions:
    """Islands (or workers) running different propagators, migrating between them."""

    plan: str = setting(
        "cma+ga",
        "the propagators, +-separated: island i runs the i-th (cyclically; with one island "
        "worker i does)",
        metavar="NAMES",
    )

    def __post_init__(self) -> None:
        parse_plan(self.plan)


def parse_plan(text: str | Sequence[str]) -> tuple[str, ...]:
    """A portfolio's plan ``"cma+ga"`` (or ``"cma,ga"``) -> ``("cma", "ga")``, each name a
    registered propagator that does not run others itself (``ValueError`` naming the unknown
    one)."""
    if isinstance(text, str):
        text = text.replace("+", ",").split(",")
    names = tuple(n for n in (n.strip() for n in text) if n)
    if not names:
        raise ValueError("the portfolio plan names no propagator")
    members = [n for n, e in PROPAGATORS.items() if not e.capabilities.composite]
    for name in names:
        if name not in members:
            raise ValueError(
                f"unknown propagator {name!r} in the portfolio; choose from {', '.join(members)}"
            )
    return names


@dataclass(frozen=True)
class AutoOptions:
    """The method chosen from the run's facts (the rule table of ``docs/auto.md``)."""

    race: float = setting(
        0.2,
        "share of the budget over which the first choice races a challenger (0: no race)",
        low=0.0,
        high=0.5,
    )


def _entries() -> list[Entry]:
    return [
        Entry(
            "auto",
            "propulate.propagators.auto:auto_propagator",
            "the method chosen from the space, the budget, the workers, the objectives and a "
            "pruner; races a challenger where the first choice is sometimes beaten",
            AutoOptions,
            Capabilities(several_objectives=True, pruned=True, state=True, composite=True),
        ),
        Entry(
            "ga",
            "propulate.propagators.default:ga_propagator",
            "genetic algorithm: crossover, mutation, random restarts; Pareto ranking for "
            "several objectives",
            GAOptions,
            Capabilities(several_objectives=True, pruned=True),
        ),
        Entry(
            "cma",
            "propulate.propagators.cmaes:cma_propagator",
            "active IPOP-CMA-ES, one distribution per island",
            CMAOptions,
            Capabilities(optuna="CmaEsSampler"),
        ),
        Entry(
            "pso",
            "propulate.propagators.pso:pso_propagator",
            "canonical particle swarm, particles per worker",
            PSOOptions,
            Capabilities(state=True),
        ),
        Entry(
            "nm",
            "propulate.propagators.nm:nm_propagator",
            "Nelder-Mead simplex per worker from a random corner",
            NMOptions,
            Capabilities(),
        ),
        Entry(
            "tpe",
            "propulate.propagators.tpe:tpe_propagator",
            "tree-structured Parzen estimator over every observed evaluation",
            TPEOptions,
            Capabilities(optuna="TPESampler"),
        ),
        Entry(
            "bo",
            "propulate.propagators.bo:bo_propagator",
            "Bayesian optimisation: a Gaussian process per worker, peers' runs pending",
            BOOptions,
            Capabilities(optuna="GPSampler"),
        ),
        Entry(
            "portfolio",
            "propulate.propagators.portfolio:portfolio_propagator",
            "one propagator per island (or worker) from a plan, migration between them",
            PortfolioOptions,
            Capabilities(composite=True),
        ),
        Entry(
            "random",
            "propulate.propagators.random_search:random_propagator",
            "uniform random search, distinct configurations",
            NoOptions,
            Capabilities(several_objectives=True, optuna="RandomSampler"),
        ),
    ]


#: The propagators by name.
PROPAGATORS = Registry("propagator")
for _entry in _entries():
    PROPAGATORS.register(_entry)

#: Options of registered propagators that older settings also set (``EvolveSettings`` fields of
#: the same meaning): ``(propagator, option) -> settings field``. A spec that does not give the
#: option takes the field's value when the settings set it to other than its default.
LEGACY_SETTINGS: dict[tuple[str, str], str] = {
    **{("ga", name): name for name in GAOptions.__dataclass_fields__},
    ("pso", "particles"): "pop_size",
}


def several_objectives() -> list[str]:
    """The registered propagators that search several objectives at once."""
    return [n for n, e in PROPAGATORS.items() if e.capabilities.several_objectives]


def check_objectives(name: str, objectives: Any) -> None:
    """``ValueError`` (one line) unless propagator ``name`` can search the declared
    ``objectives`` (an :class:`~propulate.runs.declared_objectives.Objectives` or ``None``): several
    objectives need a propagator that ranks them, or weights that sum them to one loss."""
    if objectives is None or objectives.scalar:
        return
    if PROPAGATORS[name].capabilities.several_objectives:
        return
    raise ValueError(
        f"propagator {name} optimises one objective, not {len(objectives)} objectives "
        f"({', '.join(objectives.names)}); use {' or '.join(several_objectives())}, or give "
        "weights to minimise their weighted sum (--weights; config: evolve.weights)"
    )


def propagator_spec(settings: Any) -> Spec:
    """The checked spec of a run's ``settings.propagator``, options the older settings fields
    set (:data:`LEGACY_SETTINGS`, the portfolio's ``portfolio``) merged in.

    The default ``auto`` becomes ``ga`` when the settings set one of the GA's breeding options
    (``pop_size``, ``crossover_prob``, ...): they configure the GA, so the GA runs with them.
    """
    spec = PROPAGATORS.spec(getattr(settings, "propagator", None) or "auto")
    if settings is None:
        return spec
    from propulate.settings import EvolveSettings

    defaults = EvolveSettings()

    def changed(field: str) -> bool:
        value = getattr(settings, field, None)
        return value is not None and value != getattr(defaults, field)

    if spec.name == "auto" and not spec.given:
        if any(changed(f) for (n, _), f in LEGACY_SETTINGS.items() if n == "ga"):
            spec = PROPAGATORS.spec("ga")
    merged = spec.values()
    for (name, option), field in LEGACY_SETTINGS.items():
        if name == spec.name and option not in merged and changed(field):
            merged[option] = getattr(settings, field)
    if spec.name == "portfolio" and "plan" not in merged and changed("portfolio"):
        plan = str(settings.portfolio)
        merged["plan"] = "+".join(p.strip() for p in plan.split(",") if p.strip())
    return spec if merged == spec.values() else PROPAGATORS.spec({"type": spec.name, **merged})


def build_propagator(
    spec: str | Mapping[str, Any] | Spec,
    space: SearchSpace,
    rng: random.Random,
    run: RunFacts | None = None,
) -> Propagator:
    """Build the propagator of ``spec`` for one rank.

    Parameters
    ----------
    spec : str, mapping or Spec
        ``NAME[:KEY=VALUE,...]``, ``{type: NAME, ...}`` or a checked spec.
    space : SearchSpace
        The search space (a propagator that cannot search it raises ``ValueError`` naming the
        parameter).
    rng : random.Random
        This rank's random stream.
    run : RunFacts, optional
        What the run knows (objectives, pruner, islands, budget); default: nothing.

    Raises
    ------
    ValueError
        An unknown name or option, or several objectives for a propagator that ranks one.
    """
    checked = PROPAGATORS.spec(spec)
    run = run if run is not None else RunFacts.of(space=space)
    check_objectives(checked.name, run.objectives)
    return checked.entry.load()(space, checked.options, rng, run)


def make_propagator(name: str, space: SearchSpace, settings: Any, rng: random.Random) -> Propagator:
    """Build the propagator ``name`` (a spec) with the options and facts of a run's
    ``settings`` (:class:`~propulate.settings.EvolveSettings`): the older entry point."""
    from dataclasses import replace

    spec = propagator_spec(replace(settings, propagator=name))
    return build_propagator(spec, space, rng, RunFacts.of(settings, space))
