"""The settings of one engine run: :class:`EngineConfig` (defaults from
:class:`propulate.settings.EvolveSettings`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from propulate.propagators.selection import SelectMax, SelectMin
from propulate.runs.declared_objectives import Objectives
from propulate.settings import EvolveSettings
from propulate.space import SearchSpace

_DEFAULTS = EvolveSettings()


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
        Wall-clock seconds after which no new evaluation starts; a running one is interrupted
        and recorded with status ``"interrupted"``.
    eval_timeout : float or None
        Seconds one evaluation may take; a longer one is stopped and recorded with status
        ``"timeout"`` (a failure), and the run goes on.
    failure_limit : int
        A worker whose last ``failure_limit`` evaluations all failed stops the whole run
        (stop reason ``"failures"``); 0 never stops.
    num_islands, island_sizes, migration_topology, migration_probability, pollination
        The island model (see :class:`propulate.Islands`).
    emigration_propagator, immigration_propagator
        Selection classes (or instances) choosing emigrants and the individuals they replace.
    ranks_per_worker : int
        MPI ranks per worker; the loss is then called as ``loss_fn(params, comm)``.
    space, task
        Search space and task, for constraint checks, duplicate detection and random draws of
        unseen configurations (when ``None``, the propagator's space is used if it has one).
    meta : dict
        Fields written into every log record (``task``, ``run``, ``method``).
    progress_interval : float
        Seconds between progress lines on rank 0.
    initial : list of dict
        Configurations evaluated before any bred one (e.g. a known default), the ``i``-th by
        worker ``i % workers``; one the run's records already hold is not evaluated again.
    pruner : Pruner or None
        Stops evaluations early from their intermediate values
        (:class:`propulate.pruners.Pruner`); ``None``: every evaluation runs to its end. With
        ``ranks_per_worker > 1`` the leader's pruner decides and every rank of the worker
        stops at the same step (:mod:`propulate.engine.steps`).
    objectives : Objectives or None
        The declared objectives (:mod:`propulate.runs.declared_objectives`): the objective returns one
        value per objective, kept in the records; ``None``: it returns its loss.
    """

    checkpoint_path: Path = Path(".")
    generations: int | None = _DEFAULTS.generations
    max_evaluations: int | None = _DEFAULTS.max_evaluations
    time_limit: float | None = _DEFAULTS.time_limit
    eval_timeout: float | None = _DEFAULTS.eval_timeout
    failure_limit: int = _DEFAULTS.failure_limit
    num_islands: int = _DEFAULTS.islands
    island_sizes: list[int] | None = None
    migration_topology: np.ndarray | None = None
    migration_probability: float = _DEFAULTS.migration_probability
    pollination: bool = _DEFAULTS.pollination
    emigration_propagator: Any = SelectMin
    immigration_propagator: Any = SelectMax
    ranks_per_worker: int = _DEFAULTS.ranks_per_worker
    space: SearchSpace | None = None
    task: Mapping[str, Any] | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    progress_interval: float = _DEFAULTS.progress_interval
    initial: list[dict[str, Any]] = field(default_factory=list)
    pruner: Any = None
    objectives: Objectives | None = None

    @classmethod
    def from_settings(cls, settings: EvolveSettings, **extra: Any) -> EngineConfig:
        """The engine's configuration of a run with ``settings`` (stopping, islands,
        failures, progress); ``extra`` sets the other attributes (``checkpoint_path``,
        ``space``, ``task``, ``meta``, ``initial``, ...)."""
        return cls(
            generations=settings.generations,
            max_evaluations=settings.max_evaluations,
            time_limit=settings.time_limit,
            eval_timeout=settings.eval_timeout,
            failure_limit=settings.failure_limit,
            num_islands=settings.islands,
            migration_probability=settings.migration_probability,
            pollination=settings.pollination,
            ranks_per_worker=settings.ranks_per_worker,
            progress_interval=settings.progress_interval,
            objectives=Objectives.maybe(settings.objectives),
            **extra,
        )

    def check(self) -> None:
        """Reject settings that cannot run (``ValueError`` naming the setting)."""
        unlimited = self.generations is None or self.generations < 0
        if unlimited and self.max_evaluations is None and self.time_limit is None:
            raise ValueError(
                "no stopping criterion: set generations, max_evaluations or time_limit"
            )
        if self.max_evaluations is not None and self.max_evaluations < 0:
            raise ValueError(f"max_evaluations must be >= 0, got {self.max_evaluations}")
        if self.time_limit is not None and self.time_limit <= 0:
            raise ValueError(f"time_limit must be positive, got {self.time_limit}")
        if self.eval_timeout is not None and self.eval_timeout <= 0:
            raise ValueError(f"eval_timeout must be positive, got {self.eval_timeout}")
        if self.failure_limit < 0:
            raise ValueError(f"failure_limit must be >= 0, got {self.failure_limit}")
        if not 0.0 <= self.migration_probability <= 1.0:
            raise ValueError("migration_probability must be in [0, 1]")
        if self.ranks_per_worker < 1:
            raise ValueError("ranks_per_worker must be >= 1")
        for params in self.initial:
            if not isinstance(params, Mapping):
                raise ValueError(f"initial configurations must be mappings, got {params!r}")
            if self.space is not None and not self.space.is_valid(params, self.task):
                raise ValueError(f"initial configuration {dict(params)} is not in the space")
