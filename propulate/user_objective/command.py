"""A program as the objective: check it, run it with the parameters, read its loss from stdout,
and keep the details of its runs in the records."""

from __future__ import annotations

import dataclasses
import os
import shlex
import shutil
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from propulate.runs.outcome import OK, EvaluationError, Outcome, failure
from propulate.settings import CommandSettings
from propulate.user_objective import template
from propulate.user_objective.noise import median
from propulate.user_objective.process import Run, clean_environment, run_once
from propulate.user_objective.progress import ProgressReader, compile_progress
from propulate.user_objective.result import ResultError, ResultSpec, result_spec

_D = CommandSettings()

#: Keys of the ``objective:`` mapping in a campaign config.
CONFIG_KEYS = (
    "command",
    "result",
    "timeout",
    "repeats",
    "confirm_repeats",
    "launcher",
    "env",
    "workdir",
    "kill_grace",
    "nproc",
    "progress",
)


class Measured(float):
    """A loss that carries the details of its measurement (every run's loss and time).

    It is a ``float``; :func:`propulate.runs.outcome.outcome_of` copies :attr:`details` into the
    outcome, so the record keeps every repeat.
    """

    details: dict[str, Any]

    def __new__(cls, value: float, details: dict[str, Any]) -> Measured:
        obj = super().__new__(cls, value)
        obj.details = details
        return obj


@dataclass(frozen=True)
class Command:
    """Run a program with the parameters filled in; its loss is a number in its stdout.

    Parameters
    ----------
    command : str
        The program and its arguments, with ``{name}`` placeholders for parameters and task
        values, e.g. ``"./app --nb {nb} --n {n}"``. Split with :func:`shlex.split` first, then
        filled per argument; run without a shell (write ``bash -c '...'`` for one).
    result : str or mapping or None
        A regex whose group 1 (last match) is the loss, or ``{"json": KEY}``; may be left out
        with ``progress``: the last progress value is then the loss. With several objectives
        (``--objectives``) one per objective, ``{name: regex or {"json": KEY}, ...}``.
    timeout : float or None
        Seconds per run; then the run's whole process group is killed and the evaluation fails.
    repeats : int
        Runs per evaluation; the loss is their median and every run is kept in the details.
    launcher : str or None
        A prefix for MPI programs, e.g. ``"mpiexec -n {nproc}"`` or
        ``"srun -n {nproc} --exact"``; placeholders allowed.
    env : mapping or None
        Extra environment variables (values may hold placeholders), e.g.
        ``{"OMP_NUM_THREADS": "{threads}"}``.
    workdir : str
        Directory the program runs in (relative paths: from the tuner's directory).
    confirm_repeats : int or None
        Extra runs made by :meth:`confirm`; ``None`` means ``repeats``, at least 2.
    kill_grace : float
        Seconds between SIGTERM and SIGKILL when a run's process group is killed.
    nproc : int or None
        Value of ``{nproc}`` when it is neither a parameter nor a task value.
    task : mapping or None
        Task values bound with :meth:`bind` (``"{m}"`` in the command reads them).
    progress : str or None
        A regex matched against each stdout line while the program runs: the intermediate
        values (group 1 the value, or group 1 the step and group 2 the value), reported to
        the run's pruner, which may end the program early
        (:mod:`propulate.user_objective.progress`). Needs ``repeats`` 1.

    Notes
    -----
    **Environment.** The program inherits the tuner's environment minus the variables of MPI
    launchers and of the current Slurm step (see :func:`propulate.user_objective.process.clean_environment`),
    so ``mpiexec`` or ``srun`` started by a rank of an MPI tuner starts a job of its own.

    **Failure.** A non-zero exit, a timeout, a program that cannot start or output without
    the result is an :class:`~propulate.runs.outcome.EvaluationError` whose ``details`` hold
    ``exit_code``, ``stderr`` (its last lines), ``timed_out``, ``command`` and the runs so far.

    **Re-measurement rule.** Noise makes a lucky run look best. When an evaluation would become
    its island's new best, the engine calls :meth:`confirm`: the configuration is run
    ``confirm_repeats`` more times and its loss becomes the median of *all* its runs (the first
    ones included). If a re-run fails, the outcome is failed: a configuration that crashes or
    times out now and then is no trustworthy best. The island model also confirms a loss that
    is an outlier against its nearest evaluated neighbours (more than 3 times above or below
    their median, :func:`propulate.user_objective.noise.is_outlier`), so one disturbed run does not
    mislead the search either way.
    """

    command: str
    result: str | Mapping[str, str] | ResultSpec | None = None
    timeout: float | None = _D.timeout
    repeats: int = _D.repeats
    launcher: str | None = None
    env: Mapping[str, Any] | None = None
    workdir: str = _D.workdir
    confirm_repeats: int | None = _D.confirm_repeats
    kill_grace: float = _D.kill_grace
    nproc: int | None = None
    task: Mapping[str, Any] | None = field(default=None, compare=False)
    progress: str | None = None

    def __post_init__(self) -> None:
        pattern = None if self.progress is None else compile_progress(self.progress)
        object.__setattr__(self, "_progress", pattern)
        if self.result is None and pattern is None:
            raise ValueError("objective: a command objective needs 'result' (or 'progress')")
        spec = (
            None
            if self.result is None
            else self.result
            if isinstance(self.result, ResultSpec)
            else result_spec(self.result)
        )
        object.__setattr__(self, "_spec", spec)
        if pattern is not None and self.repeats != 1:
            raise ValueError("objective progress needs repeats 1 (one run per evaluation)")
        argv = template.split(self.launcher, "launcher") if self.launcher else []
        object.__setattr__(self, "_argv", argv + template.split(self.command))
        _positive_int(self.repeats, "repeats")
        if self.confirm_repeats is not None:
            _positive_int(self.confirm_repeats, "confirm_repeats")
        if self.nproc is not None:
            _positive_int(self.nproc, "nproc")
        for name in ("timeout", "kill_grace"):
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or value < 0
                or (name == "timeout" and value == 0)
            ):
                raise ValueError(
                    f"objective {name} must be a positive number of seconds, got {value!r}"
                )
        if self.env is not None and (
            not isinstance(self.env, Mapping) or not all(isinstance(k, str) for k in self.env)
        ):
            raise ValueError(f"objective env must map variable names to values, got {self.env!r}")

    @classmethod
    def from_config(cls, mapping: Mapping[str, Any]) -> Command:
        """Build from the ``objective:`` mapping of a config (keys: :data:`CONFIG_KEYS`).

        Raises
        ------
        ValueError
            On a missing ``command`` or ``result``, an unknown key, or a bad value.
        """
        if not isinstance(mapping, Mapping):
            raise ValueError(f"objective must be a mapping with 'command', got {mapping!r}")
        unknown = sorted(set(mapping) - set(CONFIG_KEYS))
        if unknown:
            raise ValueError(
                f"objective: unknown key(s) {', '.join(unknown)} (known: {', '.join(CONFIG_KEYS)})"
            )
        if "command" not in mapping:
            raise ValueError("objective: a command objective needs 'command'")
        if "result" not in mapping and "progress" not in mapping:
            raise ValueError("objective: a command objective needs 'result' (or 'progress')")
        if not isinstance(mapping["command"], str):
            raise ValueError(f"objective command must be a string, got {mapping['command']!r}")
        return cls(**dict(mapping))

    def to_config(self) -> dict[str, Any]:
        """The ``objective:`` mapping this command was built from (defaults left out)."""
        out: dict[str, Any] = {"command": self.command}
        if self._spec is not None:
            out["result"] = self._spec.to_config()
        for f in dataclasses.fields(self):
            if f.name not in out and f.name != "task" and getattr(self, f.name) != f.default:
                value = getattr(self, f.name)
                out[f.name] = dict(value) if isinstance(value, Mapping) else value
        return out

    def bind(self, task: Mapping[str, Any] | None) -> Command:
        """This command with ``task``'s values available to its placeholders."""
        return dataclasses.replace(self, task=dict(task) if task is not None else None)

    @property
    def _texts(self) -> list[str]:
        return [*self._argv, *(str(v) for v in (self.env or {}).values()), self.workdir]

    @property
    def placeholders(self) -> list[str]:
        """Names used as ``{name}`` in the command, launcher, env values and workdir."""
        return sorted({p for t in self._texts for p in template.placeholders(t)})

    def _known(self, names: Iterable[str]) -> list[str]:
        return sorted({*names, *(["nproc"] if self.nproc is not None else [])})

    def check(self, space_names: Iterable[str], task_names: Iterable[str] = ()) -> None:
        """Fail before any evaluation on what would make every evaluation fail.

        Raises
        ------
        ValueError
            A placeholder that is neither a parameter nor a task value (naming it and the
            known names), a program not on PATH or not executable, a missing ``workdir``.
        """
        known = self._known([*space_names, *task_names, *(self.task or {})])
        missing = template.unknown(self._texts, known)
        if missing:
            raise ValueError(
                f"objective command: unknown placeholder(s) "
                f"{', '.join('{' + m + '}' for m in missing)}; known names: "
                f"{', '.join(known) or '(none)'}"
            )
        if not template.placeholders(self.workdir) and not os.path.isdir(self.workdir):
            raise ValueError(f"objective workdir {self.workdir!r} is not a directory")
        path = self._environment({}, fill=False).get("PATH")
        for program in self._programs():
            if template.placeholders(program):
                continue
            check_program(program, self.workdir, path)

    def _programs(self) -> list[str]:
        progs = [self._argv[0]]
        if self.launcher:
            progs.append(template.split(self.command)[0])
        return progs

    def _values(self, params: Mapping[str, Any], task: Mapping[str, Any] | None) -> dict[str, Any]:
        values: dict[str, Any] = {"nproc": self.nproc} if self.nproc is not None else {}
        values.update(task if task is not None else (self.task or {}))
        values.update(params)
        missing = template.unknown(self._texts, values)
        if missing:
            raise ValueError(
                f"objective command: no value for placeholder(s) "
                f"{', '.join('{' + m + '}' for m in missing)}; known names: "
                f"{', '.join(sorted(values)) or '(none)'}"
            )
        return values

    def _environment(self, values: Mapping[str, Any], fill: bool = True) -> dict[str, str]:
        env = clean_environment()
        for key, value in (self.env or {}).items():
            env[key] = template.fill(str(value), values) if fill else str(value)
        return env

    def argv(self, params: Mapping[str, Any], task: Mapping[str, Any] | None = None) -> list[str]:
        """The launcher and command as run for ``params`` (and ``task``, else the bound one)."""
        return template.fill_argv(self._argv, self._values(params, task))

    def __call__(
        self,
        params: Mapping[str, Any],
        task: Any = None,
        report: Callable[[Any, Any], bool] | None = None,
    ) -> Measured:
        """Run ``repeats`` times; the loss is the median (a :class:`Measured` float).

        ``report`` (given by the engine, :mod:`propulate.engine.steps`) receives the progress
        values; when it says stop, the program is ended and the last value returned (the
        engine records the evaluation as pruned).

        Raises
        ------
        EvaluationError
            When a run fails (see the class notes).
        """
        if task is not None and not isinstance(task, Mapping):
            raise TypeError(
                "a command objective takes (params) or (params, task); run MPI "
                "programs with 'launcher', not several ranks per worker"
            )
        runs = self._measure(params, task, self.repeats, [], report)
        if isinstance(runs[-1]["loss"], dict):  # one result per objective
            return measured_values(runs)  # type: ignore[return-value]
        return Measured(median([r["loss"] for r in runs]), runs_summary(runs))

    def confirm(
        self, params: Mapping[str, Any], outcome: Outcome, task: Mapping[str, Any] | None = None
    ) -> Outcome:
        """Re-measure an ok ``outcome`` of ``params`` (see the re-measurement rule).

        Returns
        -------
        Outcome
            ``outcome`` unchanged if it is not ok; otherwise an ok outcome whose loss is the
            median of all runs (``details["confirmed"]`` true, ``details["first_loss"]`` the
            loss before), or a failed one if a re-run failed.
        """
        if not outcome.ok:
            return outcome
        n = self.confirm_repeats if self.confirm_repeats is not None else max(self.repeats, 2)
        prior = list(outcome.details.get("runs") or [{"loss": outcome.loss}])
        t = time.perf_counter()
        try:
            runs = self._measure(params, task, n, prior)
        except EvaluationError as err:
            out = failure(err)
            out.details["confirmed"] = False
        else:
            details = {
                **outcome.details,
                **runs_summary(runs),
                "confirmed": True,
                "first_loss": outcome.loss,
            }
            out = Outcome(median([r["loss"] for r in runs]), OK, details=details)
        out.start, out.seconds = outcome.start, outcome.seconds + time.perf_counter() - t
        return out

    def _measure(
        self,
        params: Mapping[str, Any],
        task: Mapping[str, Any] | None,
        n: int,
        prior: list[dict[str, Any]],
        report: Callable[[Any, Any], bool] | None = None,
    ) -> list[dict[str, Any]]:
        values = self._values(params, task)
        argv = template.fill_argv(self._argv, values)
        env = self._environment(values)
        cwd = template.fill(self.workdir, values)
        runs = list(prior)
        for i in range(n):
            where = f"run {i + 1} of {n}: " if n > 1 else ""
            reader = None if self._progress is None else ProgressReader(self._progress, report)
            try:
                run = run_once(argv, env, cwd, self.timeout, self.kill_grace, reader)
            except OSError as err:
                raise EvaluationError(
                    f"{where}cannot run {shlex.join(argv)}: {err}",
                    failure_details(argv, None, runs),
                ) from None
            entry = {
                "loss": None,
                "seconds": run.seconds,
                "exit_code": run.exit_code,
                "timed_out": run.timed_out,
            }
            runs.append(entry)
            if reader is not None:
                reader.finish()
                if reader.stopped:  # the pruner ended it: the last value stands for the run
                    entry["loss"], entry["stopped"] = reader.values[-1][1], True
                    return runs
            problem = self._problem(run)
            if problem is None:
                try:
                    entry["loss"] = self._loss(run.stdout, reader)
                except ResultError as err:
                    problem = str(err)
            if problem is not None:
                details = failure_details(argv, run, runs)
                raise EvaluationError(f"{where}{problem}", details)
        return runs

    def _loss(self, stdout: str, reader: ProgressReader | None) -> float | dict[str, float]:
        if self._spec is not None:
            return self._spec.parse(stdout)
        if reader is None or not reader.values:
            raise ResultError(f"no progress value (regex {self.progress!r}) in stdout")
        return reader.values[-1][1]

    def _problem(self, run: Run) -> str | None:
        if run.timed_out:
            return f"command timed out after {self.timeout:g} s (process group killed)"
        if run.exit_code != 0:
            last = run.stderr_tail.splitlines()[-1:] if run.stderr_tail else []
            return f"command exited with code {run.exit_code}" + (f": {last[0]}" if last else "")
        return None


def _positive_int(value: Any, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"objective {name} must be a positive integer, got {value!r}")


# What a command's records keep of its runs, and the check of its program before any run.


def check_program(program: str, workdir: str, path: str | None) -> None:
    """``ValueError`` unless ``program`` exists and is executable (a path, relative to
    ``workdir``, or a name on ``path``)."""
    if "/" in program:
        full = program if os.path.isabs(program) else os.path.join(workdir, program)
        if not os.path.isfile(full):
            raise ValueError(
                f"objective command: program {program!r} not found (looked for {full!r})"
            )
        if not os.access(full, os.X_OK):
            raise ValueError(f"objective command: program {program!r} is not executable")
    elif shutil.which(program, path=path) is None:
        raise ValueError(f"objective command: program {program!r} not found on PATH")


def runs_summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The record details of a command's runs: each run, their losses and their times."""
    return {
        "runs": runs,
        "losses": [r.get("loss") for r in runs],
        "times": [r.get("seconds") for r in runs],
    }


class MeasuredValues(dict):
    """One value per objective (the median over a command's repeats), with the details of
    its runs (:func:`propulate.runs.outcome.outcome_of` copies them into the record)."""

    details: dict[str, Any]


def measured_values(runs: list[dict[str, Any]]) -> MeasuredValues:
    """The per-objective medians of runs whose ``loss`` is ``{name: value}``."""
    from statistics import median

    names = list(runs[-1]["loss"])
    out = MeasuredValues({n: median(r["loss"][n] for r in runs) for n in names})
    out.details = runs_summary(runs)
    return out


def failure_details(argv: list[str], run: Run | None, runs: list[dict[str, Any]]) -> dict[str, Any]:
    """What a failed evaluation's record keeps of a program's run: the command line, the
    runs' summary, the exit code, whether it timed out, the last lines of stderr and stdout."""
    details: dict[str, Any] = {"command": shlex.join(argv), **runs_summary(runs)}
    details["exit_code"] = run.exit_code if run else None
    details["timed_out"] = run.timed_out if run else False
    details["stderr"] = run.stderr_tail if run else ""
    if run is not None:
        details["stdout"] = "\n".join(run.stdout.splitlines()[-5:])
    return details
