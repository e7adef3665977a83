"""What a run has reached, in its declared objectives' own terms, for progress lines.

A run's ``loss`` is one number to minimise: the first objective signed for minimisation (a
maximised accuracy of 0.99999 is the loss -0.99999), or the weighted sum with weights. For a
run that declared objectives (:mod:`propulate.runs.declared_objectives`) the progress lines of ``evolve``
and ``status`` say instead what the user declared:

* several objectives without weights: the size of the Pareto set of the successful
  evaluations and its hypervolume, each objective scaled to ``[0, 1]`` over the run's own
  evaluations (signed for minimisation) and the reference point 1.1 in every objective (the
  report's convention, :mod:`propulate.report.pareto_section`): 0 for nothing, up to 1.21 for two
  objectives;
* one objective: its best value in its own sign (``best accuracy 0.99999``);
* weights: the least weighted sum (``best weighted sum ...``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from propulate.runs.declared_objectives import MAX, Objectives
from propulate.runs.dominance import hypervolume, pareto_mask

#: The reference point of the scaled hypervolume, in every objective.
REFERENCE = 1.1


def front_of(objectives: Objectives, values: Sequence[Mapping[str, float]]) -> tuple[int, float]:
    """Size of the Pareto set of ``values`` and its scaled hypervolume (module docstring).

    Parameters
    ----------
    objectives : Objectives
        The declared objectives.
    values : sequence of mapping
        Each successful evaluation's objective values (``{name: value}``, natural units).
    """
    usable = [v for v in values if all(n in v for n in objectives.names)]
    if not usable:
        return 0, 0.0
    points = np.array([objectives.oriented(v) for v in usable], dtype=float)
    low, high = points.min(axis=0), points.max(axis=0)
    scaled = (points - low) / np.where(high > low, high - low, 1.0)
    reference = [REFERENCE] * len(objectives.names)
    return int(pareto_mask(points).sum()), hypervolume(scaled, reference)


def describe(objectives: Objectives, values: Sequence[Mapping[str, float]]) -> str:
    """The progress line's words for what the run reached (``-`` before any success)."""
    usable = [v for v in values if all(n in v for n in objectives.names)]
    if objectives.weights is not None:
        if not usable:
            return "best weighted sum -"
        return f"best weighted sum {min(objectives.loss_of(v) for v in usable):.6g}"
    if objectives.several:
        size, volume = front_of(objectives, usable)
        return f"pareto set {size}, hypervolume {volume:.4g}"
    name, direction = objectives.names[0], objectives.directions[0]
    if not usable:
        return f"best {name} -"
    pick = max if direction == MAX else min
    return f"best {name} {pick(v[name] for v in usable):.6g}"
