"""The report's flag at the top: tasks where the paired rounds overrule the tuning's pick.

A campaign's tuning picks each task's configuration by its tuning loss; the paired
re-measurement (:mod:`propulate.remeasure.paired`) measures it again against the default and the other
runs' picks. When the rounds find another configuration faster -- the default whenever every
speedup is below 1 -- the tuning database advises that one instead
(:mod:`propulate.remeasure.verdict`), and the report says so first, before any table.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from typing import Any

from propulate.remeasure.paired import DEFAULT
from propulate.remeasure.verdict import winner_of


def overruled(paired: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per task whose paired rounds overrule the tuning's pick: ``task``, ``chosen`` (the
    contender of least tuning loss), ``chosen_speedup``, ``winner`` and ``speedup``.

    Parameters
    ----------
    paired : sequence of mapping
        Rows of :func:`propulate.remeasure.paired.read_paired`.
    """
    tasks: dict[Any, list[Mapping[str, Any]]] = {}
    for row in paired:
        tasks.setdefault(row.get("task"), []).append(row)
    out = []
    for task, rows in tasks.items():
        chosen = min(rows, key=lambda r: r["tuning_loss"])
        speeds = {DEFAULT: 1.0}
        speeds.update({r["label"]: r["speedup"] for r in rows if math.isfinite(r["speedup"])})
        winner = winner_of(speeds, chosen["label"])
        if winner is None or winner == chosen["label"]:
            continue
        out.append(
            {
                "task": task,
                "chosen": chosen["label"],
                "chosen_speedup": speeds[chosen["label"]],
                "winner": winner,
                "speedup": speeds[winner],
            }
        )
    return out


def flag_html(paired: Sequence[Mapping[str, Any]]) -> str:
    """The flag's HTML (empty when no task is overruled)."""
    found = overruled(paired)
    if not found:
        return ""
    items = []
    for f in found:
        who = (
            "the default, faster than every tuned configuration"
            if f["winner"] == DEFAULT
            else f"{f['winner']} ({f['speedup']:.2f}x the default)"
        )
        items.append(
            f"<li>task <b>{html.escape(str(f['task']))}</b>: the tuning's pick "
            f"{html.escape(f['chosen'])} ran at {f['chosen_speedup']:.2f}x the default's speed; "
            f"advised instead: {html.escape(who)}</li>"
        )
    return (
        '<div class="flag" id="paired-flag"><p><b>The paired re-measurement contradicts the '
        f"tuning on {len(found)} task(s).</b> Re-measured in interleaved rounds, the "
        "configuration the tuning picked by its tuning loss was slower than another one; the "
        "tuning database and <code>suggest</code> advise the paired winner, with this "
        "evidence.</p><ul>" + "".join(items) + "</ul></div>"
    )
