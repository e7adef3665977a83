"""``Islands``: an asynchronous island-model optimization run (Propulate 1.2's front end)."""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from mpi4py import MPI

from propulate.abort import abort_on_uncaught_error
from propulate.compat.legacy_checkpoint import warn_legacy_checkpoints
from propulate.engine.result import RunResult, gather_result
from propulate.engine.topology import IslandLayout
from propulate.engine.worker import EngineConfig, Worker
from propulate.population import Individual
from propulate.propagators.base import Propagator
from propulate.propagators.selection import SelectMax, SelectMin
from propulate.pruners.base import Pruner
from propulate.pruners.surrogates import as_pruner
from propulate.runs.declared_objectives import Objectives
from propulate.settings import EvolveSettings
from propulate.space import SearchSpace

log = logging.getLogger("propulate")
_DEFAULTS = EvolveSettings()


class IslandView:
    """This rank's island as Propulate 1.2's ``Islands.propulator`` showed it.

    Attributes
    ----------
    population : list of Individual
        The individuals of this rank's island that it knows (all of them after the run).
    island_idx : int
        The island's index (-1 on a non-leader rank of a multi-rank worker).
    generation : int
        This worker's generation counter.
    """

    def __init__(self, worker: Worker) -> None:
        self._worker = worker

    @property
    def population(self) -> list[Individual]:
        """The island's individuals known to this rank."""
        w = self._worker
        if not w.is_leader:
            return []
        return [ind for ind in w.population if ind.island == w.island]

    @property
    def island_idx(self) -> int:
        """The island's index."""
        return self._worker.island if self._worker.is_leader else -1

    @property
    def generation(self) -> int:
        """This worker's generation counter."""
        return self._worker.generation


class Islands:
    """Minimize ``loss_fn`` with workers on several islands that exchange individuals.

    Every MPI rank of ``comm`` constructs the same ``Islands`` and calls :meth:`propulate`.
    A settings error (e.g. fewer workers than islands) is raised on every rank alike, and an
    exception that ends one rank's script aborts the whole MPI job
    (:func:`propulate.abort.abort_on_uncaught_error`) instead of leaving the other ranks
    waiting. A Propulate 1.2 checkpoint (``island_<i>_ckpt.pickle``) in ``checkpoint_path`` is
    not read; rank 0 warns about it (:mod:`propulate.compat.legacy_checkpoint`).

    Parameters
    ----------
    loss_fn : callable
        ``loss_fn(params) -> float``, or ``loss_fn(params, comm)`` with ``ranks_per_worker > 1``
        (``comm`` holds the worker's ranks). An exception (its traceback is recorded), NaN or
        inf is a failed evaluation, never bred from; the run goes on unless failures pile up
        (``failure_limit``). An objective with a ``confirm(params, outcome)`` method is asked
        to confirm each would-be island best (see :mod:`propulate.engine.evaluation`).
    propagator : Propagator
        The breeding operator, e.g. :func:`propulate.get_default_propagator`.
    rng : random.Random, optional
        This rank's random number generator (seed it per rank).
    generations : int
        Generations per worker; ``-1`` (or ``0`` with another criterion) for no limit.
    num_islands : int
        Number of islands.
    island_sizes : sequence of int, optional
        Workers per island (default: equal split).
    migration_topology : array-like, optional
        ``[i, j]`` = emigrants from island ``i`` to ``j`` per migration event (default: 1, fully
        connected).
    migration_probability : float
        Probability per generation and worker of a migration event (default
        ``EvolveSettings.migration_probability``).
    emigration_propagator, immigration_propagator : selection class
        Which individuals emigrate (default the best, :class:`SelectMin`; with several
        objectives and no weights that default picks by non-dominated front and crowding
        distance instead, :class:`~propulate.propagators.pareto_selection.ParetoSelect`) and, under
        pollination, which ones the immigrants replace (default the worst, :class:`SelectMax`).
    pollination : bool
        True: emigrants are copies (pollination); False: they leave their island (migration).
    checkpoint_path : path
        Run directory for the evaluation logs; an existing run there is resumed.
    ranks_per_worker : int
        MPI ranks per worker.
    max_evaluations : int, optional
        Global evaluation budget over all workers (resumed evaluations count).
    time_limit : float, optional
        Wall-clock seconds after which no new evaluation starts; a running one is interrupted
        and recorded with status ``"interrupted"``.
    eval_timeout : float, optional
        Seconds one evaluation may take; a longer one is stopped and recorded with status
        ``"timeout"`` (a failure), and the run goes on.
    failure_limit : int
        A worker whose last ``failure_limit`` evaluations all failed stops the run (stop
        reason ``"failures"``); 0 never stops. Default ``EvolveSettings.failure_limit``.
    space : SearchSpace or limits, optional
        Search space; needed only for constraints on bred individuals.
    task : mapping, optional
        Task handed to a task-dependent constraint.
    meta : mapping, optional
        ``task``, ``run``, ``method`` fields for the log records.
    progress_interval : float
        Seconds between progress lines (rank 0, logger ``propulate``).
    initial : sequence of mapping, optional
        Configurations evaluated before any bred one (e.g. a known default), spread over the
        workers; a resumed run does not evaluate them again.
    comm : MPI.Comm
        The ranks of the run (default ``MPI.COMM_WORLD``).
    surrogate_factory : callable, optional
        Propulate 1.2's early stopping: called once per rank, it returns the rank's
        surrogate, e.g. ``lambda: StaticSurrogate()`` (:mod:`propulate.compat.surrogate`), a
        :class:`~propulate.pruners.Pruner`, or a surrogate with Propulate 1.2's interface.
        The objective reports its values by yielding them (or through ``report``, see
        :mod:`propulate.engine.steps`); a stopped evaluation is recorded with status
        ``"pruned"`` and never bred from as if its value were final (wrap the propagator in
        :class:`~propulate.propagators.PrunedPool` to fill a short pool with the pruned
        evaluations that got furthest, as ``evolve --pruner`` does).
    pruner : Pruner, optional
        This rank's pruner (instead of ``surrogate_factory``), e.g.
        ``propulate.pruners.ASHAPruner(min_steps=1, eta=3)``.
    objectives : str or mapping, optional
        Declared objectives, ``"runtime:min,accuracy:max"`` or ``{"runtime": "min", ...}``
        (:mod:`propulate.runs.declared_objectives`): ``loss_fn`` then returns ``{name: value}``, the
        records keep every value. Several objectives need a propagator that ranks them
        (``get_default_propagator(..., objectives=...)``), or weights
        (``"runtime:min:1,accuracy:max:0.1"``, or ``Objectives.parse(spec, weights)``) that
        make the loss their weighted sum for a single-objective propagator.
    """

    def __init__(
        self,
        loss_fn: Callable[..., Any],
        propagator: Propagator,
        rng: random.Random | None = None,
        generations: int = -1,
        num_islands: int = 1,
        island_sizes: Sequence[int] | np.ndarray | None = None,
        migration_topology: np.ndarray | Sequence[Sequence[int]] | None = None,
        migration_probability: float = _DEFAULTS.migration_probability,
        emigration_propagator: Any = SelectMin,
        immigration_propagator: Any = SelectMax,
        pollination: bool = True,
        checkpoint_path: str | Path = Path("./"),
        ranks_per_worker: int = 1,
        surrogate_factory: Any = None,
        *,
        max_evaluations: int | None = None,
        time_limit: float | None = None,
        eval_timeout: float | None = _DEFAULTS.eval_timeout,
        failure_limit: int = _DEFAULTS.failure_limit,
        space: SearchSpace | Mapping[str, Any] | None = None,
        task: Mapping[str, Any] | None = None,
        meta: Mapping[str, Any] | None = None,
        progress_interval: float = _DEFAULTS.progress_interval,
        initial: Sequence[Mapping[str, Any]] = (),
        comm: MPI.Comm = MPI.COMM_WORLD,
        pruner: Pruner | None = None,
        objectives: str | Mapping[str, str] | Objectives | None = None,
    ) -> None:
        abort_on_uncaught_error()
        if surrogate_factory is not None:
            if pruner is not None:
                raise ValueError("give surrogate_factory or pruner, not both")
            pruner = as_pruner(surrogate_factory())
        gens = None if generations is None or generations < 0 else generations
        if gens == 0 and (max_evaluations is not None or time_limit is not None):
            gens = None  # Propulate 1.2 default of 0 with another criterion: no generation limit
        self.config = EngineConfig(
            checkpoint_path=Path(checkpoint_path),
            generations=gens,
            max_evaluations=max_evaluations,
            time_limit=time_limit,
            eval_timeout=eval_timeout,
            failure_limit=failure_limit,
            num_islands=num_islands,
            island_sizes=None if island_sizes is None else [int(s) for s in island_sizes],
            migration_topology=None
            if migration_topology is None
            else np.asarray(migration_topology),
            migration_probability=migration_probability,
            pollination=pollination,
            emigration_propagator=emigration_propagator,
            immigration_propagator=immigration_propagator,
            ranks_per_worker=ranks_per_worker,
            space=None if space is None else SearchSpace.from_limits(space),
            task=task,
            meta=dict(meta or {}),
            progress_interval=progress_interval,
            initial=[dict(p) for p in initial],
            pruner=pruner,
            objectives=Objectives.maybe(objectives),
        )
        self.comm = comm
        _check_layout(comm.Get_size(), self.config)
        if comm.Get_rank() == 0:
            warn_legacy_checkpoints(self.config.checkpoint_path)
        self.worker = Worker(loss_fn, propagator, rng or random.Random(), self.config, comm)

    @property
    def population(self) -> list[Individual]:
        """The individuals this rank knows (its island's, after :meth:`propulate`)."""
        return list(self.worker.population)

    @property
    def propulator(self) -> IslandView:
        """This rank's island, as Propulate 1.2's ``Islands.propulator`` (``.population``)."""
        return IslandView(self.worker)

    def propulate(self, logging_interval: int = 10, debug: int = -1) -> None:
        """Run the optimization on every rank until a stop condition holds.

        Parameters
        ----------
        logging_interval : int
            With ``debug >= 1``: generations between per-worker status lines.
        debug : int
            ``-1``/``0``: progress lines only; ``1``: per-worker status lines too.
        """
        self.worker.run(logging_interval=logging_interval, debug=debug)

    def result(self) -> RunResult:
        """What the run ended with, the same on every rank (collective: call on every rank
        after :meth:`propulate`).

        Returns
        -------
        RunResult
            Best configuration and loss over all islands, this session's evaluations, the
            run's failures, wall time, stop reason and, when failures stopped the run, the
            first failure's traceback.
        """
        return gather_result(self.worker, self.comm)

    def summarize(self, top_n: int = 1, debug: int = 1) -> list[list[Individual]]:
        """The ``top_n`` best individuals of every island, on every rank (collective).

        Parameters
        ----------
        top_n : int
            How many of each island's best to return.
        debug : int
            With ``debug >= 0`` (the default, 1, as in Propulate 1.2), rank 0 logs them on the
            ``propulate`` logger at level INFO; ``-1`` is silent.

        Returns
        -------
        list of list of Individual
            Per island, its best individuals, best first.
        """
        w = self.worker
        result = None
        if w.is_leader:
            mine = w.population.best_of(w.island, top_n)
            gathered = w.leaders.allgather((w.island, w.island_index, mine))
            per_island: dict[int, list[Individual]] = {}
            for island, index, best in gathered:
                if index == 0:
                    per_island[island] = best
            result = [per_island[i] for i in sorted(per_island)]
        result = self.comm.bcast(result, root=0)
        if debug >= 0 and self.comm.Get_rank() == 0:
            for i, best in enumerate(result):
                lines = [f"island {i}: best {len(best)} of its individuals"]
                lines += [
                    f"  ({k}) loss {ind.loss:.6g}  {dict(ind)}" for k, ind in enumerate(best, 1)
                ]
                log.info("\n".join(lines))
        return result


def _check_layout(ranks: int, config: EngineConfig) -> None:
    """Raise the island layout's error on every rank alike (before any rank waits on another).

    The worker checks the layout on its leader ranks only; a rank that is not a leader would
    otherwise go on and wait for work that never comes.
    """
    rpw = config.ranks_per_worker
    if rpw >= 1 and ranks % rpw == 0:
        IslandLayout(
            ranks // rpw, config.num_islands, config.island_sizes, config.migration_topology
        )
