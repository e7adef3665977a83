"""How a model-guided loop spends its evaluations: :class:`LoopSettings`."""

from __future__ import annotations

from dataclasses import dataclass

from propulate.settings import MLASettings


@dataclass(frozen=True)
class LoopSettings:
    """How a :class:`ModelGuidedLoop` spends its evaluations.

    Attributes
    ----------
    budget : int
        Evaluations per task (failures included).
    initial : int
        Initial (model-free) evaluations per task, from the initial design.
    seed : int
        Seed of the proposals' candidate designs (and the records' default run id).
    method : str
        The records' ``method``.
    run_id : str or None
        The records' and summaries' ``run`` (default ``"seed<seed>"``).
    share : int
        A task first evaluates the best configuration of one of its ``share`` nearest
        neighbours that it has tried nothing within ``radius`` (unit cube) of.
    radius : float
        See ``share``.
    local_every : int
        Every ``local_every``-th guided evaluation of a task (0: never) is a local round: the
        expected improvement of a one-task model of the task's own data, maximized only within
        ``local_radius`` (unit cube) of the other tasks' best configurations. The joint model
        carries the other tasks' trends but can be confident where only the task's own data
        could tell; its own model looks at it alone, in the regions the others found good.
    local_radius : float
        See ``local_every``.
    """

    budget: int
    initial: int
    seed: int = 0
    method: str = "mla"
    run_id: str | None = None
    share: int = 0
    radius: float = 0.02
    local_every: int = 0
    local_radius: float = 0.05

    @classmethod
    def of_mla(cls, mla: MLASettings) -> LoopSettings:
        """The loop of an MLA run with ``mla``."""
        return cls(
            budget=mla.budget,
            initial=mla.initial,
            seed=mla.seed,
            method="mla",
            share=mla.share,
            radius=mla.radius,
            local_every=mla.local_every,
            local_radius=mla.local_radius,
        )
