"""Paired re-measurement: the speedup of tuned configurations over a default, drift cancelled.

A speedup ``default loss / tuned loss`` from two measurements taken minutes apart mixes the
tuning gain with whatever the machine did in between: on a shared or virtual machine the speed
of one configuration drifts by tens of percent within minutes, more than many tuning gains.
Each tuning method's best loss is also the minimum over its noisy evaluations, so it is biased
low (the more evaluations, the more so).

Here the default and every method's best configuration are measured again in one job, in
rounds: each round measures every distinct configuration once, one right after the other, and
the order rotates from round to round so that none is always first. Each round gives one ratio
``default / tuned`` per method from measurements seconds apart; the speedup is the median of
those ratios over the rounds, reported with their smallest and largest value. A method whose
best configuration is the default gets the ratio 1 exactly (it is measured once per round).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from propulate.methods import METHODS, is_search
from propulate.runs.declared_objectives import Objectives
from propulate.runs.outcome import evaluate
from propulate.runs.summary import read_summary

#: Label of the default configuration in the measurements.
DEFAULT = "default"
#: Methods that measure given configurations instead of tuning: never a contender.
REFERENCE_METHODS = tuple(name for name in METHODS if not is_search(name))
#: Default rounds of a paired re-measurement.
PAIRED_ROUNDS = 5


@dataclass(frozen=True)
class Contender:
    """A tuned configuration to compare with the default.

    Attributes
    ----------
    label : str
        The method, with the run id when a method has several runs (``propulate-seed2``).
    method : str
        The tuning method.
    run : str
        The run directory it comes from.
    params : dict
        Its best configuration.
    tuning_loss : float
        Its best loss during tuning.
    """

    label: str
    method: str
    run: str
    params: dict[str, Any]
    tuning_loss: float


def contenders(run_dirs: Sequence[str | Path]) -> list[Contender]:
    """The best configuration of every tuning run (runs without a summary or a success skipped).

    Raises
    ------
    FileNotFoundError
        When a run directory does not exist.
    """
    found: list[tuple[str, str, Path, dict[str, Any], float]] = []
    for directory in map(Path, run_dirs):
        if not directory.is_dir():
            raise FileNotFoundError(f"run directory not found: {directory}")
        summary = read_summary(directory)
        if summary is None or summary.best_params is None or summary.best_loss is None:
            continue
        if summary.method in REFERENCE_METHODS:
            continue
        found.append(
            (summary.method, summary.run, directory, summary.best_params, summary.best_loss)
        )
    methods = [m for m, *_ in found]
    return [
        Contender(
            m if methods.count(m) == 1 else f"{m}-{run}", m, str(directory), dict(params), loss
        )
        for m, run, directory, params, loss in found
    ]


def round_order(n: int, round_no: int) -> list[int]:
    """The order of ``n`` configurations in round ``round_no``: rotated by one per round."""
    return [(round_no + i) % n for i in range(n)]


def _key(params: Mapping[str, Any]) -> str:
    return json.dumps(dict(params), sort_keys=True)


@dataclass(frozen=True)
class Measurement:
    """One measurement of a paired comparison.

    Attributes
    ----------
    round : int
        The round (from 0).
    config : int
        Index into the distinct configurations (0 is the default).
    loss : float or None
        The measured loss (None when the evaluation failed).
    start : float
        Its start (Unix time).
    """

    round: int
    config: int
    loss: float | None
    start: float


def measure_rounds(
    loss: Callable[[dict[str, Any]], Any],
    configs: Sequence[Mapping[str, Any]],
    rounds: int,
    progress: Callable[[Measurement], None] | None = None,
    objectives: Objectives | None = None,
) -> list[Measurement]:
    """Measure every configuration once per round, in :func:`round_order`.

    Parameters
    ----------
    loss : callable
        The objective bound to the task (``params -> loss``).
    configs : sequence of dict
        The distinct configurations.
    rounds : int
        How many rounds.
    progress : callable, optional
        Called with each measurement as it is taken.
    objectives : Objectives, optional
        The declared objectives the objective returns (one, or with weights): a measurement
        is their :meth:`~propulate.runs.declared_objectives.Objectives.loss_of`.
    """
    out = []
    for r in range(rounds):
        for i in round_order(len(configs), r):
            outcome = evaluate(loss, dict(configs[i]), objectives=objectives)
            value = outcome.loss if outcome.ok else None
            m = Measurement(r, i, value, outcome.start)
            out.append(m)
            if progress is not None:
                progress(m)
    return out


def _positive(value: float | None) -> bool:
    return value is not None and math.isfinite(value) and value > 0


def speedups(
    measurements: Sequence[Measurement], index: Mapping[str, int], rounds: int
) -> list[dict[str, Any]]:
    """Per contender: the median over rounds of ``default / tuned`` with its range.

    Parameters
    ----------
    measurements : sequence of Measurement
        From :func:`measure_rounds`; configuration 0 is the default.
    index : mapping of str to int
        Contender label to its configuration's index.
    rounds : int
        The number of rounds measured.

    Returns
    -------
    list of dict
        ``label``, ``speedup`` (median ratio; NaN without a pair), ``low``, ``high`` (the
        smallest and largest ratio), ``pairs`` (rounds where both measurements succeeded),
        ``default_loss`` and ``loss`` (medians of the measured losses).
    """
    by = {(m.round, m.config): m.loss for m in measurements}
    rows = []
    for label, i in index.items():
        ratios, own, base = [], [], []
        for r in range(rounds):
            d, t = by.get((r, 0)), by.get((r, i))
            if _positive(d) and _positive(t):
                assert d is not None and t is not None
                ratios.append(d / t)
                own.append(t)
                base.append(d)
        rows.append(
            {
                "label": label,
                "speedup": float(np.median(ratios)) if ratios else math.nan,
                "low": min(ratios, default=math.nan),
                "high": max(ratios, default=math.nan),
                "pairs": len(ratios),
                "default_loss": float(np.median(base)) if base else math.nan,
                "loss": float(np.median(own)) if own else math.nan,
            }
        )
    return rows


def paired_comparison(
    loss: Callable[[dict[str, Any]], Any],
    default: Mapping[str, Any],
    tuned: Sequence[Contender],
    rounds: int,
    progress: Callable[[Measurement, str], None] | None = None,
    objectives: Objectives | None = None,
) -> dict[str, Any]:
    """Re-measure the default and the contenders in interleaved rounds.

    Parameters
    ----------
    loss : callable
        The objective bound to the task.
    default : dict
        The default configuration.
    tuned : sequence of Contender
        The tuned configurations (identical ones, and one equal to the default, share one
        measurement per round).
    rounds : int
        How many rounds (>= 1).
    progress : callable, optional
        Called with each measurement and the label of its configuration (``default`` or the
        first contender with it).
    objectives : Objectives, optional
        The declared objectives the objective returns (see :func:`measure_rounds`).

    Returns
    -------
    dict
        ``default``, ``rounds``, ``configs`` (the distinct configurations, the default first),
        ``labels`` (theirs), ``contenders`` (with their configuration's index),
        ``measurements`` and ``speedups`` (:func:`speedups`); JSON-ready.
    """
    if rounds < 1:
        raise ValueError(f"rounds must be >= 1, got {rounds}")
    configs: list[dict[str, Any]] = [dict(default)]
    labels = [DEFAULT]
    keys = {_key(default): 0}
    index: dict[str, int] = {}
    for c in tuned:
        index[c.label] = keys.setdefault(_key(c.params), len(configs))
        if index[c.label] == len(configs):
            configs.append(dict(c.params))
            labels.append(c.label)

    def report(m: Measurement) -> None:
        if progress is not None:
            progress(m, labels[m.config])

    measurements = measure_rounds(loss, configs, rounds, report, objectives)
    return {
        "default": dict(default),
        "rounds": rounds,
        "configs": configs,
        "labels": labels,
        "contenders": [{**asdict(c), "config": index[c.label]} for c in tuned],
        "measurements": [asdict(m) for m in measurements],
        "speedups": speedups(measurements, index, rounds),
    }


def read_paired(path: str | Path) -> list[dict[str, Any]]:
    """The speedup rows of a paired-comparison file, each with its ``task``, ``method`` and
    ``tuning_loss`` (the contender's best loss during tuning).

    Raises
    ------
    ValueError
        When the file is not a paired comparison.
    """
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict) or "speedups" not in data or "contenders" not in data:
        raise ValueError(f"{path}: not a paired comparison (no 'speedups' / 'contenders')")
    by_label = {c["label"]: c for c in data["contenders"]}
    return [
        {
            **row,
            "task": data.get("task"),
            "method": by_label[row["label"]]["method"],
            "tuning_loss": by_label[row["label"]]["tuning_loss"],
        }
        for row in data["speedups"]
    ]
