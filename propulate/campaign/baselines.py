"""What a campaign measures besides tuning: the untuned default, random search, a landscape.

The config's ``baselines`` section (all keys optional)::

    baselines:
      default: {mb: 32, nb: 32, nproc: 2, p: 1}   # measured once on every task
      random_search: true                          # on each new task, TLA2's budget and seed
      paired_rounds: 5                             # re-measure default vs. tuned (0: off)
      landscape:                                   # a grid over two parameters on one task,
        task: square                               # the others from `default`
        grid: {mb: [8, 16, 32, 64], nb: [8, 16, 32, 64]}

Each is a run directory made by ``python -m propulate measure``: ``baselines/<task>/default``,
``baselines/<task>/random`` and ``baselines/<task>/landscape``; the report compares the tuned
results with the default (speedup per task and method) and draws the landscape. With a default,
``python -m propulate paired`` then measures it again on every task together with each tuning
run's best configuration, interleaved in ``paired_rounds`` rounds (``paired/<task>.json``,
:mod:`propulate.remeasure.paired`), so that the reported speedups do not depend on when each was measured.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from propulate.remeasure.paired import PAIRED_ROUNDS
from propulate.space import SearchSpace


class BaselineError(ValueError):
    """A ``baselines`` setting that cannot be used; ``key`` names it."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"config key 'baselines.{key}': {message}")
        self.key = key


@dataclass(frozen=True)
class Baselines:
    """The resolved ``baselines`` section.

    Attributes
    ----------
    default : dict or None
        The untuned default configuration (every parameter), measured on every task.
    random_search : bool
        Whether random search runs on each new task with the TLA2 budget.
    landscape_task : str or None
        The task of the landscape grid.
    grid : dict of str to list
        The grid's values per parameter (two parameters).
    paired_rounds : int
        Rounds of the paired re-measurement of the default against the tuned configurations
        (0: none).
    """

    default: dict[str, Any] | None = None
    random_search: bool = False
    landscape_task: str | None = None
    grid: dict[str, list[Any]] = field(default_factory=dict)
    paired_rounds: int = PAIRED_ROUNDS

    @classmethod
    def from_config(
        cls,
        section: Mapping[str, Any] | None,
        space: SearchSpace | None,
        tasks: Mapping[str, Mapping[str, Any] | None],
        new_tasks: Sequence[str],
    ) -> Baselines:
        """Check the section against the parameter space and the campaign's tasks.

        Parameters
        ----------
        section : mapping or None
            The config's ``baselines`` section.
        space : SearchSpace or None
            The parameter space with its constraint (None for a suite).
        tasks : mapping of str to mapping or None
            Task ids to their values (None for tasks sampled later).
        new_tasks : sequence of str
            The new tasks' ids.

        Raises
        ------
        BaselineError
            Naming the key that cannot be used.
        """
        if not section:
            return cls()
        if space is None:
            raise BaselineError("default", "baselines need an objective with 'parameters'")
        default = section.get("default")
        if default is not None:
            default = dict(default)
            if set(default) != set(space.names) or not space.in_bounds(default):
                raise BaselineError(
                    "default", f"give every parameter ({', '.join(space.names)}) within its range"
                )
            for tid, values in tasks.items():
                if values is not None and not space.satisfies(default, values):
                    raise BaselineError("default", f"violates the constraint on task {tid!r}")
        random_search = bool(section.get("random_search", False))
        if random_search and not new_tasks:
            raise BaselineError("random_search", "runs on the new tasks; give 'new_tasks'")
        rounds = section.get("paired_rounds", PAIRED_ROUNDS)
        if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 0:
            raise BaselineError("paired_rounds", f"must be an integer >= 0, got {rounds!r}")
        landscape = section.get("landscape")
        if not landscape:
            return cls(default, random_search, paired_rounds=rounds)
        task, grid = landscape.get("task"), dict(landscape.get("grid") or {})
        if task not in tasks:
            raise BaselineError("landscape.task", f"unknown task {task!r}")
        if len(grid) != 2 or not set(grid) <= set(space.names):
            raise BaselineError("landscape.grid", "give values for two of the parameters")
        if default is None:
            raise BaselineError("landscape", "the other parameters come from 'default'; give it")
        grid = {k: list(v) for k, v in grid.items()}
        return cls(default, random_search, str(task), grid, paired_rounds=rounds)

    def measured_tasks(self, training: Sequence[str], new: Sequence[str]) -> list[str]:
        """The tasks the default is measured on (all of them, when there is a default)."""
        return [*training, *new] if self.default is not None else []

    def paired_tasks(self, training: Sequence[str], new: Sequence[str]) -> list[str]:
        """The tasks of a paired re-measurement (every measured task, unless it is off)."""
        return self.measured_tasks(training, new) if self.paired_rounds > 0 else []

    def runs(self, training: Sequence[str], new: Sequence[str]) -> list[tuple[str, str]]:
        """Every ``(task, kind)`` run: kind ``default``, ``random`` or ``landscape``."""
        out = [(t, "default") for t in self.measured_tasks(training, new)]
        out += [(t, "random") for t in new] if self.random_search else []
        return out + ([(self.landscape_task, "landscape")] if self.landscape_task else [])

    @property
    def quoted_default(self) -> str:
        """The default configuration as shell-quoted JSON (a job option's value)."""
        return shlex.quote(json.dumps(self.default, sort_keys=True))

    def paired_options(self) -> str:
        """The ``paired`` options: the default and the rounds."""
        return f"--default {self.quoted_default} --rounds {self.paired_rounds}"

    def options(self, kind: str, budget: int, seed: int) -> str:
        """The ``measure`` options of a run of ``kind`` (shell-quoted).

        Parameters
        ----------
        kind : str
            ``default``, ``random`` or ``landscape``.
        budget, seed : int
            Evaluations and seed of random search (the TLA2 budget and seed).
        """
        if kind == "default":
            return f"--params {self.quoted_default}"
        if kind == "random":
            return f"--random {int(budget)} --seed {int(seed)}"
        assert self.default is not None
        fixed = {k: v for k, v in self.default.items() if k not in self.grid}
        axes = " ".join(
            shlex.quote(f"{k}={','.join(str(x) for x in v)}") for k, v in self.grid.items()
        )
        return f"--grid {axes} --fixed {shlex.quote(json.dumps(fixed, sort_keys=True))}"
