"""Migration between islands: choosing emigrants, sending them, taking immigrants in.

With pollination, emigrants are copies and one worker of the target island (the *decider*)
deactivates as many of its island's individuals as arrive; with real migration, emigrants leave
their island and only the worker responsible for an individual may send it away.

Emigrants go to the decider of each target island alone, which passes them on to its island's
peers with the next individuals it shares, together with what it deactivated to make room
(:meth:`Migration.forwarded`). Sending them to every worker of every target island, and each
decider's deactivations to its peers in messages of their own, cost about 110 messages per
evaluation with 32 islands of 4 (emigration at 0.7 per step), more than 2 cores could receive:
the receivers fell behind and took most migrants in only at the end of the run.

Emigrants are the best by loss (the default :class:`~propulate.propagators.selection.SelectMin`);
with several declared objectives, that default picks them by non-dominated front and crowding
distance instead, ties at random (:class:`~propulate.propagators.pareto_selection.ParetoSelect`), so
that a front's extremes in the other objectives travel too, not only the best in the first
(one emigrant per event: either end of the island's front). They are looked for among the
members of the worker's Pareto pool (the GA's ``pop_size`` best of the island by the same
order), so an event costs ``O(pop_size)``; without a pool, or with too few of its members this
worker may send, among the whole island. With weights the records' loss is
the weighted sum the run minimises, and the emigrants are chosen by it.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from typing import Any

from propulate.engine.config import EngineConfig
from propulate.engine.messaging import DEACT, MIG, Messenger
from propulate.engine.migration_log import MigrationLog
from propulate.engine.topology import IslandLayout
from propulate.engine.wire import from_wire, wire_fields
from propulate.population import Individual, Population
from propulate.propagators.base import Propagator
from propulate.propagators.pareto_selection import ParetoPool, ParetoSelect
from propulate.propagators.selection import SelectMin


def _closed(ind: Individual) -> None:
    raise RuntimeError("an individual arrived after the migration was closed")


def _is_select_min(prop: Any) -> bool:
    return prop is SelectMin or isinstance(prop, SelectMin)


class _Selectors:
    """Selection propagators by number of picks: a class is instantiated once per ``k``
    (instances are used as they are)."""

    def __init__(self, prop: Any) -> None:
        self.prop = prop
        self._made: dict[int, Propagator] = {}

    def __call__(self, k: int) -> Propagator:
        if not isinstance(self.prop, type):
            return self.prop
        made = self._made.get(k)
        if made is None:
            made = self._made[k] = self.prop(k)
        return made


class Migration:
    """One worker's side of migration.

    Parameters
    ----------
    config : EngineConfig
        Topology, propagators, pollination.
    layout : IslandLayout
        Workers per island.
    index, island, island_index : int
        The worker's index, its island and its index within the island.
    population : Population
        The worker's view.
    messenger : Messenger
        Its channel to the other workers.
    rng : random.Random
        Randomness of the decider choice.
    add : callable
        How an arriving individual joins the worker's view (population and seen set).
    forward : callable, optional
        ``forward(wires, uids)``: pass immigrants this worker took in as their island's decider
        (as sent, with the island and decider set) and the uids it deactivated for them on to
        the island's peers (with the next individuals it shares; :meth:`forwarded` there).
    log : MigrationLog, optional
        Where the worker records what migration did to its view (for an exact resume).
    pool : ParetoPool, optional
        The worker's Pareto pool (the Pareto GA's, :func:`~propulate.propagators.pareto_selection.
        pareto_pool`): with several objectives the emigrants are the best of its members by
        front and crowding, without scanning the whole island.
    """

    def __init__(
        self,
        config: EngineConfig,
        layout: IslandLayout,
        index: int,
        island: int,
        island_index: int,
        population: Population,
        messenger: Messenger,
        rng: random.Random,
        add: Callable[[Individual], None],
        log: MigrationLog | None = None,
        pool: ParetoPool | None = None,
        forward: Callable[[list[tuple[Any, ...]], list[str]], None] | None = None,
    ) -> None:
        self.config, self.layout, self.population = config, layout, population
        self.island, self.island_index, self.messenger, self.rng = (
            island,
            island_index,
            messenger,
            rng,
        )
        self.peers = layout.peers(index)
        self.add = add
        self.forward = forward
        #: Emigration events that sent emigrants, and the messages they took.
        self.emigrations = self.messages = 0
        self.log = log
        #: The island's first worker logs every migration event of its island (it sees them
        #: all); the others log only the deactivations they decide (see migration_log).
        self.recorder = island_index == 0
        self._emigration = _Selectors(config.emigration_propagator)
        self._immigration = _Selectors(config.immigration_propagator)
        declared = config.objectives
        several = declared is not None and not declared.scalar
        #: Several objectives without weights and the default emigration: emigrants by front
        #: and crowding (with weights the loss is their weighted sum: by loss).
        self.pareto = several and _is_select_min(config.emigration_propagator)
        #: The Pareto GA's pool of this worker's island, where those emigrants are looked for.
        self.pool = pool

    def _pareto_emigrants(self, view: Any, k: int) -> list[Individual] | None:
        """``k`` emigrants by front and crowding (``None`` when the worker may send fewer):
        drawn from the Pareto pool when it holds enough of this island's active individuals
        this worker may send (``O(pop_size)``), else from the whole island view."""
        assert self.config.objectives is not None
        pick = ParetoSelect(k, self.config.objectives, self.rng)
        every = self.config.pollination
        if self.pool is not None:
            held = [
                m
                for m in self.pool.members
                if m.active
                and m.island == self.island
                and (every or m.current == self.island_index)
            ]
            if len(held) >= k:
                return pick(held)
        eligible = [i for i in view if every or i.current == self.island_index]
        return pick(eligible) if len(eligible) >= k else None

    def emigrate(self) -> None:
        """Send emigrants to every target island of the topology.

        Targets that receive the same emigrants (the default: the island's best, which
        :class:`SelectMin` picks alike for every target) get one message, pickled once, that
        names each target's decider.
        """
        cfg, pop, layout = self.config, self.population, self.layout
        view = pop.active(self.island)
        best_first = _is_select_min(cfg.emigration_propagator)
        picked: dict[int, list[Individual]] = {}  # SelectMin's picks by k, alike for all targets
        groups: dict[int, tuple[list[Individual], dict[int, int]]] = {}  # by id of the picks
        for target in range(layout.num_islands):
            k = int(layout.topology[self.island, target])
            if target == self.island or k <= 0:
                continue
            if self.pareto:
                chosen = self._pareto_emigrants(view, k)
                if chosen is None:
                    continue
                emigrants = chosen
            elif best_first and k in picked:
                emigrants = picked[k]
            else:
                if cfg.pollination:
                    eligible: Any = view
                else:  # real migration: a worker moves only the individuals it is responsible for
                    mine = (i for i in view if i.current == self.island_index)
                    # SelectMin needs only the first k of the loss-ordered view, not a full scan.
                    eligible = list(itertools.islice(mine, k)) if best_first else list(mine)
                if len(eligible) < k:
                    continue
                emigrants = self._emigration(k)(eligible)
                if best_first:
                    picked[k] = emigrants
            decider = self.rng.randrange(len(layout.members[target]))
            groups.setdefault(id(emigrants), (emigrants, {}))[1][target] = decider
        for emigrants, deciders in groups.values():
            wires = [wire_fields(e, e.migration_steps + 1) for e in emigrants]
            dests = [layout.members[target][d] for target, d in deciders.items()]
            self.messenger.send_many(dests, (MIG, wires, deciders))
            self.messages += len(dests)
            if not cfg.pollination:
                for e in emigrants:
                    pop.deactivate_individual(e)
                uids = [e.uid for e in emigrants]
                if self.log is not None:
                    self.log.deactivated(self.island, uids)
                if self.peers:
                    self.messenger.send_many(self.peers, (DEACT, uids))
        self.emigrations += bool(groups)
        self.flush_log()

    def immigrate(self, wires: list[tuple[Any, ...]], deciders: dict[int, int]) -> None:
        """Take arriving emigrants in as this island's decider (under pollination, make room
        first), and pass them on to the island's peers.

        ``deciders`` maps each target island of the message to its deciding worker.
        """
        pop = self.population
        decider = deciders[self.island]
        inds = [from_wire(w) for w in wires]
        uids: list[str] = []
        if self.config.pollination and decider == self.island_index:
            view = pop.active(self.island)
            k = min(len(inds), len(view))
            if k:
                replaced = self._immigration(k)(view)
                for r in replaced:
                    pop.deactivate_individual(r)
                uids = [r.uid for r in replaced]  # type: ignore[misc]
                if self.log is not None:
                    self.log.deactivated(self.island, uids)
        for ind in inds:
            ind.island, ind.current = self.island, decider
        self._arrive(inds)
        if self.peers and self.forward is not None:
            self.forward([wire_fields(ind) for ind in inds], uids)

    def forwarded(self, wires: list[tuple[Any, ...]], uids: list[str]) -> None:
        """Immigrants and the deactivations made for them, passed on by the island's decider."""
        if uids:
            self.deactivate(uids)
        self._arrive([from_wire(w) for w in wires])  # island and decider set by the decider

    def _arrive(self, inds: list[Individual]) -> None:
        for ind in inds:
            self.add(ind)
            if self.recorder and self.log is not None:
                self.log.arrived(ind)

    def deactivate(self, uids: list[str]) -> None:
        """A peer took individuals of this island out of breeding: do so in this view too."""
        for uid in uids:
            self.population.deactivate(uid)
        if self.recorder and self.log is not None:
            self.log.deactivated(self.island, uids)

    def flush_log(self) -> None:
        """Write the migration events taken in since the last flush (one write)."""
        if self.log is not None:
            self.log.flush()

    def close(self) -> None:
        """Close the migration log and let go of the callbacks. They are the worker's methods:
        kept, they would make the worker, and the population it holds, a reference cycle that
        only a full pass of the garbage collector frees once the run is over."""
        if self.log is not None:
            self.log.close()
        self.add, self.forward = _closed, None
