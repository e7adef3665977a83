"""What a run directory was started with (``DIR/run.json``), checked on every resume.

``evolve`` writes :class:`RunMetadata` (objective, space, task, method, seed, and the stopping
criteria and propulate version of the latest start). A resume with another objective, space,
task, method or seed is refused before any evaluation (:func:`check_resume`), so one directory
always holds one run.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from propulate.runs.files import write_json

RUN_FILE = "run.json"


class RunMismatch(ValueError):
    """A run directory was started with another space, objective, task, method or seed."""


@dataclass
class RunMetadata:
    """What a run directory was started with (``DIR/run.json``), checked on every resume.

    Attributes
    ----------
    objective : str
        The objective reference, ``"module:function"``.
    space : dict
        The search space as data (:meth:`propulate.space.SearchSpace.to_dict`).
    method : str
        The optimizer (``propulate``, ``random``, ``optuna``).
    run : str
        Run id written into the records, e.g. ``"seed1"``.
    seed : int or None
        The run's seed.
    task : dict or None
        The task spec ``{"id": ..., "task": {...}}`` (``None`` without a task).
    max_evaluations : int or None
        The evaluation budget of the latest start (it may grow from one start to the next).
    generations : int or None
        Generations per worker of the latest start.
    time_limit : float or None
        Wall-clock limit in seconds of the latest start.
    started : float
        Unix time (seconds) of the latest start.
    version : str
        ``propulate.__version__`` of the latest start (empty in run files from before 2.0).
    objectives : str or None
        The declared objectives, ``"name:min,name:max"`` (``None``: one loss, minimised).
    threads : dict or None
        The BLAS/OpenMP threads per rank of the latest start and why
        (:meth:`propulate.engine.threads.ThreadChoice.to_dict`; rank 0's).
    propagator : dict or None
        The island model's propagator of the latest start: ``{"spec": ...}``, and for ``auto``
        its choice and reason (:func:`propulate.plugins.resolve.describe_choice`).
    """

    objective: str
    space: dict[str, Any]
    method: str
    run: str
    seed: int | None = None
    task: dict[str, Any] | None = None
    max_evaluations: int | None = None
    generations: int | None = None
    time_limit: float | None = None
    started: float = 0.0
    version: str = ""
    objectives: str | None = None
    threads: dict[str, Any] | None = None
    propagator: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The metadata as JSON-ready data (``objectives`` only when declared, ``threads``
        only when known)."""
        data = asdict(self)
        for key in ("objectives", "threads", "propagator"):
            if data[key] is None:
                del data[key]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunMetadata:
        """Read metadata written by :meth:`to_dict` (unknown keys are ignored)."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


def write_run_metadata(directory: str | Path, meta: RunMetadata) -> Path:
    """Write ``DIR/run.json`` atomically."""
    return write_json(Path(directory) / RUN_FILE, meta.to_dict())


def read_run_metadata(directory: str | Path) -> RunMetadata | None:
    """The metadata of a run directory, or ``None`` when it has none.

    Raises
    ------
    RunMismatch
        When ``run.json`` exists but cannot be read as metadata.
    """
    path = Path(directory) / RUN_FILE
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text())
        return RunMetadata.from_dict(data)
    except (OSError, json.JSONDecodeError, TypeError, AttributeError) as err:
        raise RunMismatch(f"cannot read {path}: {err}") from None


def describe_dimension(spec: dict[str, Any]) -> str:
    """A dimension of :meth:`SearchSpace.to_dict` in words, e.g. ``"in [1, 128] (log)"``."""
    if "choices" in spec:
        return "in {" + ", ".join(str(c) for c in spec["choices"]) + "}"
    text = f"in [{_number(spec.get('low'))}, {_number(spec.get('high'))}]"
    if spec.get("type") == "int":
        text += " (integer)"
    return text + (" (log)" if spec.get("log") else "")


def _number(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def run_differences(old: RunMetadata, new: RunMetadata) -> list[str]:
    """What ``new`` changes of the run ``old`` started, one phrase each (empty: nothing).

    Compared: the objective, the task, the method, the run id and seed, and the space (each
    parameter's kind, bounds, scale and choices, parameters added or removed, the
    constraint). The stopping criteria may change from one start to the next, and so may the
    order of the parameters.
    """
    out: list[str] = []
    if old.objective != new.objective:
        out.append(f"objective changed from {old.objective} to {new.objective}")
    if old.objectives != new.objectives:
        out.append(f"objectives changed from {old.objectives} to {new.objectives}")
    if old.method != new.method:
        out.append(f"method changed from {old.method} to {new.method}")
    if old.run != new.run or old.seed != new.seed:
        out.append(f"run changed from {old.run} (seed {old.seed}) to {new.run} (seed {new.seed})")
    if _task(old.task) != _task(new.task):  # the id and values; other fields may change
        out.append(f"task changed from {_task(old.task)} to {_task(new.task)}")
    before = dict(old.space.get("parameters", {}))
    after = dict(new.space.get("parameters", {}))
    for name, spec in before.items():
        if name not in after:
            out.append(f"parameter {name} {describe_dimension(spec)} was removed")
        elif after[name] != spec:
            out.append(
                f"parameter {name} was {describe_dimension(spec)}, now "
                f"{describe_dimension(after[name])}"
            )
    for name, spec in after.items():
        if name not in before:
            out.append(f"parameter {name} {describe_dimension(spec)} was added")
    if old.space.get("constraint") != new.space.get("constraint"):
        out.append(
            f"constraint changed from {old.space.get('constraint')} to "
            f"{new.space.get('constraint')}"
        )
    return out


def _task(spec: dict[str, Any] | None) -> str:
    if spec is None:
        return "none"
    return f"{spec.get('id')} {json.dumps(spec.get('task'), sort_keys=True)}"


def check_resume(directory: str | Path, meta: RunMetadata) -> RunMetadata | None:
    """Check that starting ``meta`` in ``directory`` continues the run it holds.

    Returns the stored metadata (``None`` for a new directory). Writes nothing.

    Raises
    ------
    RunMismatch
        One line naming the directory and the first difference (and how many more there are).
    """
    old = read_run_metadata(directory)
    if old is None:
        return None
    diffs = run_differences(old, meta)
    if diffs:
        more = f" (and {len(diffs) - 1} more change(s))" if len(diffs) > 1 else ""
        raise RunMismatch(
            f"run directory {directory}: {diffs[0]}{more}; resume it unchanged "
            "or use another --out for a new run"
        )
    return old
