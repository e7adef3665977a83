"""The model-guided loop (MLA): fit, propose one configuration per task, evaluate, repeat.

:class:`ModelGuidedLoop` runs over a set of tasks, each with its own run directory (the layout
of ``evolve``'s: ``DIR/evals/*.jsonl``, ``DIR/task.json``, ``DIR/summary.json``). Every round,
rank 0 reads the evaluation logs (the only state, so a re-run with the same directories resumes
where a killed run stopped and loses no completed evaluation), completes missing initial
samples or fits the model and proposes one configuration per task with budget left, and sends
the list to the other ranks; the proposals are evaluated in parallel (item ``i`` on rank
``i % size``, so tasks spread over the ranks), appended to the logs, and a non-blocking barrier
closes the round. Waiting ranks poll with short sleeps instead of spinning in blocking MPI calls.

What the model is and where the first samples come from are hooks, so the same loop serves MLA
(:func:`run_mla`: Latin hypercubes, LCM refitted every round) and TLA2
(:mod:`propulate.models.transfer`: the TLA1 prediction, a frozen extended LCM).
"""

from __future__ import annotations

import json
import math
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from propulate.history import EvaluationLog, iter_records, new_session_id
from propulate.models.acquisition import propose
from propulate.models.lcm import LCM
from propulate.models.sampling import TaskData, build_lcm, initial_designs
from propulate.space import Params, SearchSpace

POLL = 0.005  # seconds between polls of a waiting rank
TAG = 17


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


def wait(request: Any) -> Any:
    """Complete an MPI request by polling with sleeps (MPICH spins in blocking waits)."""
    while True:
        done, value = request.test()
        if done:
            return value
        time.sleep(POLL)


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
        if rec.get("status") == "ok" and rec.get("loss") is not None:
            data.params.append(space.canonical(rec["params"]))
            data.losses.append(float(rec["loss"]))
    return data, keys, count


def write_summary(run: TaskRun, method: str, seed: int, ranks: int) -> dict[str, Any]:
    """Write ``summary.json`` of a run directory from its records and return it.

    ``wall_time`` is the span, in seconds, from the first evaluation's start to the last one's
    end over all sessions of the run.
    """
    recs = list(iter_records(run.directory))
    ok = [r for r in recs if r.get("status") == "ok" and r.get("loss") is not None]
    best = min(ok, key=lambda r: r["loss"]) if ok else None
    span = (max(r["start"] + r["seconds"] for r in recs) - min(r["start"] for r in recs)
            if recs else 0.0)
    summary = {
        "task": run.id, "run": seed, "method": method,
        "best_params": best["params"] if best else None,
        "best_loss": best["loss"] if best else None,
        "evaluations": len(recs), "failures": len(recs) - len(ok),
        "wall_time": span, "evaluations_per_second": len(recs) / span if span > 0 else 0.0,
        "ranks": ranks,
    }
    (run.directory / "summary.json").write_text(json.dumps(summary, indent=1))
    return summary


ModelHook = Callable[[list[TaskData], LCM | None], LCM]
InitialHook = Callable[[int], list[Params]]


class ModelGuidedLoop:
    """The fit / propose / evaluate loop over several tasks (see the module docstring).

    Parameters
    ----------
    space : SearchSpace
        Parameter space with its constraint.
    loss_for : callable
        ``loss_for(task_values) -> loss(params) -> float``; called once per task on each rank.
    runs : sequence of TaskRun
        The tasks and their run directories.
    budget : int
        Evaluations per task (failures included).
    initial : int
        Initial (model-free) evaluations per task, taken from ``initial_design``.
    initial_design : callable
        ``initial_design(i) -> list of configurations`` for task ``i`` (deterministic, so a
        resumed run completes the same design).
    fit_model : callable
        ``fit_model(data, previous) -> LCM`` with task ``i`` of ``runs`` as model task
        ``model_task[i]``; ``previous`` is the last fitted model (for warm starts) or ``None``.
    model_task : sequence of int, optional
        Model output index of each run (default ``0 .. len(runs) - 1``).
    seed : int
        Seed of the proposals' candidate designs; also the records' ``run``.
    method : str
        The records' ``method``.
    comm : MPI communicator, optional
        Ranks sharing the evaluations (default: a single process).
    model_path : path, optional
        Where rank 0 writes the model after every fit.
    """

    def __init__(
        self,
        space: SearchSpace,
        loss_for: Callable[[dict[str, Any]], Callable[[Params], float]],
        runs: Sequence[TaskRun],
        budget: int,
        initial: int,
        initial_design: InitialHook,
        fit_model: ModelHook,
        model_task: Sequence[int] | None = None,
        seed: int = 0,
        method: str = "mla",
        comm: Any = None,
        model_path: str | Path | None = None,
    ) -> None:
        self.space, self.loss_for, self.runs = space, loss_for, list(runs)
        self.budget, self.initial = int(budget), int(initial)
        self.initial_design, self.fit_model = initial_design, fit_model
        self.model_task = list(model_task) if model_task is not None else list(range(len(runs)))
        self.seed, self.method, self.comm = int(seed), method, comm
        self.model_path = Path(model_path) if model_path else None
        self.rank = comm.Get_rank() if comm is not None else 0
        self.size = comm.Get_size() if comm is not None else 1
        self.model: LCM | None = None
        self._losses: dict[int, Callable[[Params], float]] = {}
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
        for i in open_tasks:
            rng = np.random.default_rng([self.seed, round_no, i])
            run = self.runs[i]
            params, _ = propose(self.model, self.model_task[i], self.space, run.task,
                                states[i][1], rng)
            if params is not None:
                items.append((i, params))
        return items

    # ----------------------------------------------------------------- all ranks
    def _evaluate(self, items: list[tuple[int, Params]], session: str, round_no: int) -> None:
        for k, (i, params) in enumerate(items):
            if k % self.size != self.rank:
                continue
            run = self.runs[i]
            if i not in self._losses:
                self._losses[i] = self.loss_for(run.task)
                self._logs[i] = EvaluationLog(
                    run.directory, self.rank, session,
                    meta={"task": run.id, "run": self.seed, "method": self.method})
            start, t0 = time.time(), time.perf_counter()
            loss: float | None
            try:
                loss, error = float(self._losses[i](params)), None
            except Exception as err:  # noqa: BLE001 - any failure of user code is recorded
                loss, error = None, f"{type(err).__name__}: {err}\n{traceback.format_exc(limit=3)}"
            if loss is not None and not math.isfinite(loss):
                loss, error = None, f"loss is not a finite number: {loss!r}"
            self._logs[i].append(params, loss, island=0, generation=round_no, start=start,
                                 seconds=time.perf_counter() - t0, error=error)

    def _share(self, value: Any) -> Any:
        """Rank 0's ``value`` on every rank, waited for by polling."""
        if self.comm is None or self.size == 1:
            return value
        if self.rank == 0:
            reqs = [self.comm.isend(value, dest=r, tag=TAG) for r in range(1, self.size)]
            for req in reqs:
                wait(req)
            return value
        return wait(self.comm.irecv(source=0, tag=TAG))

    def _barrier(self) -> None:
        if self.comm is not None and self.size > 1:
            req = self.comm.Ibarrier()
            while not req.Test():
                time.sleep(POLL)

    def run(self) -> list[dict[str, Any]]:
        """Run to the end of every task's budget; returns the summaries (on rank 0)."""
        if self.rank == 0:
            for run in self.runs:
                run.directory.mkdir(parents=True, exist_ok=True)
                (run.directory / "task.json").write_text(
                    json.dumps({"id": run.id, "task": run.task}))
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
        return [write_summary(r, self.method, self.seed, self.size) for r in self.runs]


def lcm_fitter(
    space: SearchSpace,
    task_space: SearchSpace | None,
    latent: int = 3,
    restarts: int = 3,
    max_points: int | None = None,
    log_output: bool = False,
    seed: int = 0,
    max_iter: int = 500,
) -> ModelHook:
    """The MLA model hook: an LCM over all tasks, warm-started from the previous fit."""

    def fit(data: list[TaskData], previous: LCM | None) -> LCM:
        model = build_lcm(data, space, task_space, latent, max_points, log_output)
        n_starts = restarts
        if previous is not None and previous.n_tasks == model.n_tasks:
            model.set_theta(previous.get_theta())
            n_starts = min(restarts, 2)  # the warm start plus one random start
        return model.fit(restarts=n_starts, seed=seed + len(model.y), max_iter=max_iter)

    return fit


def run_mla(
    space: SearchSpace,
    loss_for: Callable[[dict[str, Any]], Callable[[Params], float]],
    tasks: Sequence[tuple[str, dict[str, Any]]],
    out: str | Path,
    budget: int,
    initial: int,
    seed: int = 0,
    task_space: SearchSpace | None = None,
    latent: int = 3,
    restarts: int = 3,
    max_points: int | None = None,
    log_output: bool = False,
    comm: Any = None,
) -> list[dict[str, Any]]:
    """MLA over ``tasks`` (``(id, values)`` pairs): ``out/<id>/`` run dirs, ``out/model.json``.

    Parameters
    ----------
    budget, initial : int
        Evaluations per task in total, and how many of them come from the task's Latin
        hypercube before the model guides the search.
    latent, restarts, max_points, log_output
        LCM settings (see :func:`propulate.models.sampling.build_lcm` and :meth:`LCM.fit`).
    Other parameters as :class:`ModelGuidedLoop`.
    """
    out = Path(out)
    runs = [TaskRun(tid, dict(values), out / tid) for tid, values in tasks]
    designs = initial_designs(space, [r.task for r in runs], initial, seed)
    loop = ModelGuidedLoop(
        space, loss_for, runs, budget, initial, lambda i: designs[i],
        lcm_fitter(space, task_space, latent, restarts, max_points, log_output, seed),
        seed=seed, method="mla", comm=comm, model_path=out / "model.json",
    )
    return loop.run()
