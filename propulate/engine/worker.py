"""The asynchronous worker loop: breed, evaluate, log, share, migrate; no barrier.

Each worker (one MPI rank, or a group of ``ranks_per_worker`` ranks led by its first rank)
repeats, until a stop condition holds:

1. claim an evaluation from the global budget (if any); breed one individual from its current
   view of the island (a random one while the island has fewer than ``pop_size``), bred again
   or drawn at random when it was seen before (:mod:`propulate.engine.breeder`);
2. evaluate it (:mod:`propulate.engine.evaluation`: a failure -- exception, NaN, inf, timeout
   -- is recorded with its traceback, never bred from), append the record to its log file and
   send the individual to the island's other workers;
3. receive whatever has arrived (individuals, emigrants, deactivations, stop messages);
4. with the migration probability, send emigrants to the target islands.

Stop conditions: the worker's generations, the global budget, the time limit (a running
evaluation is interrupted), a stop signal (SIGTERM, SIGINT, SIGUSR1; a running evaluation is
interrupted), an exhausted finite space, and failures: a worker whose last ``failure_limit``
evaluations all failed (status ``failed`` or ``timeout``) stops the whole run with stop reason
``"failures"`` -- an objective that always fails is a broken objective, not a hard problem.
Runs with occasional failures go on. ``failure_limit=0`` disables the rule.

Termination needs no barrier either (:mod:`propulate.engine.termination`). Where the time goes
is added up per phase of the loop (:mod:`propulate.engine.phases`).
"""

from __future__ import annotations

import gc
import logging
import math
import random
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from mpi4py import MPI

from propulate.engine.breeder import Breeder
from propulate.engine.budget import EvaluationBudget
from propulate.engine.config import EngineConfig
from propulate.engine.evaluation import Evaluator, neighbour_losses
from propulate.engine.failures import FailureRule
from propulate.engine.members import serve_evaluations
from propulate.engine.messaging import DEACT, DONE, IND, MIG, SEEN, STOP, Messenger
from propulate.engine.migration import Migration
from propulate.engine.migration_log import MigrationLog, replay
from propulate.engine.phases import PhaseTimes
from propulate.engine.progress_lines import report_progress
from propulate.engine.signals import StopFlag
from propulate.engine.steps import StepSync
from propulate.engine.termination import drain
from propulate.engine.topology import IslandLayout
from propulate.engine.wire import from_record, from_wire, wire_fields
from propulate.population import Individual, Population
from propulate.propagators.base import Propagator
from propulate.propagators.pareto_selection import pareto_pool
from propulate.runs.log import EvaluationLog, iter_records, new_session_id
from propulate.runs.status import INTERRUPTED

__all__ = ["EngineConfig", "Worker"]

log = logging.getLogger("propulate")

#: Stop reasons that stop every other worker too.
ABORTING = ("signal", "failures")
#: Seconds a worker may hold its evaluated individuals before it sends them to its island's
#: peers. An evaluation that takes longer is sent as soon as it is done; faster ones go out
#: together, one message per window (at most :data:`SHARE_BATCH` individuals), so per
#: evaluation the sender pickles and sends, and every peer probes and receives, a fraction of
#: a message. A peer breeds from a view at most this much older than without the window.
SHARE_WINDOW = 1e-3
#: Most individuals in one message to the peers.
SHARE_BATCH = 64
#: A worker moves what it holds out of the garbage collector's way whenever its population
#: has grown by this share since the last time (:meth:`Worker._settle`).
SETTLE_GROWTH = 0.25
#: ... and by at least this many individuals.
SETTLE_MIN = 5_000
#: Seconds between two looks for arrived messages before breeding: a worker whose steps are
#: faster looks every few steps (a look that finds nothing costs two probes of MPI), one
#: whose evaluations take longer looks before every child, as it always did.
POLL_INTERVAL = SHARE_WINDOW / 4


class Worker:
    """One worker of an asynchronous island-model run (all ranks construct one).

    Construction is collective. A leader rank loads its island's earlier records (resume) here,
    so :attr:`population` holds them before :meth:`run`.

    Parameters
    ----------
    loss_fn : callable
        ``loss_fn(params) -> float`` (or ``loss_fn(params, comm)`` with several ranks per
        worker); see :mod:`propulate.engine.evaluation` for failures, timeouts and the optional
        ``confirm`` method.
    propagator : Propagator
        Breeds one individual from the island's active individuals (ordered by loss).
    rng : random.Random
        Randomness of this rank's migration decisions and fallback draws.
    config : EngineConfig
        Stopping criteria, island model, logging.
    comm : MPI.Comm
        All ranks of the run.
    """

    def __init__(
        self,
        loss_fn: Callable[..., Any],
        propagator: Propagator,
        rng: random.Random,
        config: EngineConfig,
        comm: MPI.Comm = MPI.COMM_WORLD,
    ) -> None:
        config.check()
        self.loss_fn, self.propagator, self.rng, self.config = loss_fn, propagator, rng, config
        self.world = comm
        rank, size, rpw = comm.Get_rank(), comm.Get_size(), config.ranks_per_worker
        if size % rpw:
            raise ValueError(f"{size} ranks cannot form workers of {rpw} ranks each")
        self.worker_comm = comm.Split(rank // rpw, rank)
        self.is_leader = self.worker_comm.Get_rank() == 0
        self.leaders = comm.Split(0 if self.is_leader else MPI.UNDEFINED, rank)
        self.session = comm.bcast(new_session_id() if rank == 0 else None, root=0)
        self.rank = rank
        self.population = Population(config.num_islands)
        self.evaluations = 0
        self.generation = 0
        self.stop_reason: str | None = None
        self.wall_time = 0.0
        self.resumed = 0
        self.failures = FailureRule(config.failure_limit, rank)
        self._np_rng = np.random.default_rng(rng.getrandbits(64))
        space = config.space if config.space is not None else getattr(propagator, "space", None)
        self.breeder = Breeder(propagator, space, config.task, self._np_rng)
        listeners = [p for p in (propagator, config.pruner) if getattr(p, "observes", False)]
        self._listeners = [p.observe for p in listeners]
        self._seeds: list[Individual] = []
        self._outbox: list[tuple[Any, ...]] = []  # evaluated here, not yet sent to the peers
        # immigrants taken in as their island's decider, and the uids deactivated for them,
        # not yet passed on to the peers (they go with the next share)
        self._passing: tuple[list[tuple[Any, ...]], list[str]] = ([], [])
        self._shared_at = 0.0
        self._polled_at = 0.0
        self._settle_at: float = SETTLE_MIN
        self._frozen = False
        self.phases = PhaseTimes()
        if self.is_leader:
            self.layout = IslandLayout(
                self.leaders.Get_size(),
                config.num_islands,
                config.island_sizes,
                config.migration_topology,
            )
            self.index = self.leaders.Get_rank()
            self.island = self.layout.island_of[self.index]
            self.peers = self.layout.peers(self.index)
            self.others = [w for w in range(self.layout.workers) if w != self.index]
            self.island_index = self.layout.members[self.island].index(self.index)
            bind = getattr(propagator, "bind", None)  # where it runs, before any observe
            if bind is not None:
                bind(self.island, self.rank)
            self.resumed = self._resume()
            workers = self.layout.workers
            self._seeds = [
                Individual(dict(params))
                for i, params in enumerate(config.initial)
                if i % workers == self.index
            ]

    # ----------------------------------------------------------------- set-up
    def _resume(self) -> int:
        """Load this island's earlier records; returns the number of records of the run."""
        total, last_gen = 0, -1
        for rec in iter_records(self.config.checkpoint_path):
            total += 1
            if rec.get("rank") == self.rank:
                last_gen = max(last_gen, int(rec.get("generation", -1)))
            ind = from_record(rec, self.config.num_islands)
            self.breeder.seen.add(ind)  # other islands' configurations count as seen too
            if ind.island == self.island:
                ind.current = self.rng.randrange(len(self.layout.members[self.island]))
                self.population.add(ind)
                for listener in self._listeners:
                    listener(ind)
        replay(self.config.checkpoint_path, self.island, self.population, self._add)
        self.generation = last_gen + 1
        if total:
            # A fresh random stream, so a resumed run does not replay the first run's draws.
            self.rng.seed(hash((self.rng.getrandbits(64), total, self.rank)))
        return total

    def _add(self, ind: Individual) -> None:
        """Take in an evaluated individual (own, a peer's, an immigrant)."""
        if self.population.add(ind):
            for listener in self._listeners:
                listener(ind)
        self.breeder.seen.add(ind)

    # ----------------------------------------------------------------- the loop
    def run(self, logging_interval: int = 10, debug: int = -1) -> None:
        """Run until a stop condition holds, then drain; every rank must call it."""
        t0 = time.monotonic()
        if not self.is_leader:
            serve_evaluations(self.worker_comm, self.loss_fn)
            self.wall_time = time.monotonic() - t0
            return
        cfg = self.config
        if self.resumed and self.rank == 0:
            log.info("resuming from %d evaluations in %s", self.resumed, cfg.checkpoint_path)
        self.budget = EvaluationBudget(self.leaders, cfg.max_evaluations, self.resumed)
        self.messenger = Messenger(self.leaders)
        self.migration = Migration(
            cfg,
            self.layout,
            self.index,
            self.island,
            self.island_index,
            self.population,
            self.messenger,
            self.rng,
            self._add,
            MigrationLog(cfg.checkpoint_path, self.rank, self.session),
            pool=pareto_pool(self.propagator),
            forward=self._forward,
        )
        self.members = Messenger(self.worker_comm) if cfg.ranks_per_worker > 1 else None
        self.stopped_from: set[int] = set()
        self.done_from: set[int] = set()
        self.abort: str | None = None
        self.logger = EvaluationLog(cfg.checkpoint_path, self.rank, self.session, cfg.meta)
        self._t0 = self._progress_at = t0
        self.deadline = None if cfg.time_limit is None else t0 + cfg.time_limit
        try:
            with StopFlag() as flag:
                sync = StepSync(self.worker_comm) if self.members and cfg.pruner else None
                self.evaluator = Evaluator(
                    self.loss_fn,
                    flag,
                    cfg.eval_timeout,
                    self.deadline,
                    cfg.pruner,
                    sync,
                    cfg.objectives,
                )
                try:
                    reason = self._loop(flag, logging_interval, debug)
                finally:
                    self.evaluator.close()
                self.stop_reason = reason
                self.logger.sync_soon()  # its last record is written: to disk during the drain
                self._share()  # before STOP: the peers get every individual first
                self.budget.give_back()  # a slot taken ahead is no evaluation
                with self.budget.serving():
                    abort = reason if reason in ABORTING else None
                    drain(
                        self.messenger,
                        self.others,
                        self._receive_passing_on,
                        self.stopped_from,
                        self.done_from,
                        abort,
                    )
        finally:
            self.logger.close()
            self.migration.close()
            if self._frozen:
                gc.unfreeze()  # back to the collector: the caller's program goes on
        if self.members is not None:
            self.members.send_many(range(1, self.worker_comm.Get_size()), ("stop",))
            self.members.flush()
        self.wall_time = time.monotonic() - t0
        if self.rank == 0:
            self._report_progress(final=True)
        self.budget.free()

    def _loop(self, flag: StopFlag, logging_interval: int, debug: int) -> str:
        cfg = self.config
        while (reason := self._stop_reason(flag)) is None:
            reason = self._step()
            if reason is not None:
                return reason
            if debug >= 1 and self.generation % max(logging_interval, 1) == 0:
                best = self.population.best
                log.info(
                    "island %d worker %d generation %d: best loss %s",
                    self.island,
                    self.island_index,
                    self.generation,
                    best and best.loss,
                )
            if self.rank == 0 and time.monotonic() - self._progress_at >= cfg.progress_interval:
                self._report_progress()
        return reason

    def _stop_reason(self, flag: StopFlag) -> str | None:
        cfg = self.config
        if self.abort is not None:
            return self.abort
        if flag.raised:
            return "signal"
        if cfg.generations is not None and 0 <= cfg.generations <= self.generation:
            return "generations"
        if self.deadline is not None and time.monotonic() >= self.deadline:
            return "time limit"
        t = time.perf_counter()
        claimed = self.budget.claim(self._idle)
        self.phases.seconds["claim"] += time.perf_counter() - t
        return None if claimed else "budget"

    def _step(self) -> str | None:
        """One generation; returns a stop reason when it ends the run."""
        clock = time.perf_counter
        t0 = clock()
        # One by one, as designs the island's workers split need (the initial population,
        # auto's landscape probe: a point is evaluated twice if its result is on its way).
        prompt = bool(self._seeds) or getattr(self.propagator, "shares_design", False)
        if prompt or t0 - self._polled_at >= POLL_INTERVAL:
            self._receive()  # the freshest view to breed from (and the peers' latest children)
            self._polled_at = t0
        t1 = clock()
        ind = self._seed()
        if ind is None:
            ind = self.breeder(self.population.active(self.island))
        if ind is None:
            return "space exhausted"
        if self.peers and self.breeder.seen.size is not None:
            # In a finite space peers easily breed the same child at once: look at what they
            # announced meanwhile, and announce this child before evaluating it.
            self._receive()
            if (
                ind in self.breeder.seen
                and (again := self.breeder(self.population.active(self.island))) is not None
            ):
                ind = again
            self.messenger.send_many(self.peers, (SEEN, dict(ind)))
        ind.generation, ind.rank, ind.island = self.generation, self.rank, self.island
        ind.current = self.island_index
        t2 = clock()
        reason = self._evaluate(ind)
        t3 = clock()
        self._add(ind)
        if self.peers:
            self._outbox.append(wire_fields(ind))
            if (
                len(self._outbox) >= SHARE_BATCH
                or prompt
                or clock() - self._shared_at >= SHARE_WINDOW
            ):
                self._share()
        # (no receive here: the next step starts with one, right before it breeds)
        t4 = clock()
        if self.layout.num_islands > 1 and self.rng.random() < self.config.migration_probability:
            # An emigrant may be one of the individuals not yet shared: the peers get it from
            # this worker first, so that where it comes back, it is held as it was evaluated.
            if self._unshared:
                self._share()
            self.migration.emigrate()
        self.phases.step(t0, t1, t2, t3, t4, clock(), ind.evalperiod or 0.0)
        self.generation += 1
        if len(self.population) >= self._settle_at:
            self._settle()
        return reason

    def _settle(self) -> None:
        """Freeze the objects alive now (the population, above all) out of the cyclic garbage
        collector's passes (``gc.freeze``), after collecting the young generations. The
        population only grows and holds no cycles, yet every full collection walked all of it:
        at 100,000 individuals on 2 ranks that was 15 % of a zero-cost run. ``run`` unfreezes
        them at its end. A program that freezes objects itself is left alone."""
        if not self._frozen and gc.get_freeze_count():
            self._settle_at = math.inf  # the caller's own frozen objects: not ours to unfreeze
            return
        # the first time a full collection: what the program left in cycles before the run
        # is freed, not frozen until the run ends
        gc.collect(1 if self._frozen else 2)
        gc.freeze()
        self._frozen = True
        n = len(self.population)
        self._settle_at = n + max(SETTLE_MIN, int(SETTLE_GROWTH * n))

    def _seed(self) -> Individual | None:
        """This worker's next initial configuration not yet evaluated (None when none is left)."""
        seen = self.breeder.seen
        while self._seeds:
            ind = self._seeds.pop(0)
            # without a space nothing is keyed: a resumed run cannot tell, so it skips them
            if ind not in seen and (seen.key(ind) is not None or not self.resumed):
                return ind
        return None

    def _neighbours(self, ind: Individual) -> Callable[[], list[float]] | None:
        """The losses of the island's configurations nearest to ``ind``, computed when asked."""
        return neighbour_losses(self.config.space, self.population, self.island, ind)

    def _evaluate(self, ind: Individual) -> str | None:
        """Evaluate and record ``ind``; returns a stop reason (interruption, failures)."""
        comm = None
        if self.members is not None:
            pruning = self.config.pruner is not None
            self.members.send_many(
                range(1, self.worker_comm.Get_size()), ("eval", dict(ind), pruning)
            )
            comm = self.worker_comm
        best = self.population.best
        gens = self.config.generations
        if gens is None or gens < 0 or self.generation + 1 < gens:
            self.budget.prefetch()  # the next claim completes while this evaluation runs
        with self.budget.serving():
            out = self.evaluator(
                ind,
                comm,
                None if best is None else best.loss,
                self._neighbours(ind) if self.evaluator.confirm else None,
            )
        ind.uid = f"{self.session}:{self.rank}:{self.logger.seq}"
        self.logger.record(
            ind, out, island=self.island, generation=self.generation, state=ind.state
        )
        ind.loss = out.loss if out.ok else float("inf")
        ind.status, ind.error = out.status, out.error
        ind.curve = out.curve or None
        ind.objectives = out.values
        ind.evaltime, ind.evalperiod = out.start, out.seconds
        self.evaluations += 1
        if out.status == INTERRUPTED:
            return "time limit" if "time limit" in (out.error or "") else "signal"
        return self.failures.after(out)

    # ----------------------------------------------------------------- messages
    def _share(self) -> None:
        """Send the individuals evaluated since the last share to the island's peers, with
        the immigrants to pass on."""
        wires, uids = self._passing
        if wires or uids:
            self.messenger.send_many(self.peers, (IND, self._outbox, wires, uids))
            self._outbox, self._passing = [], ([], [])
        elif self._outbox:
            self.messenger.send_many(self.peers, (IND, self._outbox))
            self._outbox = []
        self._shared_at = time.perf_counter()

    @property
    def _unshared(self) -> bool:
        """Whether anything waits to go to the peers (own individuals, immigrants to pass on)."""
        return bool(self._outbox or self._passing[0] or self._passing[1])

    def _forward(self, wires: list[tuple[Any, ...]], uids: list[str]) -> None:
        """Pass immigrants on to the peers with the next share (:class:`Migration`)."""
        self._passing[0].extend(wires)
        self._passing[1].extend(uids)

    def _receive_passing_on(self) -> int:
        """:meth:`_receive`, then pass on at once what arrived to pass on: while draining,
        before this worker's ``DONE``, there are no more shares."""
        n = self._receive()
        if self._unshared:
            self._share()
        return n

    def _idle(self) -> int:
        """What a worker does while it waits for a claim: share, then receive."""
        if self._unshared:
            self._share()
        return self._receive()

    def _receive(self) -> int:
        msgs = self.messenger.poll()
        for src, msg in msgs:
            kind = msg[0]
            if kind == IND:
                for wire in msg[1]:
                    self._add(from_wire(wire))
                if len(msg) > 2:
                    self.migration.forwarded(msg[2], msg[3])
            elif kind == MIG:
                self.migration.immigrate(msg[1], msg[2])
            elif kind == DEACT:
                self.migration.deactivate(msg[1])
            elif kind == STOP:
                self.stopped_from.add(src)
                if msg[1] and self.abort is None:
                    self.abort = str(msg[1])
            elif kind == SEEN:
                self.breeder.seen.add(msg[1])
            elif kind == DONE:
                self.done_from.add(src)
        if msgs:
            self.migration.flush_log()
        return len(msgs)

    # ----------------------------------------------------------------- helpers
    @property
    def first_error(self) -> tuple[float, str] | None:
        """When and what this worker's first failed evaluation was (None without one)."""
        return self.failures.first_error

    def _report_progress(self, final: bool = False) -> None:
        self._progress_at = time.monotonic()
        report_progress(self, self._t0, final)
