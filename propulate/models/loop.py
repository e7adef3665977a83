"""The model-guided loop: fit, propose one configuration per task, evaluate, repeat.

:class:`ModelGuidedLoop` runs over a set of tasks, each with its own run directory (the layout
of ``evolve``'s: ``DIR/evals/*.jsonl``, ``DIR/task.json``, ``DIR/summary.json``). Every round,
rank 0 reads the evaluation logs (the only state, so a re-run with the same directories resumes
where a killed run stopped and loses no completed evaluation), completes missing initial
samples or fits the model and proposes one configuration per task with budget left, and sends
the list to the other ranks; the proposals are evaluated in parallel (item ``i`` on rank
``i % size``, so tasks spread over the ranks) through :func:`propulate.runs.outcome.evaluate`,
appended to the logs, and a non-blocking barrier closes the round. Waiting ranks poll with
backoff instead of spinning in blocking MPI calls.

What the model is and where the first samples come from are hooks, so the same loop serves MLA
(:func:`propulate.models.mla.run_mla`: Latin hypercubes, LCM refitted every round), TLA1's single
measurement and TLA2 (:mod:`propulate.models.transfer`: the TLA1 prediction, a frozen extended
LCM).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from propulate.models.acquisition import propose, untried_incumbent
from propulate.models.lcm import LCM
from propulate.models.loop_settings import LoopSettings
from propulate.models.sampling import TaskData
from propulate.runs.declared_objectives import Objectives
from propulate.runs.log import EvaluationLog, iter_records, new_session_id
from propulate.runs.outcome import Outcome, evaluate
from propulate.runs.summary import RunSummary, record_loss, summarize_directory, write_summary
from propulate.space import Params, SearchSpace, load_callable
from propulate.user_objective import bind_task, objective_from_config
from propulate.user_objective.loading import OBJECTIVE_FILE_SUFFIXES

TAG = 17
#: With more tasks than this (and their neighbours known), a task's proposal considers the best
#: configurations of its nearest this many tasks (itself included), not of all: the acquisition
#: search refines every one of them, which at 200 tasks made each search take about 0.5 s.
SHARED_MAX = 50

#: An objective: a ``"module:function"`` reference or a callable taking ``(params)`` or
#: ``(params, task)`` (a function, or an object with ``__call__``, e.g. a command objective).
Objective = str | Callable[..., Any]
ModelHook = Callable[[list[TaskData], LCM | None], LCM]
InitialHook = Callable[[int], list[Params]]


def resolve_objective(objective: Objective) -> Callable[..., Any]:
    """The callable of an objective: a ``"module:function"`` string is imported, the path of a
    YAML/JSON file holding a command objective (``results/<name>/objective.yaml``) is read."""
    if isinstance(objective, str):
        if objective.endswith(OBJECTIVE_FILE_SUFFIXES):
            return objective_from_config(objective)
        return load_callable(objective)
    if not callable(objective):
        raise TypeError(f"an objective must be callable or 'module:function', got {objective!r}")
    return objective


@dataclass
class TaskRun:
    """One task of a loop and the run directory it writes.

    Attributes
    ----------
    id : str
        Task id (written into every record as ``task``).
    task : dict
        Task values handed to the objective and the constraint.
    directory : Path
        The run directory.
    """

    id: str
    task: dict[str, Any]
    directory: Path


def read_state(run: TaskRun, space: SearchSpace) -> tuple[TaskData, set[tuple[Any, ...]], int]:
    """A run's successful data, the keys of all evaluated configurations and the record count."""
    data = TaskData(run.id, run.task)
    keys: set[tuple[Any, ...]] = set()
    count = 0
    for rec in iter_records(run.directory):
        count += 1
        try:
            keys.add(space.key(rec["params"]))
        except (KeyError, ValueError, TypeError):
            continue
        loss = record_loss(rec)
        if loss is not None:
            data.params.append(space.canonical(rec["params"]))
            data.losses.append(loss)
    return data, keys, count


def summarize(
    run: TaskRun,
    space: SearchSpace,
    method: str,
    run_id: str,
    seed: int,
    ranks: int,
    objectives: Objectives | None = None,
) -> RunSummary:
    """The summary of a run directory from all its records (every session)."""
    return summarize_directory(
        run.directory,
        task=run.id,
        run=run_id,
        method=method,
        seed=seed,
        parameters=list(space.names),
        ranks=ranks,
        stop_reason="budget",
        objectives=objectives,
    )


def log_outcome(log: EvaluationLog, params: Params, outcome: Outcome, generation: int) -> None:
    """Append one evaluation's outcome to ``log`` (its status, error and traceback)."""
    log.record(params, outcome, generation=generation)


def _unique(space: SearchSpace, configs: Sequence[Params]) -> list[Params]:
    """``configs`` without repeats (by :meth:`SearchSpace.key`), first occurrence kept."""
    seen: set[tuple[Any, ...]] = set()
    out = []
    for p in configs:
        k = space.key(p)
        if k not in seen:
            seen.add(k)
            out.append(space.canonical(p))
    return out


class ModelGuidedLoop:
    """The fit / propose / evaluate loop over several tasks (see the module docstring).

    Parameters
    ----------
    space : SearchSpace
        Parameter space with its constraint.
    objective : str or callable
        The loss: ``objective(params, task)`` (or ``objective(params)``) returning a float to
        minimize; a ``"module:function"`` string is imported.
    runs : sequence of TaskRun
        The tasks and their run directories.
    settings : LoopSettings
        Budget, initial design size, seed, the records' method and run id, and the rounds
        that look at other tasks' best configurations (``share``, ``local_every``).
    initial_design : callable
        ``initial_design(i) -> list of configurations`` for task ``i`` (deterministic, so a
        resumed run completes the same design).
    fit_model : callable
        ``fit_model(data, previous) -> LCM`` with task ``i`` of ``runs`` as model task
        ``model_task[i]``; ``previous`` is the last fitted model (for warm starts) or ``None``.
    model_task : sequence of int, optional
        Model output index of each run (default ``0 .. len(runs) - 1``).
    comm : MPI communicator, optional
        Ranks sharing the evaluations (default: a single process).
    model_path : path, optional
        Where rank 0 writes the model after every fit.
    candidates : sequence of configurations
        Configurations every proposal considers besides its own search (TLA2: the training
        tasks' optima). The best configuration found so far of every task of the loop is always
        considered too, so tasks share the basins they found (of the nearest
        :data:`SHARED_MAX` tasks when there are more and ``neighbours`` is given).
    neighbours : sequence of sequences of int, optional
        For each task, the other tasks' positions, nearest first (in the task space); needed
        by ``settings.share``.
    local_model : callable, optional
        ``local_model(data) -> LCM``: the one-task model of a task's data (required when
        ``settings.local_every`` is set).
    objectives : Objectives, optional
        The declared objectives the objective returns (:mod:`propulate.runs.declared_objectives`): the
        records keep each value and the loss the loop models is their
        :meth:`~propulate.runs.declared_objectives.Objectives.loss_of` (one objective, or weights).
    """

    def __init__(
        self,
        space: SearchSpace,
        objective: Objective,
        runs: Sequence[TaskRun],
        settings: LoopSettings,
        initial_design: InitialHook,
        fit_model: ModelHook,
        *,
        model_task: Sequence[int] | None = None,
        comm: Any = None,
        model_path: str | Path | None = None,
        candidates: Sequence[Params] = (),
        neighbours: Sequence[Sequence[int]] | None = None,
        local_model: Callable[[TaskData], LCM] | None = None,
        objectives: Objectives | None = None,
    ) -> None:
        if objectives is not None and not objectives.scalar:
            raise ValueError(
                f"objectives {objectives.text()}: the model-guided loop minimises one loss; "
                "give weights to minimise their weighted sum"
            )
        self.objectives = objectives
        self.space, self.objective, self.runs = space, resolve_objective(objective), list(runs)
        self.settings = settings
        self.budget, self.initial = int(settings.budget), int(settings.initial)
        self.initial_design, self.fit_model = initial_design, fit_model
        self.model_task = list(model_task) if model_task is not None else list(range(len(runs)))
        self.seed, self.method, self.comm = int(settings.seed), settings.method, comm
        self.run_id = settings.run_id or f"seed{self.seed}"
        self.model_path = Path(model_path) if model_path else None
        self.candidates = list(candidates)
        self.neighbours = [list(n) for n in neighbours] if neighbours is not None else None
        self.share, self.radius = int(settings.share), float(settings.radius)
        self.local_every, self.local_radius = int(settings.local_every), settings.local_radius
        self.local_model = local_model
        if self.local_every and local_model is None:
            raise ValueError("local_every needs a local_model")
        self.rank = comm.Get_rank() if comm is not None else 0
        self.size = comm.Get_size() if comm is not None else 1
        self.model: LCM | None = None
        self._losses: dict[int, Callable[[Params], Any]] = {}
        self._logs: dict[int, EvaluationLog] = {}

    # ----------------------------------------------------------------- rank 0
    def plan(self, round_no: int) -> list[tuple[int, Params]]:
        """The next round's evaluations ``(task position, configuration)``; empty when done."""
        states = [read_state(r, self.space) for r in self.runs]
        items: list[tuple[int, Params]] = []
        for i, (_, keys, count) in enumerate(states):
            if count < min(self.initial, self.budget):
                todo = [p for p in self.initial_design(i) if self.space.key(p) not in keys]
                items += [(i, p) for p in todo[: min(self.initial, self.budget) - count]]
        if items:
            return items
        open_tasks = [i for i, s in enumerate(states) if s[2] < self.budget]
        if not open_tasks:
            return []
        try:
            self.model = self.fit_model([s[0] for s in states], self.model)
        except ValueError:  # nothing succeeded yet: keep exploring at random
            for i in open_tasks:
                rng = np.random.default_rng([self.seed, round_no, i])
                p = self.space.sample(rng, self.runs[i].task)
                if self.space.key(p) not in states[i][1]:
                    items.append((i, p))
            return items
        if self.model_path is not None:
            self.model.save(self.model_path)
        best = [s[0].best()[0] for s in states]
        shared = _unique(self.space, [p for p in best if p is not None] + self.candidates)
        for i in open_tasks:
            if self.neighbours is not None and len(best) > SHARED_MAX:  # many tasks
                near = [best[j] for j in [i, *self.neighbours[i][: SHARED_MAX - 1]]]
                shared = _unique(self.space, [p for p in near if p is not None] + self.candidates)
            if self.share > 0 and self.neighbours is not None:
                near = [best[j] for j in self.neighbours[i][: self.share]]
                p = untried_incumbent(
                    self.space, self.runs[i].task, states[i][0].params, near, self.radius
                )
                if p is not None and self.space.key(p) not in states[i][1]:
                    items.append((i, p))
                    continue
            rng = np.random.default_rng([self.seed, round_no, i])
            params = self._local(i, states[i], best, shared, rng)
            if params is None:
                params, _ = propose(
                    self.model,
                    self.model_task[i],
                    self.space,
                    self.runs[i].task,
                    states[i][1],
                    rng,
                    extra=shared,
                )
            if params is not None:
                items.append((i, params))
        return items

    def _local(
        self,
        i: int,
        state: tuple[TaskData, set[tuple[Any, ...]], int],
        best: list[Params | None],
        shared: list[Params],
        rng: np.random.Generator,
    ) -> Params | None:
        """Task ``i``'s proposal of a local round (see ``local_every``); ``None`` otherwise."""
        data, keys, count = state
        guided = count - min(self.initial, self.budget)
        if not self.local_every or guided % self.local_every != self.local_every - 1:
            return None
        others = [p for j, p in enumerate(best) if j != i and p is not None]
        if not others or not data.losses or self.local_model is None:
            return None
        near = (self.space.encode_many(others), self.local_radius)
        params, _ = propose(
            self.local_model(data),
            0,
            self.space,
            self.runs[i].task,
            keys,
            rng,
            extra=shared,
            near=near,
        )
        return params

    # ----------------------------------------------------------------- all ranks
    def _evaluate(self, items: list[tuple[int, Params]], session: str, round_no: int) -> None:
        for k, (i, params) in enumerate(items):
            if k % self.size != self.rank:
                continue
            run = self.runs[i]
            if i not in self._losses:
                self._losses[i] = bind_task(self.objective, run.task)
                self._logs[i] = EvaluationLog(
                    run.directory,
                    self.rank,
                    session,
                    meta={"task": run.id, "run": self.run_id, "method": self.method},
                )
            outcome = evaluate(self._losses[i], params, objectives=self.objectives)
            log_outcome(self._logs[i], params, outcome, round_no)

    def _share(self, value: Any) -> Any:
        """Rank 0's ``value`` on every rank, waited for by polling with backoff."""
        if self.comm is None or self.size == 1:
            return value
        from propulate.polling import wait

        if self.rank == 0:
            reqs = [self.comm.isend(value, dest=r, tag=TAG) for r in range(1, self.size)]
            for req in reqs:
                wait(req)
            return value
        return wait(self.comm.irecv(source=0, tag=TAG))

    def _barrier(self) -> None:
        if self.comm is not None and self.size > 1:
            from propulate.polling import Backoff

            req, backoff = self.comm.Ibarrier(), Backoff()
            while not req.Test():
                backoff.sleep()

    def run(self) -> list[RunSummary]:
        """Run to the end of every task's budget; returns the summaries (on rank 0, else [])."""
        if self.rank == 0:
            for run in self.runs:
                run.directory.mkdir(parents=True, exist_ok=True)
                (run.directory / "task.json").write_text(
                    json.dumps({"id": run.id, "task": run.task})
                )
        session = self._share(new_session_id() if self.rank == 0 else None)
        round_no = 0
        try:
            while True:
                items = self._share(self.plan(round_no) if self.rank == 0 else None)
                if not items:
                    break
                self._evaluate(items, session, round_no)
                self._barrier()
                round_no += 1
        finally:
            for log in self._logs.values():
                log.close()
        if self.rank != 0:
            return []
        summaries = []
        for run in self.runs:
            summary = summarize(
                run, self.space, self.method, self.run_id, self.seed, self.size, self.objectives
            )
            write_summary(run.directory, summary)
            summaries.append(summary)
        return summaries
