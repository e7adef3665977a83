"""One search run's inputs, as a method's runner gets them on every rank."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from propulate.settings import EvolveSettings


@dataclass
class Job:
    """One search run's inputs, as a method's runner gets them on every rank.

    Attributes
    ----------
    loss : callable
        The objective, its task bound: ``loss(params)`` (or ``loss(params, comm)``).
    space : SearchSpace
        The parameter space and its constraint.
    task_spec : dict or None
        ``{"id": ..., "task": {...}}`` (``None`` without a task).
    out : Path
        The run directory.
    settings : EvolveSettings
        The run's settings.
    meta : dict
        Fields written into every record (``task``, ``run``, ``method``).
    initial : list of dict
        Configurations to evaluate before any bred or drawn one.
    plugins : Plugins or None
        The run's propagator and pruner, checked once by the command line
        (:func:`propulate.plugins.resolve.resolve`); ``None``: resolved from ``settings``.
    """

    loss: Any
    space: Any
    task_spec: dict[str, Any] | None
    out: Path
    settings: EvolveSettings
    meta: dict[str, Any]
    initial: list[dict[str, Any]] = field(default_factory=list)
    plugins: Any = None

    @property
    def task(self) -> dict[str, Any] | None:
        """The task values (``None`` without a task)."""
        return self.task_spec["task"] if self.task_spec else None
