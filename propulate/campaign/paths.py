"""Where a campaign's files go: ``results/<name>/`` and the run directories under it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from propulate.campaign.baselines import Baselines

#: The folder every campaign writes into, one sub-folder per campaign name.
RESULTS = "results"
#: The transfer methods run per new task.
TLAS = ("tla1", "tla2")

__all__ = ["RESULTS", "TLAS", "CampaignPaths"]


class CampaignPaths:
    """The paths of a campaign; mixed into :class:`propulate.campaign.Campaign`, whose fields
    (name, suite, tasks, methods, seeds, stages, baselines) they are derived from."""

    name: str
    suite: tuple[str, ...]
    methods: tuple[str, ...]
    seeds: tuple[int, ...]
    baselines: Baselines
    training_ids: Any
    new_ids: Any
    taskless: Any
    transfer_on: Any
    mla_on: Any

    @property
    def root(self) -> str:
        """The campaign's results folder, ``results/<name>``."""
        return f"{RESULTS}/{self.name}"

    def path(self, *parts: str) -> str:
        """A path under the campaign's results folder."""
        return "/".join((self.root, *parts))

    def task_file(self, task: str) -> str:
        """The spec file of a task id."""
        return self.path("tasks", f"{task}.json")

    def space_file(self, task: str) -> str:
        """The space file of an evolve job: the campaign file or a suite function's."""
        return self.path("spaces", f"{task}.yaml") if self.suite else self.path("campaign.yaml")

    def run_dir(self, task: str, method: str, seed: int | str) -> str:
        """The run directory of one evolve run."""
        return self.path("runs", task, f"{method}-s{seed}")

    @property
    def evolve_runs(self) -> list[str]:
        """Every evolve run directory."""
        return [
            self.run_dir(t, m, s)
            for t in self.training_ids
            for m in self.methods
            for s in self.seeds
        ]

    @property
    def transfer_runs(self) -> list[str]:
        """Every transfer output directory."""
        if not self.transfer_on:
            return []
        return [self.path("transfer", t, tla) for t in self.new_ids for tla in TLAS]

    @property
    def all_runs(self) -> list[str]:
        """The run directories the summary and the report read."""
        mla = [self.path("mla")] if self.mla_on else []
        return self.evolve_runs + mla + self.transfer_runs + self.baseline_runs

    def baseline_dir(self, task: str, kind: str) -> str:
        """The run directory of a baseline measurement (``default``, ``random``, ``landscape``)."""
        return self.path("baselines", task, kind)

    def tuned_runs(self, task: str) -> list[str]:
        """The tuning run directories of one task (evolve and MLA, or TLA1, TLA2 and random)."""
        runs = [d for d in self.evolve_runs if d.startswith(self.path("runs", task, ""))]
        runs += [self.path("mla", task)] if self.mla_on and task in self.training_ids else []
        runs += [d for d in self.transfer_runs if d.startswith(self.path("transfer", task, ""))]
        kinds = self.baselines.runs(self.training_ids, self.new_ids)
        return runs + [self.baseline_dir(t, k) for t, k in kinds if t == task and k == "random"]

    def paired_file(self, task: str) -> str:
        """The paired re-measurement of the default against a task's tuned configurations."""
        return self.path("paired", f"{task}.json")

    @property
    def paired_files(self) -> list[str]:
        """Every paired re-measurement file (none for a suite or without a default)."""
        if self.taskless:
            return []
        tasks = self.baselines.paired_tasks(self.training_ids, self.new_ids)
        return [self.paired_file(t) for t in tasks]

    @property
    def baseline_runs(self) -> list[str]:
        """Every baseline run directory (:mod:`propulate.campaign.baselines`)."""
        pairs = self.baselines.runs(self.training_ids, self.new_ids) if not self.taskless else []
        return [self.baseline_dir(t, k) for t, k in pairs]
