"""A probe of the landscape before the search: is the function separable, with many local minima?

The GA beats CMA-ES on functions that are additively separable *and* multimodal (Rastrigin,
Schwefel, bbob's f3 and f4), and a race over the first share of the budget does not show it in
20 or more parameters (``docs/auto.md``). Two questions asked of the function itself answer it
with a few dozen evaluations, from one base point ``x`` of the unit cube:

*interaction*
    On :data:`PAIRS` random pairs of numeric coordinates ``(i, j)``, with steps ``a`` and ``b``
    of a tenth of each range (at least one integer cell),
    ``|f(x + a e_i + b e_j) - f(x + a e_i) - f(x + b e_j) + f(x)|`` over the main effects
    ``|f(x + a e_i) - f(x)| + |f(x + b e_j) - f(x)|``: 0 for an additively separable function;
    the median over the pairs.
*local minima*
    :data:`LINE` evenly spaced points across the whole range of one coordinate, through ``x``,
    on :data:`LINES` coordinates: the most interior local minima among one line's values.

A function is *separable and multimodal* when the interaction is below
:data:`SEPARABLE_BELOW` and a line holds at least :data:`MULTIMODAL_FROM` minima. On the
paper's nine functions and bbob 10-D and 20-D (instance 1, two base points each), that picks
exactly Rastrigin, Schwefel, bi-Rastrigin and bbob's f3 and f4: every other function interacts
(0.0014-4.0) or has at most 3 minima on a line (``benchmarks/landscape_probe.py``).

:class:`LandscapeProbe` is the design (the same on every worker of an island: it derives from the
run's seed and the island) and its :class:`Verdict` from the losses of its points; the ``auto``
propagator (:mod:`propulate.propagators.auto`) spends it and acts on the verdict.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from propulate.propagators.unit import UnitCodec
from propulate.space import Categorical, Float, SearchSpace

#: Coordinate pairs of the interaction test (3 evaluations each, plus the base point).
PAIRS = 6
#: Points on a line across one coordinate's range.
LINE = 31
#: Lines (coordinates) whose local minima are counted.
LINES = 2
#: Step of the interaction test, as a share of a coordinate's range.
STEP = 0.1
#: Interaction below which a function counts as separable (bbob's least interacting non-separable
#: function in 10-D and 20-D, f11, scored 0.0014; separable ones below 0.0003).
SEPARABLE_BELOW = 1e-3
#: Interior local minima on a line from which a function counts as multimodal (the paper's
#: Schwefel has 6 on a line of 31 points, bbob's separable unimodal functions at most 2).
MULTIMODAL_FROM = 4


def probe_size(dim: int) -> int:
    """Evaluations of the probe of a space of ``dim`` numeric parameters, at most (fewer when
    integer parameters map several of its points to one configuration; 0: no probe possible)."""
    if dim < 2:
        return 0
    return 1 + 3 * PAIRS + LINE * min(LINES, dim)


@dataclass(frozen=True)
class Verdict:
    """What the probe found.

    Attributes
    ----------
    interaction : float
        The median interaction over the pairs (``nan``: no pair moved the function).
    minima : int
        The most interior local minima on one line.
    measured : int
        Probe points with a finite loss.
    """

    interaction: float
    minima: int
    measured: int

    @property
    def separable_multimodal(self) -> bool:
        """Separable (interaction below :data:`SEPARABLE_BELOW`) with many local minima."""
        return (
            math.isfinite(self.interaction)
            and self.interaction < SEPARABLE_BELOW
            and self.minima >= MULTIMODAL_FROM
        )

    def describe(self) -> str:
        """``separable (interaction 0.0000), 9 local minima on a line``."""
        kind = "separable" if self.interaction < SEPARABLE_BELOW else "not separable"
        return f"{kind} (interaction {self.interaction:.4f}), {self.minima} local minima on a line"


class LandscapeProbe:
    """The probe's points for one island of a run, and the verdict on their losses.

    Parameters
    ----------
    space : SearchSpace
        The search space (float, integer and categorical parameters; categorical ones stay at
        the base point's choice).
    seed : int
        The design's seed: the same on every worker that shares the probe.

    Raises
    ------
    ValueError
        When the space has fewer than two float or integer parameters, or conditions.
    """

    def __init__(self, space: SearchSpace, seed: int) -> None:
        self.codec = UnitCodec(space, "the landscape probe", categorical="cells")
        numeric = [i for i, d in enumerate(self.codec.dims) if not isinstance(d, Categorical)]
        if len(numeric) < 2:
            raise ValueError("the landscape probe needs two float or integer parameters")
        rng = np.random.default_rng(seed)
        n = self.codec.n
        base = rng.random(n)
        steps = np.array([self._step(d) for d in self.codec.dims])
        floats = [i for i in numeric if isinstance(self.codec.dims[i], Float)]

        def moved(point: np.ndarray, i: int) -> np.ndarray:
            out = point.copy()
            out[i] += steps[i] if base[i] + steps[i] <= 1.0 else -steps[i]
            return out

        self.points: list[dict[str, Any]] = []
        self._index: dict[tuple[Any, ...], int] = {}
        x = self._add(base)
        self.pairs: list[tuple[int, int, int, int]] = []  # f(x), f(x + a e_i), f(x + b e_j), both
        for _ in range(PAIRS):
            i, j = (int(k) for k in rng.choice(numeric, 2, replace=False))
            xi, xj = moved(base, i), moved(base, j)
            self.pairs.append((x, self._add(xi), self._add(xj), self._add(moved(xi, j))))
        coords = floats or numeric
        lines = rng.choice(coords, min(LINES, len(coords)), replace=False)
        self.lines: list[list[int]] = []
        for c in lines:
            row = []
            for v in np.linspace(0.0, 1.0, LINE):
                point = base.copy()
                point[int(c)] = v
                row.append(self._add(point))
            self.lines.append(row)

    def _add(self, u: np.ndarray) -> int:
        """The index of the point ``u`` decodes to (one index per configuration: integer
        parameters map several points of the cube to one)."""
        params = self.codec.decode(u)
        key = tuple(params.values())
        if key not in self._index:
            self._index[key] = len(self.points)
            self.points.append(params)
        return self._index[key]

    @staticmethod
    def _step(dim: Any) -> float:
        if isinstance(dim, Float):
            return STEP
        cells = int(getattr(dim, "high", 1)) - int(getattr(dim, "low", 0)) + 1
        return max(STEP, 1.0 / max(cells, 1))

    def __len__(self) -> int:
        return len(self.points)

    def params(self, index: int) -> dict[str, Any]:
        """The parameter values of probe point ``index``."""
        return dict(self.points[index])

    def verdict(self, losses: Mapping[int, float]) -> Verdict:
        """The verdict on the losses of the probe's points (``index -> loss``; a missing or
        infinite loss leaves out the pairs and line stretches that need it)."""

        def f(k: int) -> float | None:
            value = losses.get(k)
            return float(value) if value is not None and math.isfinite(value) else None

        ratios = []
        for x, a, b, ab in self.pairs:
            fx, fa, fb, fab = f(x), f(a), f(b), f(ab)
            if fx is None or fa is None or fb is None or fab is None:
                continue
            main = abs(fa - fx) + abs(fb - fx)
            if main > 0.0:
                ratios.append(abs(fab - fa - fb + fx) / main)
        minima = 0
        for row in self.lines:
            values = [f(k) for k in row]
            count = sum(
                1
                for left, mid, right in zip(values, values[1:], values[2:], strict=False)
                if left is not None
                and mid is not None
                and right is not None
                and mid < left
                and mid < right
            )
            minima = max(minima, count)
        measured = sum(f(k) is not None for k in range(len(self.points)))
        interaction = float(np.median(ratios)) if ratios else math.nan
        return Verdict(interaction, minima, measured)
