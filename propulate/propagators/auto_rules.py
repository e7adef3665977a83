"""The rule table of the ``auto`` propagator: which method a run gets from what it knows.

:data:`RULES` is read top to bottom; the first rule whose condition holds for the run's
:class:`~propulate.plugins.facts.RunFacts` names the *first choice* and, where measurements
showed that the first choice is sometimes beaten, a *challenger* that races it over the first
share of the budget (:mod:`propulate.propagators.auto`), and where a local method refines what the
first choice found better than it does, that method (*then*) breeds the last
:data:`POLISH_SHARE` of the budget. A rule's members must be registered
and able to search the run (several objectives, parameter kinds): a rule whose first choice
cannot is skipped. ``docs/auto.md`` shows this table (:func:`rules_table`) beside the
measurements on development instances it comes from.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from propulate.plugins.facts import RunFacts

#: Evaluations per parameter up to which Bayesian optimisation is the first choice.
BO_BUDGET_PER_DIM = 30
#: Evaluations per parameter up to which Bayesian optimisation is chosen for a conditional space.
BO_CONDITIONAL_PER_DIM = 100
#: Largest dimension Bayesian optimisation is chosen for (its GP grows with the points).
BO_MAX_DIM = 20
#: Spaces of at most this many parameters are "small": Bayesian optimisation is chosen for them
#: up to :data:`BO_SMALL_SPACE_PER_DIM` evaluations per parameter or
#: :data:`BO_SMALL_SPACE_BUDGET` evaluations, whichever is more.
BO_SMALL_SPACE_DIM = 3
#: Evaluations per parameter up to which Bayesian optimisation is chosen in a small space.
BO_SMALL_SPACE_PER_DIM = 100
#: Evaluations up to which Bayesian optimisation is chosen in a small space.
BO_SMALL_SPACE_BUDGET = 200
#: Evaluations per parameter from which CMA-ES races the GA (below, CMA-ES runs alone). At 100
#: a race cost CMA-ES more than the GA found on bbob 10-D; at 200 CMA-ES alone ends in a local
#: minimum of the paper's 10-D Schwefel function that the GA's race finds its way out of.
RACE_BUDGET_PER_DIM = 150
#: Evaluations per parameter of the race when the run has no evaluation budget.
RACE_PER_DIM = 25
#: Largest share of the budget the landscape probe may take (over all islands: each probes apart).
PROBE_SHARE = 0.05
#: Share of the budget a rule's ``then`` method breeds at the end (it polishes what the first
#: choice found).
POLISH_SHARE = 0.3


def _mostly_categorical(facts: RunFacts) -> bool:
    return facts.categorical * 2 >= max(facts.dim, 1)


@dataclass(frozen=True)
class Rule:
    """One row of the table.

    Attributes
    ----------
    when : str
        The condition in words (the docs' table, the run's reason).
    test : callable
        ``test(facts) -> bool``.
    first : str
        The first choice: a registered propagator, or a spec with options
        (``ga:pop_size=40``).
    challenger : str or None
        The method that races it, ``None``: no race.
    why : str
        The measurement behind the rule, in a few words.
    then : str or None
        A local method that breeds the last :data:`POLISH_SHARE` of the budget, from the best
        configuration found (``None``: the first choice breeds to the end).
    probe : str or None
        The method that runs instead of the first choice (and without a race) when the
        landscape probe (:mod:`propulate.propagators.landscape`) finds the function separable
        with many local minima; the probe runs first where it costs at most
        :data:`PROBE_SHARE` of the budget (``None``: no probe).
    """

    when: str
    test: Callable[[RunFacts], bool]
    first: str
    challenger: str | None
    why: str
    then: str | None = None
    probe: str | None = None


RULES: tuple[Rule, ...] = (
    Rule(
        "several objectives without weights",
        lambda f: f.several_objectives,
        "ga:pop_size=40",
        None,
        "the GA's Pareto ranking (a pool of 40) is the only multi-objective search; bbob-biobj "
        "5-D: within 2 % of NSGA-II's hypervolume on 89-91 % of the problems",
    ),
    Rule(
        "a pruner stops evaluations early",
        lambda f: f.pruned,
        "tpe",
        None,
        "digits under ASHA: tpe ties Optuna's TPE with successive halving, the GA trails",
    ),
    Rule(
        f"conditional parameters, a budget of at most {BO_CONDITIONAL_PER_DIM} evaluations per "
        f"parameter, at most {BO_MAX_DIM} parameters",
        lambda f: (
            f.conditional > 0
            and (pd := f.budget_per_parameter) is not None
            and pd <= BO_CONDITIONAL_PER_DIM
            and f.dim <= BO_MAX_DIM
        ),
        "bo",
        "ga",
        "two-branch conditional benchmark (dev seeds 0-9 and 200-209, 600 evaluations): bo, "
        "scoring each branch against its own best, reaches 0.1 on 19 of 20 seeds (median 57 "
        "evaluations; against the best of all branches 15 of 20, stuck in the worse branch), "
        "racing the GA on 20 of 20 (median 76, mean 82 against bo's 104); the GA alone needs "
        "a median 221 (seeds 200-209)",
    ),
    Rule(
        "conditional parameters, or at least half of them categorical",
        lambda f: f.conditional > 0 or _mostly_categorical(f),
        "ga",
        None,
        "two-branch conditional benchmark (seeds 200-209): the GA reaches 0.01 in a median "
        "345 evaluations on 10 of 10 seeds; tpe and Optuna's grouped TPE reach 0.1 within 600 "
        "on 6 and 7 of 10",
    ),
    Rule(
        f"at most {BO_SMALL_SPACE_DIM} parameters, a budget of at most "
        f"{BO_SMALL_SPACE_PER_DIM} evaluations per parameter or {BO_SMALL_SPACE_BUDGET} "
        "evaluations",
        lambda f: (
            f.dim <= BO_SMALL_SPACE_DIM
            and (b := f.budget) is not None
            and b <= max(BO_SMALL_SPACE_PER_DIM * max(f.dim, 1), BO_SMALL_SPACE_BUDGET)
        ),
        "bo",
        None,
        "the 1-D demo function (tasks 0.1-1.3, dev seeds 1-8): within 0.05 of the optimum at "
        "200 evaluations on 40 of 40 runs (bo alone 40, cma 31: it settles in a local minimum, "
        "nm 37, the GA 40); at 60 evaluations 17 of 20 (bo 19, the GA 18, cma 14, nm 11); bbob "
        "2-D and 3-D at 100 x D (dev): 0.500 and 0.345 of the targets, bo alone 0.347 and 0.289, "
        "cma 0.340 and 0.286, nm 0.575 and 0.367 (its precision); nm polishing the last half "
        "instead of 30 % (a first version of the hand-over): 2-D 0.594, the demo at 60 "
        "evaluations 17 of 20 where 30 % gave 19; at 150 x D in 2-D cma leads bo (0.453 "
        "against 0.377)",
        then="nm",
    ),
    Rule(
        f"a budget of at most {BO_BUDGET_PER_DIM} evaluations per parameter, at most "
        f"{BO_MAX_DIM} parameters",
        lambda f: (
            (pd := f.budget_per_parameter) is not None
            and pd <= BO_BUDGET_PER_DIM
            and f.dim <= BO_MAX_DIM
        ),
        "bo",
        None,
        "bbob 10-D at 20 x D: Bayesian optimisation leads every population method",
    ),
    Rule(
        f"continuous or integer parameters, at least {RACE_BUDGET_PER_DIM} evaluations per "
        "parameter or no evaluation budget",
        lambda f: (pd := f.budget_per_parameter) is None or pd >= RACE_BUDGET_PER_DIM,
        "cma",
        "ga",
        "bbob 10-D at 1,000 x D (dev): CMA-ES leads overall (0.208 of the targets at 100 x D), "
        "the GA wins separable multimodal f3, f4 and Schwefel f20 (0.29, 0.27, 0.25 against "
        "0.12, 0.10, 0.18), which the race finds; held-out 71: auto 0.627 = cma-package; the "
        "paper's 10-D Schwefel at 200 x D (seeds 700-709): CMA-ES alone 1,638, racing 132, the "
        "GA 55; the landscape probe hands it to the GA from the start: 88.5 (the GA in the same "
        "run 124)",
        probe="ga",
    ),
    Rule(
        "continuous or integer parameters, a budget in between",
        lambda f: True,
        "cma",
        None,
        "bbob 10-D at 100 x D: CMA-ES 0.208 (dev), the GA 0.142 and nowhere clearly ahead; a race "
        "cost CMA-ES more than it found (held-out 71-73: 0.170 racing against 0.193 alone); "
        "the landscape probe hands the paper's Rastrigin 20-D and bi-Rastrigin 30-D at 2,000 "
        "evaluations to the GA (seeds 700-709: 26.6 and 64.1, CMA-ES alone 28.9 and 153, the GA "
        "22.4 and 72.6)",
        probe="ga",
    ),
)


@dataclass(frozen=True)
class Choice:
    """What ``auto`` runs and why.

    Attributes
    ----------
    first : str
        The first choice (a spec).
    challenger : str or None
        The racing method (``None``: no race).
    race : int
        Evaluations of the race (0: none).
    reason : str
        ``"auto chose cma: 10 continuous parameters, 10,000 evaluations, 2 workers (...)"``.
    then : str or None
        The method that breeds after ``handoff`` evaluations (``None``: none).
    handoff : int
        Evaluations after which ``then`` breeds.
    probe : int
        Evaluations of the landscape probe that comes first (0: none); the race follows it.
    probe_pick : str or None
        The method that runs instead, without a race, when the probe finds the function
        separable with many local minima.
    """

    first: str
    challenger: str | None
    race: int
    reason: str
    then: str | None = None
    handoff: int = 0
    probe: int = 0
    probe_pick: str | None = None


def _able(spec: str, facts: RunFacts) -> bool:
    from propulate.propagators.registry import PROPAGATORS

    name = spec.partition(":")[0]
    if name not in PROPAGATORS:
        return False
    caps = PROPAGATORS[name].capabilities
    if facts.several_objectives and not caps.several_objectives:
        return False
    kinds = {"float": facts.continuous, "int": facts.integer, "categorical": facts.categorical}
    return all(k in caps.kinds for k, n in kinds.items() if n)


def _probe(rule: Rule, facts: RunFacts) -> tuple[int, str | None]:
    """The landscape probe's evaluations (per island) and its pick for ``rule`` and ``facts``:
    ``(0, None)`` when the rule names none, the space has conditions or fewer than two numeric
    parameters, or the probes of all islands would take more than :data:`PROBE_SHARE` of the
    budget."""
    from propulate.propagators.landscape import probe_size

    if rule.probe is None or facts.conditional or not _able(rule.probe, facts):
        return 0, None
    size = probe_size(facts.continuous + facts.integer)
    budget = facts.budget
    if size == 0 or (budget is not None and size * max(facts.islands, 1) > PROBE_SHARE * budget):
        return 0, None
    return size, rule.probe


def choose(facts: RunFacts, race_share: float = 0.2) -> Choice:
    """The choice of :data:`RULES` for a run with ``facts``; the race spends ``race_share`` of
    the budget (``RACE_PER_DIM`` evaluations per parameter without a budget)."""
    for rule in RULES:
        if not rule.test(facts) or not _able(rule.first, facts):
            continue
        challenger = rule.challenger if rule.challenger and _able(rule.challenger, facts) else None
        race = 0
        if challenger is not None:
            budget = facts.budget
            race = int(race_share * budget) if budget else RACE_PER_DIM * max(facts.dim, 1)
            if race_share <= 0 or race < 4:
                challenger, race = None, 0
        with_race = f"; races {challenger} over {race:,} evaluations" if challenger else ""
        then, handoff = None, 0
        if rule.then and _able(rule.then, facts) and facts.budget:
            then, handoff = rule.then, int(round((1.0 - POLISH_SHARE) * facts.budget))
            with_race += f"; {then} polishes after {handoff:,} evaluations"
        probe, pick = _probe(rule, facts)
        if probe:
            with_race = (
                f"; probes the landscape over {probe:,} evaluations first, {pick} if separable "
                f"with many local minima{with_race}"
            )
        reason = f"auto chose {rule.first}: {facts.describe()} ({rule.when}{with_race})"
        return Choice(rule.first, challenger, race, reason, then, handoff, probe, pick)
    raise ValueError(f"auto finds no registered propagator for {facts.describe()}")


def rules_table() -> str:
    """The rule table as markdown (``docs/auto.md``)."""
    rows = [
        "| # | when | first choice | challenger | then | probe picks | measured |",
        "|---|---|---|---|---|---|---|",
    ]

    def name(spec: str | None) -> str:
        return f"`{spec}`" if spec else "-"

    for i, rule in enumerate(RULES, 1):
        rows.append(
            f"| {i} | {rule.when} | `{rule.first}` | {name(rule.challenger)} | "
            f"{name(rule.then)} | {name(rule.probe)} | {rule.why} |"
        )
    return "\n".join(rows)
