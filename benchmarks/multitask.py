"""What the multitask benchmarks share: per-task tuners run in-process, single-task GP-EI,
timers of model fits, acquisition searches and evaluations, and the table of won pairs.

* :func:`tune_task` runs one of ``evolve``'s methods (Optuna TPE, the island model, random
  search) on one task, in this process on one rank, through the method table
  (:data:`propulate.methods.METHODS`), as ``evolve --method NAME --max-evaluations N`` does;
* :func:`gp_ei_run` is single-task GP-EI: MLA's loop on one task with a one-task model;
* :class:`Stopwatch` times the model hooks (:func:`propulate.models.mla.lcm_fitter`), the
  acquisition searches (:func:`propulate.models.acquisition.propose` as the loop calls it) and
  an objective's evaluations, by method;
* :func:`win_shares` / :func:`print_wins`: the share of pairs on which one method's score is
  strictly better than another's.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from propulate.methods import METHODS, Job
from propulate.models import loop as loop_module
from propulate.models import mla as mla_module
from propulate.runs.summary import RunSummary
from propulate.settings import EvolveSettings, LCMSettings, MLASettings
from propulate.space import Params, SearchSpace
from propulate.user_objective import bind_task

#: Timing categories of :class:`Stopwatch`.
PHASES = ("fit", "acquisition", "evaluation", "total", "total CPU")


class Stopwatch:
    """Seconds spent per method in model fits, acquisition searches, evaluations and in total
    (wall-clock; and the process's CPU seconds in total).

    ``with watch.method("mla"):`` charges what runs inside to ``"mla"``; the fits are those of
    :func:`propulate.models.mla.lcm_fitter` hooks (MLA's joint model and its local rounds'
    one-task models, single-task GP-EI), the acquisition searches the loop's calls of
    :func:`~propulate.models.acquisition.propose`, the evaluations those of objectives wrapped
    by :meth:`objective`. ``calls[method]`` counts the acquisition searches.
    """

    def __init__(self) -> None:
        self.seconds: dict[str, dict[str, float]] = {}
        self.calls: dict[str, int] = {}
        self.longest: dict[str, float] = {}
        self.current: str | None = None

    def add(self, phase: str, seconds: float) -> None:
        """Charge ``seconds`` of ``phase`` to the current method."""
        if self.current is not None:
            row = self.seconds.setdefault(self.current, dict.fromkeys(PHASES, 0.0))
            row[phase] += seconds

    @contextlib.contextmanager
    def method(self, name: str) -> Iterator[None]:
        """Charge fits, acquisition searches, evaluations and wall time inside to ``name``."""
        previous, self.current = self.current, name
        t0, c0 = time.perf_counter(), time.process_time()
        real_fitters = {k: getattr(mla_module, k) for k in ("lcm_fitter", "joint_fitter")}
        real_propose = loop_module.propose

        def timed_fitter(real: Callable[..., Any]) -> Callable[..., Any]:
            def fitter(*args: Any, **kwargs: Any) -> Any:
                hook = real(*args, **kwargs)

                def timed(*a: Any) -> Any:
                    t = time.perf_counter()
                    try:
                        return hook(*a)
                    finally:
                        self.add("fit", time.perf_counter() - t)

                return timed

            return fitter

        def propose(*args: Any, **kwargs: Any) -> Any:
            t = time.perf_counter()
            try:
                return real_propose(*args, **kwargs)
            finally:
                dt = time.perf_counter() - t
                self.add("acquisition", dt)
                self.calls[name] = self.calls.get(name, 0) + 1
                self.longest[name] = max(self.longest.get(name, 0.0), dt)

        for k, real in real_fitters.items():
            setattr(mla_module, k, timed_fitter(real))
        loop_module.propose = propose  # type: ignore[assignment]
        try:
            yield
        finally:
            for k, real in real_fitters.items():
                setattr(mla_module, k, real)
            loop_module.propose = real_propose
            self.add("total", time.perf_counter() - t0)
            self.add("total CPU", time.process_time() - c0)
            self.current = previous

    def as_dict(self) -> dict[str, Any]:
        """The seconds, calls and longest calls (JSON-ready, for :func:`print_times`)."""
        return {"seconds": self.seconds, "calls": self.calls, "longest": self.longest}

    def objective(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """``fn(params, task)`` with its seconds charged to the current method's evaluations."""

        def timed(params: Params, task: Mapping[str, Any]) -> Any:
            t = time.perf_counter()
            try:
                return fn(params, task)
            finally:
                self.add("evaluation", time.perf_counter() - t)

        return timed


def tune_task(
    method: str,
    objective: Callable[..., Any],
    space: SearchSpace,
    tid: str,
    task: dict[str, Any],
    out: Path,
    seed: int,
    evaluations: int,
) -> tuple[Params | None, float | None]:
    """Best configuration and loss of ``evolve``'s ``method`` with ``evaluations`` on one task.

    Runs on one rank (``MPI.COMM_SELF``) in this process: sequential TPE and a one-worker
    island model, each seeing every result before its next proposal.
    """
    from mpi4py import MPI

    out.mkdir(parents=True, exist_ok=True)
    settings = EvolveSettings(
        method=method, seed=seed, max_evaluations=evaluations, progress_interval=1e9
    )
    job = Job(
        bind_task(objective, task),
        space,
        {"id": tid, "task": task},
        out,
        settings,
        {"task": tid, "run": f"seed{seed}", "method": method},
    )
    result = METHODS[method].run(job, MPI.COMM_SELF)
    return result.best_params, result.best_loss


def gp_ei_run(
    space: SearchSpace,
    objective: Callable[..., Any] | str,
    tid: str,
    task: dict[str, Any],
    out: Path,
    budget: int,
    initial: int,
    seed: int,
    log_output: bool = False,
) -> RunSummary:
    """Single-task GP-EI: MLA's loop on one task with a one-task model (no cap, 2 starts)."""
    mla = MLASettings(budget=budget, initial=initial, seed=seed)
    lcm = LCMSettings(latent=1, restarts=2, max_points=None, log_output=log_output)
    return mla_module.run_mla(space, objective, [(tid, task)], out, mla, lcm)[0]


def win_shares(
    scores: Mapping[str, np.ndarray], lower: bool = True
) -> dict[tuple[str, str], float]:
    """Share of pairs on which method ``a``'s score is strictly better than ``b``'s."""
    out = {}
    for a, sa in scores.items():
        for b, sb in scores.items():
            if a != b:
                out[a, b] = float(np.mean(sa < sb if lower else sa > sb))
    return out


def print_wins(
    labels: Mapping[str, str], shares: Mapping[tuple[str, str], float], keys: Sequence[str]
) -> None:
    """The matrix of :func:`win_shares`: row method better than column method."""
    width, cell = max(len(labels[k]) for k in keys) + 1, {k: max(5, len(k)) for k in keys}
    print("wins: row better than column")
    print(" " * width + " " + " ".join(f"{k:>{cell[k]}}" for k in keys))
    for a in keys:
        cells = ["{:>{}}".format("-" if a == b else f"{shares[a, b]:.0%}", cell[b]) for b in keys]
        print(f"{labels[a]:<{width}} " + " ".join(cells))


def print_times(records: Sequence[Mapping[str, Any]], labels: Mapping[str, str]) -> None:
    """Seconds per seed by method and phase (means over ``records``, each a
    :meth:`Stopwatch.as_dict`), with the acquisition searches' mean and longest call."""
    print(f"\n== seconds per seed ({len(records)} seeds)")
    print(f"{'method':<15} " + " ".join(f"{ph:>10}" for ph in (*PHASES, "other")) + "  acq/call")
    for k in records[0]["seconds"]:
        row = {ph: sum(r["seconds"][k][ph] for r in records) / len(records) for ph in PHASES}
        other = row["total"] - row["fit"] - row["acquisition"] - row["evaluation"]
        calls = sum(r["calls"].get(k, 0) for r in records)
        acq = sum(r["seconds"][k]["acquisition"] for r in records)
        longest = max(r["longest"].get(k, 0.0) for r in records)
        per = f"{acq / calls:.2f} (max {longest:.2f})" if calls else "-"
        cells = " ".join(f"{row[ph]:>10.1f}" for ph in PHASES)
        print(f"{labels.get(k, k):<15} {cells} {other:>10.1f}  {per}")
