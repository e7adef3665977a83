"""A task's Pareto set in the tuning database, and picking one configuration from it.

A run with several objectives (``--objectives``, :mod:`propulate.runs.declared_objectives`) ends with a
Pareto set in its summary. The database stores, with a task's row, the Pareto set of all the
task's runs merged (``{"objectives": {name: direction}, "points": [{"params", "objectives"},
...]}``), and ``suggest`` picks from it by a stated preference (:func:`pick`):

* ``prefer=NAME`` -- the point best in that objective;
* ``weights={name: w, ...}`` -- the point of least weighted sum of the objectives in their
  natural units, each signed for minimisation: ``sum(w_i * s_i * v_i)``, the same meaning as a
  campaign's ``evolve.weights`` (an objective without a weight weighs 0);
* bounds ``upper={name: value}`` / ``lower={name: value}`` (``--max`` / ``--min``) -- only the
  points within them, then by ``prefer`` or ``weights``, else by the first objective.

Without a preference ``suggest`` answers with the row's own configuration: the least in the
campaign's loss (its weighted sum under the campaign's weights, else its first objective).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from propulate.runs.declared_objectives import Objectives
from propulate.runs.dominance import pareto_mask

Pareto = dict[str, Any]


def merge(first: Pareto | None, second: Pareto | None) -> Pareto | None:
    """The Pareto set of the union of two (of the same objectives; else the first)."""
    if first is None or second is None:
        return first or second
    if first["objectives"] != second["objectives"]:
        return first
    declared = Objectives.parse(first["objectives"])
    points = list(first["points"]) + list(second["points"])
    mask = pareto_mask([declared.oriented(p["objectives"]) for p in points])
    kept = [p for p, keep in zip(points, mask, strict=True) if keep]
    kept.sort(key=lambda p: declared.oriented(p["objectives"]))
    return {"objectives": dict(first["objectives"]), "points": kept}


def parse_values(text: str | None, what: str) -> dict[str, float]:
    """``"a=1,b=2.5"`` as ``{"a": 1.0, "b": 2.5}`` (``ValueError`` naming ``what``)."""
    out: dict[str, float] = {}
    for item in (text or "").split(","):
        if not item.strip():
            continue
        name, sep, value = item.partition("=")
        try:
            if not sep or not name.strip():
                raise ValueError
            out[name.strip()] = float(value)
        except ValueError:
            raise ValueError(
                f"{what} {text!r}: expected name=number pairs separated by commas"
            ) from None
    return out


def pick(
    pareto: Pareto,
    prefer: str | None = None,
    weights: Mapping[str, float] | None = None,
    upper: Mapping[str, float] | None = None,
    lower: Mapping[str, float] | None = None,
) -> tuple[dict[str, Any], str]:
    """One point of ``pareto`` by the stated preference, and the preference in words.

    Raises
    ------
    ValueError
        For an unknown objective name, both ``prefer`` and ``weights``, or bounds no point
        meets (naming the best value the set reaches).
    """
    declared = Objectives.parse(pareto["objectives"])
    points: Sequence[dict[str, Any]] = pareto["points"]
    if not points:
        raise ValueError("the task's Pareto set is empty")
    named = [prefer] if prefer else []
    for group in (weights, upper, lower):
        named += list(group or ())
    unknown = sorted({n for n in named if n not in declared.names})
    if unknown:
        raise ValueError(
            f"unknown objective(s) {', '.join(unknown)}; the task's are {declared.text()}"
        )
    if prefer and weights:
        raise ValueError("give --prefer or --weights, not both")
    said = []
    for name, bound in (upper or {}).items():
        best = min(p["objectives"][name] for p in points)
        points = [p for p in points if p["objectives"][name] <= bound]
        said.append(f"{name} <= {bound:g}")
        if not points:
            raise ValueError(f"no Pareto point has {' and '.join(said)} (least {name}: {best:g})")
    for name, bound in (lower or {}).items():
        best = max(p["objectives"][name] for p in points)
        points = [p for p in points if p["objectives"][name] >= bound]
        said.append(f"{name} >= {bound:g}")
        if not points:
            raise ValueError(
                f"no Pareto point has {' and '.join(said)} (greatest {name}: {best:g})"
            )
    oriented = np.array([declared.oriented(p["objectives"]) for p in points], dtype=float)
    if weights:
        w = np.array([float(weights.get(n, 0.0)) for n in declared.names])
        index = int(np.argmin(oriented @ w))
        how = "least weighted sum " + ",".join(f"{n}={weights[n]:g}" for n in weights)
        how += " (natural units, signed for minimisation, as a campaign's weights)"
    else:
        name = prefer or declared.names[0]
        k = declared.names.index(name)
        index = int(np.argmin(oriented[:, k]))
        how = f"best {name} ({declared.directions[k]})"
    if said:
        how += " among the points with " + " and ".join(said)
    return dict(points[index]), how
