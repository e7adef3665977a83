"""The ``auto`` propagator: the method chosen from what the run knows, corrected by what it learns.

Before the run, :func:`~propulate.propagators.auto_rules.choose` picks a first choice from the
run's facts (the rule table). Where the table names a challenger, the two *race* over the first
share of the budget: each worker's proposals alternate between them (worker ``r``'s ``k``-th
child comes from member ``(k + r) % 2``), both learn from every evaluation (their ``observe``
sees all of them: what one finds, the other breeds from), and every child carries the name of
the member that bred it in its state (``{"auto": "cma"}``: on the wire, in the records, after a
resume). Once a worker has seen the race's evaluations, the member with the better results
(best loss, then the mean of its three best) breeds the rest of the run; a wrong first guess
costs at most half the race. The choice and the switch are logged, the choice's reason is in
``run.json``.
"""

from __future__ import annotations

import logging
import math
import random
from collections.abc import Sequence
from typing import TYPE_CHECKING

from propulate.plugins.facts import RunFacts
from propulate.population import Individual
from propulate.propagators.auto_rules import Choice, choose
from propulate.propagators.base import Offspring, Propagator
from propulate.space import SearchSpace

if TYPE_CHECKING:
    from propulate.propagators.registry import AutoOptions

log = logging.getLogger("propulate")

#: Key of ``Individual.state`` naming the member that bred a child.
KEY = "auto"


class Auto(Propagator):
    """Runs ``choice.first``, racing ``choice.challenger`` over ``choice.race`` evaluations.

    Parameters
    ----------
    space : SearchSpace
        The search space.
    members : dict of str to Propagator
        The first choice and the challenger (if any), built for this worker.
    choice : Choice
        What the rule table chose.
    rng : random.Random
        This worker's random stream.
    """

    def __init__(
        self,
        space: SearchSpace,
        members: dict[str, Propagator],
        choice: Choice,
        rng: random.Random,
    ) -> None:
        super().__init__(-1, 1, rng)
        self.space = space
        self.members = members
        self.choice = choice
        self.order = [n for n in (choice.first, choice.challenger) if n is not None]
        self.polishing = False
        self.racing = len(self.order) > 1 and choice.race > 0
        self.leader = choice.first
        self.rank = 0
        self.calls = 0
        self.seen = 0
        self.losses: dict[str, list[float]] = {n: [] for n in self.order}
        self.switched_at: int | None = None

    @property
    def observes(self) -> bool:
        """Always: the race counts every evaluation."""
        return True

    def bind(self, island: int, rank: int) -> None:
        """Tell every member where it runs."""
        self.rank = int(rank)
        for member in self.members.values():
            bind = getattr(member, "bind", None)
            if bind is not None:
                bind(island, rank)

    def _breeder(self) -> str:
        if self.racing:
            return self.order[(self.calls + self.rank) % len(self.order)]
        then = self.choice.then
        if then is not None and self.seen >= self.choice.handoff:
            if not self.polishing:
                self.polishing = True
                log.info("auto hands over to %s after %d evaluations", then, self.seen)
            return then
        return self.leader

    def __call__(self, inds: Sequence[Individual]) -> Offspring:
        name = self._breeder()
        self.calls += 1
        out = self.members[name](inds)
        children = out if isinstance(out, list) else [out]
        for child in children:
            child.state = {**(child.state or {}), KEY: name}
        return out

    def observe(self, individual: Individual) -> None:
        """Forward to the members; count the race and decide it once it is run."""
        for member in self.members.values():
            if getattr(member, "observes", False):
                member.observe(individual)
        self.seen += 1
        bred_by = (individual.state or {}).get(KEY)
        loss = individual.loss
        ok = individual.status == "ok" and loss is not None and math.isfinite(loss)
        if bred_by in self.losses and ok:
            self.losses[bred_by].append(float(loss))
        if self.racing and self.seen >= self.choice.race:
            self._decide()

    def _score(self, name: str) -> tuple[float, float]:
        best = sorted(self.losses[name])[:3]
        if not best:
            return math.inf, math.inf
        return best[0], sum(best) / len(best)

    def _decide(self) -> None:
        self.racing = False
        self.switched_at = self.seen
        first, challenger = self.order[0], self.order[1]
        a, b = self._score(first), self._score(challenger)
        self.leader = challenger if b[0] < a[0] and b[1] < a[1] else first
        verb = "switches to" if self.leader != first else "keeps"
        log.info(
            "auto %s %s after %d evaluations (best %s: %.6g, %s: %.6g)",
            verb,
            self.leader,
            self.seen,
            first,
            a[0],
            challenger,
            b[0],
        )


def auto_propagator(
    space: SearchSpace, options: AutoOptions, rng: random.Random, run: RunFacts
) -> Propagator:
    """The registry's ``auto``: the rule table's choice for ``run``, with its race."""
    from propulate.propagators.registry import build_propagator

    choice = choose(run, options.race)
    names = [n for n in (choice.first, choice.challenger, choice.then) if n is not None]
    members = {n: build_propagator(n, space, rng, run) for n in names}
    if len(members) == 1:
        return members[choice.first]  # nothing to race: the member itself, at its own speed
    return Auto(space, members, choice, rng)
