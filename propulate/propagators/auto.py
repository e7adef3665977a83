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

Where the table says so, a *landscape probe* (:mod:`propulate.propagators.landscape`) comes first:
the workers of an island evaluate the same few dozen points between them, each child named
``{"auto": "probe", "probe": [island, index]}``. The design is cut into one stretch per worker of
the island; a worker proposes its own stretch, then the others' from the end backwards (towards
the worker proposing them forwards), skipping the points it has seen evaluated, so that a point
is evaluated twice only when its result is still on its way.
Once a worker has seen them all (or twice as many evaluations as the probe has points, when some
are lost), it judges the function: separable with many local minima, and ``choice.probe_pick``
breeds the rest of the run without a race; otherwise the race (if any) starts then. A worker
that has nothing of the probe left to propose breeds from the first choice meanwhile.
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
from propulate.propagators.landscape import LandscapeProbe, Verdict
from propulate.space import SearchSpace

if TYPE_CHECKING:
    from propulate.propagators.registry import AutoOptions

log = logging.getLogger("propulate")

#: Key of ``Individual.state`` naming the member that bred a child.
KEY = "auto"
#: ``Individual.state[KEY]`` of a landscape probe's point; ``state[PROBE]`` is
#: ``[island, index]``.
PROBE = "probe"


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
    run : RunFacts
        The run's facts: its seed (the landscape probe's design derives from it and the
        island), workers, islands and ranks per worker (a worker's stretch of the design).
    """

    def __init__(
        self,
        space: SearchSpace,
        members: dict[str, Propagator],
        choice: Choice,
        rng: random.Random,
        run: RunFacts | None = None,
    ) -> None:
        super().__init__(-1, 1, rng)
        self.space = space
        self.members = members
        self.choice = choice
        self.run = run if run is not None else RunFacts()
        self.order = [n for n in (choice.first, choice.challenger) if n is not None]
        self.polishing = False
        self.probing = choice.probe > 0 and choice.probe_pick in members
        self.racing = len(self.order) > 1 and choice.race > 0 and not self.probing
        self.race_end = choice.race
        self.leader = choice.first
        self.island = 0
        self.rank = 0
        self.calls = 0
        self.seen = 0
        self.losses: dict[str, list[float]] = {n: [] for n in self.order}
        self.switched_at: int | None = None
        self._probe: LandscapeProbe | None = None
        self.probe_losses: dict[int, float | None] = {}
        self._proposed: set[int] = set()
        self._order: list[int] = []
        self._cursor = 0
        self.verdict: Verdict | None = None
        #: The members that observe: all of them until the probe and the race are decided,
        #: then only those that still breed (the leader and the method that polishes).
        self.listening = [m for m in members.values() if getattr(m, "observes", False)]
        if not self.probing and not self.racing:
            self._settle()

    @property
    def observes(self) -> bool:
        """Always: the race counts every evaluation."""
        return True

    @property
    def shares_design(self) -> bool:
        """While the landscape probe runs: the island's workers split its design."""
        return self.probing

    def bind(self, island: int, rank: int) -> None:
        """Tell every member where it runs."""
        self.island, self.rank = int(island), int(rank)
        self._probe, self._order, self._cursor = None, [], 0  # the island's, the rank's
        for member in self.members.values():
            bind = getattr(member, "bind", None)
            if bind is not None:
                bind(island, rank)

    @property
    def probe(self) -> LandscapeProbe:
        """The landscape probe's design of this worker's island (the same on all its workers)."""
        if self._probe is None:
            seed = self.run.seed * 1_000_003 + 7_919 * self.island
            self._probe = LandscapeProbe(self.space, seed)
        return self._probe

    def _probe_order(self) -> list[int]:
        """This worker's order through the design: its own stretch (the island's workers split
        the design evenly), then the others' from the end backwards."""
        if not self._order:
            run, n = self.run, len(self.probe)
            size = max(run.workers // max(run.islands, 1), 1)
            slot = (self.rank // max(run.ranks_per_worker, 1)) % size  # islands are contiguous
            start, end = slot * n // size, (slot + 1) * n // size
            self._order = list(range(start, end)) + [
                (start - 1 - k) % n for k in range(n - (end - start))
            ]
        return self._order

    def _next_probe(self) -> int | None:
        """The next point of the probe, in this worker's order, neither seen evaluated nor
        proposed here (``None``: none is left)."""
        order = self._probe_order()
        while self._cursor < len(order):
            j = order[self._cursor]
            self._cursor += 1
            if j not in self.probe_losses and j not in self._proposed:
                return j
        return None

    def _breeder(self) -> str:
        if self.probing:
            return self.choice.first
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
        if self.probing:
            j = self._next_probe()
            if j is not None:
                self._proposed.add(j)
                self.calls += 1
                child = Individual(self.probe.params(j))
                child.state = {KEY: PROBE, PROBE: [self.island, j]}
                return child
        name = self._breeder()
        self.calls += 1
        out = self.members[name](inds)
        children = out if isinstance(out, list) else [out]
        for child in children:
            child.state = {**(child.state or {}), KEY: name}
        return out

    def observe(self, individual: Individual) -> None:
        """Forward to the members; count the race and decide it once it is run."""
        for member in self.listening:
            member.observe(individual)
        self.seen += 1
        bred_by = (individual.state or {}).get(KEY)
        loss = individual.loss
        ok = individual.status == "ok" and loss is not None and math.isfinite(loss)
        if bred_by in self.losses and ok:
            self.losses[bred_by].append(float(loss))
        if self.probing:
            where = (individual.state or {}).get(PROBE)
            if bred_by == PROBE and isinstance(where, list) and len(where) == 2:
                island, j = where
                if island == self.island and isinstance(j, int) and 0 <= j < len(self.probe):
                    self.probe_losses[j] = float(loss) if ok else None
            if len(self.probe_losses) >= len(self.probe) or self.seen >= 2 * len(self.probe):
                self._judge()
        elif self.racing and self.seen >= self.race_end:
            self._decide()

    def _settle(self) -> None:
        """Only the leader and the method that polishes breed from now on: only they observe."""
        breeding = [self.members[n] for n in (self.leader, self.choice.then) if n in self.members]
        self.listening = [m for m in self.listening if any(m is b for b in breeding)]

    def _judge(self) -> None:
        """End the probe: its pick breeds on if the function is separable and multimodal, else
        the race starts (or the first choice breeds on)."""
        self.probing = False
        self.verdict = self.probe.verdict(self.probe_losses)
        pick = self.choice.probe_pick
        if self.verdict.separable_multimodal and pick is not None:
            self.leader = pick
            self.switched_at = self.seen
            self._settle()
            verb = "keeps" if pick == self.choice.first else "switches to"
            log.info(
                "auto probed the landscape over %d evaluations: %s; %s %s",
                self.seen,
                self.verdict.describe(),
                verb,
                pick,
            )
            return
        self.racing = len(self.order) > 1 and self.choice.race > 0
        self.race_end = self.seen + self.choice.race
        if not self.racing:
            self._settle()
        then = f"races {self.order[1]}" if self.racing else f"keeps {self.leader}"
        log.info(
            "auto probed the landscape over %d evaluations: %s; %s",
            self.seen,
            self.verdict.describe(),
            then,
        )

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
        self._settle()
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
    names = [
        n
        for n in (choice.first, choice.challenger, choice.then, choice.probe_pick)
        if n is not None
    ]
    members = {n: build_propagator(n, space, rng, run) for n in names}
    if len(members) == 1:
        return members[choice.first]  # nothing to race: the member itself, at its own speed
    return Auto(space, members, choice, rng, run)
