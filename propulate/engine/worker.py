"""The asynchronous worker loop: breed, evaluate, log, share, migrate; no barrier.

Each worker (one MPI rank, or a group of ``ranks_per_worker`` ranks led by its first rank)
repeats, until a stop condition holds:

1. claim an evaluation from the global budget (if any); breed one individual from its current
   view of the island (a random one while the island has fewer than ``pop_size``);
2. evaluate it (a failure -- exception, NaN, inf -- is recorded, never bred from), append the
   record to its log file and send the individual to the island's other workers;
3. receive whatever has arrived (individuals, emigrants, deactivations);
4. with the migration probability, send emigrants to the target islands.

Termination without barrier, in two phases over FIFO channels: a worker that stops breeding
sends ``STOP`` to every other worker and keeps receiving; once it has a ``STOP`` from everyone,
no more individuals or emigrants can reach it, so after handling what arrived it sends ``DONE``
and keeps receiving until it has a ``DONE`` from everyone. Then it holds the full population.
A ``STOP`` caused by a signal carries an abort flag that stops the receivers too.
"""

from __future__ import annotations

import itertools
import logging
import math
import random
import time
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from mpi4py import MPI

from propulate.engine.budget import EvaluationBudget
from propulate.engine.messaging import DEACT, DONE, IND, MIG, STOP, Backoff, Messenger
from propulate.engine.signals import StopFlag
from propulate.engine.topology import IslandLayout
from propulate.engine.wire import from_record, from_wire, to_wire
from propulate.history import EvaluationLog, iter_records, new_session_id
from propulate.population import Individual, Population
from propulate.propagators.base import Propagator
from propulate.propagators.selection import SelectMax, SelectMin
from propulate.space import SearchSpace

log = logging.getLogger("propulate")


@dataclass
class EngineConfig:
    """Everything that shapes a run besides the loss and the propagator.

    Attributes
    ----------
    checkpoint_path : Path
        Run directory: evaluation logs are appended under ``checkpoint_path/evals``; existing
        logs there are resumed from.
    generations : int or None
        Generations per worker (``None`` or negative: unlimited).
    max_evaluations : int or None
        Evaluations over all workers, resumed ones included.
    time_limit : float or None
        Wall-clock seconds after which no new evaluation starts.
    num_islands, island_sizes, migration_topology, migration_probability, pollination
        The island model (see :class:`propulate.Islands`).
    emigration_propagator, immigration_propagator
        Selection classes (or instances) choosing emigrants and the individuals they replace.
    ranks_per_worker : int
        MPI ranks per worker; the loss is then called as ``loss_fn(params, comm)``.
    space, task
        Search space and task for constraint checks of bred individuals (optional).
    meta : dict
        Fields written into every log record (``task``, ``run``, ``method``).
    progress_interval : float
        Seconds between progress lines on rank 0.
    """

    checkpoint_path: Path = Path(".")
    generations: int | None = None
    max_evaluations: int | None = None
    time_limit: float | None = None
    num_islands: int = 1
    island_sizes: list[int] | None = None
    migration_topology: np.ndarray | None = None
    migration_probability: float = 0.0
    pollination: bool = True
    emigration_propagator: Any = SelectMin
    immigration_propagator: Any = SelectMax
    ranks_per_worker: int = 1
    space: SearchSpace | None = None
    task: Mapping[str, Any] | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    progress_interval: float = 10.0

    def check(self) -> None:
        """Reject settings that cannot run."""
        unlimited = self.generations is None or self.generations < 0
        if unlimited and self.max_evaluations is None and self.time_limit is None:
            raise ValueError("no stopping criterion: set generations, max_evaluations or time_limit")
        if self.max_evaluations is not None and self.max_evaluations < 0:
            raise ValueError(f"max_evaluations must be >= 0, got {self.max_evaluations}")
        if self.time_limit is not None and self.time_limit <= 0:
            raise ValueError(f"time_limit must be positive, got {self.time_limit}")
        if not 0.0 <= self.migration_probability <= 1.0:
            raise ValueError("migration_probability must be in [0, 1]")
        if self.ranks_per_worker < 1:
            raise ValueError("ranks_per_worker must be >= 1")


def _selector(prop: Any, k: int) -> Propagator:
    """Instantiate a selection class for ``k`` picks (instances are used as they are)."""
    return prop(k) if isinstance(prop, type) else prop


def _is_select_min(prop: Any) -> bool:
    return prop is SelectMin or isinstance(prop, SelectMin)


def _call_loss(loss_fn: Callable[..., Any], ind: Individual, comm: MPI.Comm | None) -> float:
    out = loss_fn(ind) if comm is None else loss_fn(ind, comm)
    if isinstance(out, types.GeneratorType):  # Propulate 1.2 early-stopping style: last value
        last = None
        for last in out:  # noqa: B007
            pass
        out = last
    return float(out)  # type: ignore[arg-type]


class Worker:
    """One worker of an asynchronous island-model run (all ranks construct one).

    Parameters
    ----------
    loss_fn : callable
        ``loss_fn(params) -> float`` (or ``loss_fn(params, comm)`` with several ranks per worker).
    propagator : Propagator
        Breeds one individual from the island's active individuals (ordered by loss).
    rng : random.Random
        Randomness of this rank's migration decisions and constraint fallbacks.
    config : EngineConfig
        Stopping criteria, island model, logging.
    comm : MPI.Comm
        All ranks of the run.
    """

    def __init__(self, loss_fn: Callable[..., Any], propagator: Propagator, rng: random.Random,
                 config: EngineConfig, comm: MPI.Comm = MPI.COMM_WORLD) -> None:
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
        self._failed_here = 0
        self.wall_time = 0.0
        self._np_rng = np.random.default_rng(rng.getrandbits(64))
        if self.is_leader:
            self.layout = IslandLayout(
                self.leaders.Get_size(), config.num_islands, config.island_sizes,
                config.migration_topology,
            )
            self.index = self.leaders.Get_rank()
            self.island = self.layout.island_of[self.index]
            self.peers = self.layout.peers(self.index)
            self.others = [w for w in range(self.layout.workers) if w != self.index]
            self.island_index = self.layout.members[self.island].index(self.index)

    # ----------------------------------------------------------------- set-up
    def _resume(self) -> int:
        """Load this island's earlier records; returns the number of records of the run."""
        total, last_gen = 0, -1
        for rec in iter_records(self.config.checkpoint_path):
            total += 1
            if rec.get("rank") == self.rank:
                last_gen = max(last_gen, int(rec.get("generation", -1)))
            ind = from_record(rec, self.config.num_islands)
            if ind.island == self.island:
                ind.current = self.rng.randrange(len(self.layout.members[self.island]))
                self.population.add(ind)
        self.generation = last_gen + 1
        if total:
            # A fresh random stream, so a resumed run does not replay the first run's draws.
            self.rng.seed(hash((self.rng.getrandbits(64), total, self.rank)))
        return total

    # ----------------------------------------------------------------- the loop
    def run(self, logging_interval: int = 10, debug: int = -1) -> None:
        """Run until a stop condition holds, then drain; every rank must call it."""
        if not self.is_leader:
            self._serve_evaluations()
            return
        cfg = self.config
        resumed = self._resume()
        if resumed and self.rank == 0:
            log.info("resuming from %d evaluations in %s", resumed, cfg.checkpoint_path)
        self.budget = EvaluationBudget(self.leaders, cfg.max_evaluations, resumed)
        self.messenger = Messenger(self.leaders)
        self.members = Messenger(self.worker_comm) if cfg.ranks_per_worker > 1 else None
        self.stopped_from: set[int] = set()
        self.done_from: set[int] = set()
        self.abort = False
        self.logger = EvaluationLog(cfg.checkpoint_path, self.rank, self.session, cfg.meta)
        t0 = time.monotonic()
        self._progress_at, self._resumed = t0, resumed
        try:
            with StopFlag() as flag:
                while (reason := self._stop_reason(flag, t0)) is None:
                    self._step()
                    if debug >= 1 and self.generation % max(logging_interval, 1) == 0:
                        best = self.population.best
                        log.info("island %d worker %d generation %d: best loss %s", self.island,
                                 self.island_index, self.generation, best and best.loss)
                    if self.rank == 0 and time.monotonic() - self._progress_at >= cfg.progress_interval:
                        self._report_progress(t0)
                self.stop_reason = reason
                self._drain(abort=reason == "signal")
        finally:
            self.logger.close()
        if self.members is not None:
            self.members.send_many(range(1, self.worker_comm.Get_size()), ("stop",))
            self.members.flush()
        self.wall_time = time.monotonic() - t0
        if self.rank == 0:
            self._report_progress(t0, final=True)
        self.budget.free()

    def _stop_reason(self, flag: StopFlag, t0: float) -> str | None:
        cfg = self.config
        if flag.raised or self.abort:
            return "signal"
        if cfg.generations is not None and 0 <= cfg.generations <= self.generation:
            return "generations"
        if cfg.time_limit is not None and time.monotonic() - t0 >= cfg.time_limit:
            return "time limit"
        if not self.budget.claim():
            return "budget"
        return None

    def _step(self) -> None:
        ind = self._breed()
        ind.generation, ind.rank, ind.island = self.generation, self.rank, self.island
        ind.current = self.island_index
        self._evaluate(ind)
        self.population.add(ind)
        if self.peers:
            self.messenger.send_many(self.peers, (IND, to_wire(ind)))
        self._receive()
        if self.layout.num_islands > 1 and self.rng.random() < self.config.migration_probability:
            self._emigrate()
        self.generation += 1

    def _breed(self) -> Individual:
        space, task = self.config.space, self.config.task
        view = self.population.active(self.island)
        for _ in range(100):
            out = self.propagator(view)
            ind = out[0] if isinstance(out, list) else out
            if not isinstance(ind, Individual) or ind.uid is not None:
                ind = Individual(ind)  # never hand out a population member
            if space is None or space.constraint is None or space.satisfies(ind, task):
                return ind
        assert space is not None
        return Individual(space.sample(self._np_rng, task))

    def _evaluate(self, ind: Individual) -> None:
        comm = None
        if self.members is not None:
            self.members.send_many(range(1, self.worker_comm.Get_size()), ("eval", dict(ind)))
            comm = self.worker_comm
        start, t = time.time(), time.perf_counter()
        error: str | None = None
        try:
            loss = _call_loss(self.loss_fn, ind, comm)
            if not math.isfinite(loss):
                error = f"loss is not a finite number: {loss!r}"
        except Exception as err:  # noqa: BLE001 - any failure of user code is recorded
            loss, error = math.nan, f"{type(err).__name__}: {err}"
        seconds = time.perf_counter() - t
        ind.uid = f"{self.session}:{self.rank}:{self.logger.seq}"
        self.logger.append(ind, None if error else loss, island=self.island,
                           generation=self.generation, start=start, seconds=seconds, error=error)
        ind.loss = math.inf if error else loss
        ind.status, ind.error = ("failed", error) if error else ("ok", None)
        ind.evaltime, ind.evalperiod = start, seconds
        self.evaluations += 1
        if error:
            self._failed_here += 1
            if self._failed_here <= 3:  # the progress lines count the rest
                log.warning("evaluation failed (recorded, never bred from): %s", error)

    # ----------------------------------------------------------------- messages
    def _receive(self) -> int:
        msgs = self.messenger.poll()
        pop = self.population
        for src, msg in msgs:
            kind = msg[0]
            if kind == IND:
                pop.add(from_wire(msg[1]))
            elif kind == MIG:
                self._immigrate(msg[1], msg[2])
            elif kind == DEACT:
                for uid in msg[1]:
                    pop.deactivate(uid)
            elif kind == STOP:
                self.stopped_from.add(src)
                self.abort = self.abort or bool(msg[1])
            elif kind == DONE:
                self.done_from.add(src)
        return len(msgs)

    def _emigrate(self) -> None:
        cfg, pop, layout = self.config, self.population, self.layout
        view = pop.active(self.island)
        for target in range(layout.num_islands):
            k = int(layout.topology[self.island, target])
            if target == self.island or k <= 0:
                continue
            if cfg.pollination:
                eligible: Any = view
            else:  # real migration: each worker moves only the individuals it is responsible for
                mine = (i for i in view if i.current == self.island_index)
                best_first = _is_select_min(cfg.emigration_propagator)
                # SelectMin needs only the first k of the loss-ordered view, not a full scan.
                eligible = list(itertools.islice(mine, k)) if best_first else list(mine)
            if len(eligible) < k:
                continue
            emigrants = _selector(cfg.emigration_propagator, k)(eligible)
            decider = self.rng.randrange(len(layout.members[target]))
            wires = []
            for e in emigrants:
                w = list(to_wire(e))
                w[5], w[10], w[11] = target, decider, e.migration_steps + 1
                wires.append(tuple(w))
            self.messenger.send_many(layout.members[target], (MIG, wires, decider))
            if not cfg.pollination:
                for e in emigrants:
                    pop.deactivate_individual(e)
                if self.peers:
                    self.messenger.send_many(self.peers, (DEACT, [e.uid for e in emigrants]))

    def _immigrate(self, wires: list[tuple[Any, ...]], decider: int) -> None:
        pop = self.population
        inds = [from_wire(w) for w in wires]
        if self.config.pollination and decider == self.island_index:
            view = pop.active(self.island)
            k = min(len(inds), len(view))
            if k:
                replaced = _selector(self.config.immigration_propagator, k)(view)
                for r in replaced:
                    pop.deactivate_individual(r)
                if self.peers:
                    self.messenger.send_many(self.peers, (DEACT, [r.uid for r in replaced]))
        for ind in inds:
            ind.island = self.island
            pop.add(ind)

    def _drain(self, abort: bool) -> None:
        """Two-phase termination (module docstring); polls with backoff, never spins."""
        n = len(self.others)
        self.messenger.send_many(self.others, (STOP, abort))
        backoff = Backoff()
        for phase, seen in ((STOP, self.stopped_from), (DONE, self.done_from)):
            while len(seen) < n:
                if self._receive():
                    backoff.reset()
                else:
                    backoff.sleep()
            if phase == STOP:
                self.messenger.send_many(self.others, (DONE,))
        self.messenger.flush()
        self.messenger.free()

    # ----------------------------------------------------------------- helpers
    def _serve_evaluations(self) -> None:
        """Non-leader ranks of a multi-rank worker: evaluate what the leader sends."""
        inbox = Messenger(self.worker_comm)
        backoff = Backoff()
        while True:
            msgs = inbox.poll()
            if not msgs:
                backoff.sleep()
                continue
            backoff.reset()
            for _, msg in msgs:
                if msg[0] == "stop":
                    inbox.flush()
                    inbox.free()
                    return
                try:
                    _call_loss(self.loss_fn, Individual(msg[1]), self.worker_comm)
                except Exception:  # noqa: BLE001 - the leader records the failure
                    pass

    def _report_progress(self, t0: float, final: bool = False) -> None:
        now = time.monotonic()
        self._progress_at = now
        used = self.budget.used() if self._win_ok() else None
        done = used if used is not None else len(self.population)
        budget = self.config.max_evaluations
        rate = (done - self._resumed) / max(now - t0, 1e-9)
        best = self.population.best
        log.info(
            "%sevaluations %d/%s | best loss %s | %.1f evaluations/s | failures %d",
            f"finished ({self.stop_reason}): " if final else "",
            done, budget if budget is not None else "-", f"{best.loss:.6g}" if best else "-",
            rate, self.population.failures,
        )

    def _win_ok(self) -> bool:
        return getattr(self.budget, "_win", None) is not None


