"""Which configuration a paired re-measurement says wins, and that verdict in words.

A campaign's tuning picks, per task, the configuration of least *tuning* loss: the minimum over
noisy evaluations taken at different times, biased low and exposed to the machine's drift.
The paired re-measurement (:mod:`propulate.remeasure.paired`) measures the default and every tuning
run's best configuration again, interleaved in rounds; its speedups (``default / tuned``,
median over the rounds) are the better evidence. When they say that another configuration
(the default included, whose speedup is 1 by definition) is faster than the tuning's pick,
the campaign's advice follows them: the tuning database stores the paired winner with this
evidence (:mod:`propulate.tuningdb.ingest`), ``suggest`` says why, and the report flags it at
the top.

:func:`verdict` reads the winner from a paired comparison (the JSON ``propulate paired``
writes); :func:`explain` says it in one sentence. The rule: the winner is the configuration of
largest median speedup over the default; the tuning's pick stays unless another one's median
speedup is strictly larger than its own.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Mapping
from typing import Any

from propulate.remeasure.paired import DEFAULT


def _key(params: Mapping[str, Any]) -> str:
    return json.dumps(dict(params), sort_keys=True)


def _usable(value: Any) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)


def winner_of(speeds: Mapping[str, float], chosen: str) -> str | None:
    """The label of largest speedup in ``speeds`` (the default's is 1); ``chosen`` keeps a
    tie. ``None`` when ``chosen`` has no finite speedup."""
    if not _usable(speeds.get(chosen)):
        return None
    winner = chosen
    for label, value in speeds.items():
        if _usable(value) and value > speeds[winner]:
            winner = label
    return winner


def verdict(
    data: Mapping[str, Any], chosen: Mapping[str, Any] | None = None
) -> dict[str, Any] | None:
    """The paired comparison's winner against the tuning's pick, as evidence to store.

    Parameters
    ----------
    data : mapping
        A paired comparison (:func:`propulate.remeasure.paired.paired_comparison`, with its ``task``).
    chosen : mapping, optional
        The configuration the tuning picked (the tuning database's row). Default: the
        contender of least tuning loss.

    Returns
    -------
    dict or None
        ``None`` when no speedup was measured (no pair of positive losses) or ``chosen`` is
        none of the measured configurations. Else ``task``, ``rounds``, ``chosen`` (the
        label of the tuning's pick), ``chosen_speedup``, ``winner`` (its label, ``default``
        for the default), ``method`` (the winner's tuning method, ``default`` for it),
        ``run`` (its run directory, ``None`` for the default), ``params``, ``speedup``,
        ``low`` / ``high`` (the winner's range of ratios), ``losses`` (the winner's measured
        loss per round), ``overruled`` (whether the winner is not the tuning's pick), ``configs``
        (every configuration measured, the default first) and ``speedups`` (every contender's ``speedup``, ``low``, ``high`` and ``pairs``).
    """
    contenders = list(data.get("contenders") or [])
    if not contenders:
        return None
    rows = {row["label"]: row for row in data["speedups"]}
    usable = {label: row for label, row in rows.items() if _usable(row["speedup"])}
    if not usable:
        return None
    by_key = {_key(data["default"]): DEFAULT}
    for c in contenders:
        by_key.setdefault(_key(c["params"]), c["label"])
    if chosen is None:
        chosen_label = min(contenders, key=lambda c: c["tuning_loss"])["label"]
    else:
        found = by_key.get(_key(chosen))
        if found is None:
            return None
        chosen_label = found

    speeds = {DEFAULT: 1.0, **{label: row["speedup"] for label, row in usable.items()}}
    winner = winner_of(speeds, chosen_label)
    if winner is None:  # the pick itself was never measured in a pair
        return None

    def speed(label: str) -> float:
        return speeds[label]

    contender = next((c for c in contenders if c["label"] == winner), None)
    config = 0 if contender is None else contender["config"]
    losses = [
        float(m["loss"])
        for m in sorted(data["measurements"], key=lambda m: m["round"])
        if m["config"] == config and _usable(m["loss"])
    ]
    own = usable.get(winner, {})
    return {
        "task": data.get("task"),
        "rounds": int(data["rounds"]),
        "chosen": chosen_label,
        "chosen_speedup": speed(chosen_label),
        "winner": winner,
        "method": DEFAULT if contender is None else contender["method"],
        "run": None if contender is None else contender["run"],
        "params": dict(data["default"] if contender is None else contender["params"]),
        "speedup": speed(winner),
        "low": own.get("low", 1.0),
        "high": own.get("high", 1.0),
        "losses": losses,
        "loss": statistics.median(losses) if losses else None,
        "overruled": winner != chosen_label,
        "configs": [dict(c) for c in data["configs"]],
        "speedups": {
            label: {k: row[k] for k in ("speedup", "low", "high", "pairs")}
            for label, row in rows.items()
        },
    }


def explain(evidence: Mapping[str, Any]) -> str:
    """The verdict of :func:`verdict` in one sentence (for ``suggest`` and the report)."""
    rounds = f"paired re-measurement over {evidence['rounds']} rounds"
    others = ", ".join(
        f"{label} {row['speedup']:.2f}x" for label, row in evidence["speedups"].items()
    )
    if not evidence["overruled"]:
        return (
            f"{rounds} confirms the tuning's pick {evidence['chosen']}: "
            f"{evidence['speedup']:.2f}x the default's speed (range {evidence['low']:.2f}-"
            f"{evidence['high']:.2f}x)"
        )
    if evidence["winner"] == DEFAULT:
        return (
            f"{rounds}: the default was faster than every tuned configuration (speedups "
            f"below 1: {others}), so the default is advised instead of the tuning's pick "
            f"{evidence['chosen']}"
        )
    return (
        f"{rounds}: {evidence['winner']} ({evidence['speedup']:.2f}x the default) beat the "
        f"tuning's pick {evidence['chosen']} ({evidence['chosen_speedup']:.2f}x), so it is "
        f"advised instead (speedups: {others})"
    )
