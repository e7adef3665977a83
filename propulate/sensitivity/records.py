"""Parameter importance from a run's records, without the campaign's model.

The records of one task (every run directory of it, whatever method wrote them: the island
model, random search, Optuna, MLA, TLA2) are handed to Optuna's importance evaluators as the
completed trials of an in-memory study: each successful evaluation becomes a trial with the
space's distributions (:func:`propulate.baselines.optuna_study.distributions`: floats and
integers with their log scale, categoricals) and the record's loss (or its log) as value.
Failed, interrupted and pruned evaluations have no loss and are left out, as are records
outside the space.

The evaluators (``SensitivitySettings.evaluator``):

* ``fanova`` (default): functional ANOVA on a random forest fitted to the records (64 trees,
  seeded): a parameter's importance is the share of the forest's variance over the whole space
  that its main effect explains (normalized to sum to 1). The forest's marginals are taken over
  the whole space, so records crowded around an optimum, as an evolutionary search leaves
  them, are not read as the space's distribution.
* ``ped-anova``: how far the distribution of the parameter among the best 10 % of the records
  differs from the whole (Pearson divergence); it answers "which parameters set the good
  configurations apart", needs no forest and is quick.
* ``mdi``: mean decrease in impurity of a random forest.

Why Optuna's evaluators rather than our own estimate: Optuna is already this project's baseline
extra, its evaluators are maintained and tested upstream, and its fANOVA is the usual reference
for this question; a second implementation of the same forest walk would only add code to keep
in step. ``fanova`` and ``mdi`` need scikit-learn (the ``sensitivity`` extra). Optuna's fANOVA
walks the trees in Python: seconds for a hundred records, tens of seconds for a few hundred.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from propulate.runs.files import read_json
from propulate.runs.log import EVAL_DIR, iter_records
from propulate.runs.summary import SUMMARY_FILE, record_loss
from propulate.settings import SensitivitySettings
from propulate.space import Params, SearchSpace

#: Fewest successful evaluations a task needs for an importance estimate.
MIN_EVALUATIONS = 8
#: Evaluator names to Optuna's classes (and whether they take a seed).
EVALUATORS = {
    "fanova": ("FanovaImportanceEvaluator", True),
    "ped-anova": ("PedAnovaImportanceEvaluator", False),
    "mdi": ("MeanDecreaseImpurityImportanceEvaluator", True),
}


@dataclass
class TaskRecords:
    """The successful evaluations of one task over its run directories.

    Attributes
    ----------
    id : str
        Task id.
    task : dict or None
        Task values (``None`` for an objective without tasks).
    space : SearchSpace
        The parameter space.
    runs : list of str
        The run directories read.
    methods : list of str
        Their methods.
    params, losses : lists
        The successful evaluations in the space, and their losses.
    skipped : int
        Records left out (no loss, or outside the space).
    """

    id: str
    task: dict[str, Any] | None
    space: SearchSpace
    runs: list[str] = field(default_factory=list)
    methods: list[str] = field(default_factory=list)
    params: list[Params] = field(default_factory=list)
    losses: list[float] = field(default_factory=list)
    skipped: int = 0


@dataclass
class TaskImportance:
    """One task's parameter importance from its records.

    Attributes
    ----------
    id : str
        Task id (as in :class:`TaskRecords`).
    task : dict or None
        Task values.
    runs : list of str
        The run directories read.
    methods : list of str
        Their methods.
    evaluations : int
        Evaluations the estimate used.
    skipped : int
        Records left out.
    evaluator : str
        ``fanova``, ``ped-anova`` or ``mdi``.
    target : str
        What was analysed: ``"loss"`` or ``"log(loss)"``.
    importance : dict of str to float
        Per parameter (space order), normalized to sum to 1 (all 0 when nothing varies).
    """

    id: str
    task: dict[str, Any] | None
    runs: list[str]
    methods: list[str]
    evaluations: int
    skipped: int
    evaluator: str
    target: str
    importance: dict[str, float]

    def ranking(self) -> list[str]:
        """The parameters by decreasing importance (space order breaks ties)."""
        names = list(self.importance)
        return sorted(names, key=lambda n: (-self.importance[n], names.index(n)))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data."""
        return {
            "task_id": self.id,
            "task": self.task,
            "runs": self.runs,
            "methods": self.methods,
            "evaluations": self.evaluations,
            "skipped": self.skipped,
            "evaluator": self.evaluator,
            "target": self.target,
            "ranking": self.ranking(),
            "importance": self.importance,
        }


def run_directories(paths: Iterable[str | Path]) -> list[Path]:
    """Run directories (with ``evals/`` or ``summary.json``); a folder of them is expanded.

    Raises
    ------
    FileNotFoundError
        When a path does not exist or holds no run directory.
    """
    out: list[Path] = []
    for path in map(Path, paths):
        if not path.exists():
            raise FileNotFoundError(f"run directory not found: {path}")
        if (path / EVAL_DIR).is_dir() or (path / SUMMARY_FILE).is_file():
            out.append(path)
            continue
        found = sorted(
            p for p in path.iterdir() if (p / EVAL_DIR).is_dir() or (p / SUMMARY_FILE).is_file()
        )
        if not found:
            raise FileNotFoundError(f"{path}: neither a run directory nor a folder of them")
        out += found
    return out


def _run_identity(directory: Path) -> tuple[str, dict[str, Any] | None, str, dict | None]:
    """A run's task id, task values, method and space (from task.json, summary, run.json)."""
    spec = read_json(directory / "task.json") or {}
    summary = read_json(directory / SUMMARY_FILE) or {}
    meta = read_json(directory / "run.json") or {}
    task_id = spec.get("id", summary.get("task"))
    task = spec.get("task") if isinstance(spec.get("task"), dict) else None
    method = str(summary.get("method") or meta.get("method") or "?")
    label = str(task_id) if task_id is not None else directory.parent.name
    return label, task, method, meta.get("space")


def read_records(
    paths: Iterable[str | Path], space: SearchSpace | None = None
) -> list[TaskRecords]:
    """The successful evaluations of each task over the run directories, tasks in first-seen
    order.

    Parameters
    ----------
    paths : paths
        Run directories or folders of them.
    space : SearchSpace, optional
        The parameter space; default: each run's own (its ``run.json``, which ``evolve``
        writes).

    Raises
    ------
    ValueError
        When a run names no space and none is given, or two runs of a task have different
        spaces.
    """
    tasks: dict[str, TaskRecords] = {}
    for directory in run_directories(paths):
        label, values, method, spec = _run_identity(directory)
        if space is not None:
            run_space = space
        elif spec:
            run_space = SearchSpace.from_dict(spec)
        else:
            raise ValueError(f"{directory}: no run.json names the space; pass --space")
        held = tasks.get(label)
        if held is None:
            held = tasks[label] = TaskRecords(label, values, run_space)
        elif held.space.to_dict() != run_space.to_dict():
            raise ValueError(f"{directory}: task {label!r} was searched in another space")
        held.runs.append(str(directory))
        if method not in held.methods:
            held.methods.append(method)
        for rec in iter_records(directory):
            loss, params = record_loss(rec), rec.get("params")
            if loss is None or not isinstance(params, Mapping) or not held.space.in_bounds(params):
                held.skipped += 1
                continue
            held.params.append(held.space.canonical(params))
            held.losses.append(loss)
    return list(tasks.values())


def importance(
    space: SearchSpace,
    params: Sequence[Mapping[str, Any]],
    losses: Sequence[float],
    settings: SensitivitySettings | None = None,
    log_loss: bool = False,
) -> dict[str, float]:
    """Optuna's importance of each parameter for the given evaluations.

    Parameters
    ----------
    space : SearchSpace
        The parameters.
    params, losses : sequences
        Evaluated configurations (inside the space) and their losses.
    settings : SensitivitySettings, optional
        ``evaluator`` and ``seed``.
    log_loss : bool
        Analyse ``log(loss)`` (positive losses such as runtimes).

    Returns
    -------
    dict
        Parameter to importance, in space order, summing to 1 (all 0 when no parameter
        explains anything, e.g. constant losses). Optuna's evaluators use only the parameters
        present in every evaluation: in a conditional space, a parameter inactive in any of
        them gets 0 here (the model's Sobol indices, :mod:`propulate.sensitivity.model`,
        cover conditional parameters).

    Raises
    ------
    ValueError
        With fewer than :data:`MIN_EVALUATIONS` evaluations, or non-positive losses and
        ``log_loss``.
    """
    settings = settings or SensitivitySettings()
    import optuna

    from propulate.baselines.optuna_study import distributions

    if len(losses) < MIN_EVALUATIONS:
        raise ValueError(f"{len(losses)} successful evaluations: need at least {MIN_EVALUATIONS}")
    if log_loss and min(losses) <= 0:
        raise ValueError("log(loss) needs positive losses")
    values = [math.log(v) for v in losses] if log_loss else [float(v) for v in losses]
    dists = distributions(space)
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    study = optuna.create_study(direction="minimize")
    study.add_trials(
        [
            optuna.trial.create_trial(
                params=dict(p), distributions={n: dists[n] for n in p}, value=v
            )
            for p, v in zip(params, values, strict=True)
        ]
    )
    name, seeded = EVALUATORS[settings.evaluator]
    cls = getattr(optuna.importance, name)
    evaluator = cls(seed=settings.seed) if seeded else cls()
    if max(values) - min(values) <= 1e-12 * max(1.0, abs(max(values))):
        return dict.fromkeys(space.names, 0.0)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PED-ANOVA is flagged experimental
        found = optuna.importance.get_param_importances(study, evaluator=evaluator)
    return {n: float(found.get(n, 0.0)) for n in space.names}


def records_importance(
    paths: Iterable[str | Path],
    space: SearchSpace | None = None,
    settings: SensitivitySettings | None = None,
    log_loss: bool = False,
) -> list[TaskImportance]:
    """Per task, the importance of each parameter from the records of its runs.

    Parameters
    ----------
    paths : paths
        Run directories (or folders of them); runs of the same task id are pooled.
    space : SearchSpace, optional
        The parameter space (default: each run's ``run.json``).
    settings : SensitivitySettings, optional
        ``evaluator`` and ``seed``.
    log_loss : bool
        Analyse ``log(loss)``.
    """
    settings = settings or SensitivitySettings()
    out = []
    for data in read_records(paths, space):
        try:
            values = importance(data.space, data.params, data.losses, settings, log_loss)
        except ValueError as err:
            raise ValueError(f"task {data.id!r}: {err}") from None
        out.append(
            TaskImportance(
                data.id,
                data.task,
                data.runs,
                data.methods,
                len(data.losses),
                data.skipped,
                settings.evaluator,
                "log(loss)" if log_loss else "loss",
                values,
            )
        )
    return out
