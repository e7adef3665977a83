"""Individuals as vectors of the unit cube, for the propagators that move points around
(CMA-ES, particle swarms, Nelder-Mead).

:class:`UnitCodec` maps the parameters of a space to ``[0, 1]^n`` with the space's own
encoding (log-scaled parameters on their log scale, each integer and each categorical choice
owning an equal cell), and back. Categorical parameters are either left to the caller
(``categorical="separate"``: CMA-ES learns their choices apart) or moved on their cells like
integers (``"cells"``: the swarms and Nelder-Mead, for which the choices' order is arbitrary).
A space without a float or integer parameter is refused, naming its parameters, and so is a
conditional space (a point of the cube has every coordinate; an inactive one would be moved as
if it mattered), naming its first conditional parameter.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from propulate.space import Categorical, Float, Integer, SearchSpace


class UnitCodec:
    """The numeric parameters of a space as a vector in ``[0, 1]^n``.

    Parameters
    ----------
    space : SearchSpace
        The search space.
    who : str
        The propagator's name, for error messages.
    categorical : str
        ``"separate"``: categorical parameters are listed in :attr:`categorical` and left out
        of the vector; ``"cells"``: they are coordinates like the others (decoded to the
        choice whose cell holds the value).

    Raises
    ------
    ValueError
        When the space has no float or integer parameter, naming its parameters, or when it
        has conditional parameters, naming the first.
    """

    def __init__(self, space: SearchSpace, who: str, categorical: str = "cells") -> None:
        self.space = space
        dims = space.dimensions
        if space.conditions:
            name, cond = next(iter(space.conditions.items()))
            raise ValueError(
                f"{who} cannot search conditional parameter {name!r} (active when "
                f"{cond.to_spec()}): use the ga or random propagator"
            )
        cells = categorical == "cells"
        self.names = [n for n, d in dims.items() if cells or not isinstance(d, Categorical)]
        self.categorical = (
            [] if cells else [n for n, d in dims.items() if isinstance(d, Categorical)]
        )
        if all(isinstance(d, Categorical) for d in dims.values()):
            raise ValueError(
                f"{who} cannot search categorical parameter{'s' * (len(dims) > 1)} "
                f"{', '.join(map(repr, space.names))} alone: it needs a float or integer "
                "parameter (use the ga propagator)"
            )
        self.dims = [dims[n] for n in self.names]
        self.n = len(self.names)
        ends = np.array(
            [(0.0, 1.0) if isinstance(d, Categorical) else d._ends() for d in self.dims],
            dtype=float,
        )
        self._a, self._w = ends[:, 0], ends[:, 1] - ends[:, 0]
        self._log = np.array([bool(getattr(d, "log", False)) for d in self.dims])
        self._int = np.array([isinstance(d, Integer) for d in self.dims])
        self._linear_floats = all(isinstance(d, Float) and not d.log for d in self.dims)
        self._low = np.array([float(getattr(d, "low", 0)) for d in self.dims])
        self._high = np.array([float(getattr(d, "high", 1)) for d in self.dims])
        self._get = operator.itemgetter(*self.names) if self.n > 1 else _one(self.names[0])
        #: Indices of the integer coordinates.
        self.integers = np.flatnonzero(self._int)
        #: Indices of the coordinates that are not floats (their values are cells).
        self.discrete = np.flatnonzero([not isinstance(d, Float) for d in self.dims])

    def encode(self, params: Mapping[str, Any]) -> np.ndarray:
        """The parameters of ``params`` (in the vector) as a unit-cube vector."""
        if not self._linear_floats:
            return unit_clip(
                np.fromiter(
                    (d.encode(params[n]) for n, d in zip(self.names, self.dims, strict=True)),
                    dtype=float,
                    count=self.n,
                )
            )
        # in-bounds values (what a space holds) land in [0, 1] up to rounding: no clipping
        return (np.array(self._get(params), dtype=float) - self._a) / self._w

    def decode(self, u: np.ndarray) -> dict[str, Any]:
        """The parameter values of unit-cube vector ``u`` (clipped into the cube)."""
        u = unit_clip(u)
        if self._linear_floats:
            x = np.minimum(np.maximum(self._a + u * self._w, self._low), self._high)
            return dict(zip(self.names, x.tolist(), strict=True))
        return {n: d.decode(float(v)) for n, d, v in zip(self.names, self.dims, u, strict=True)}

    def cell_borders(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For the integer coordinates of ``u``: the unit-cube borders of the integers' cells
        that contain them (arrays over :attr:`integers`)."""
        i = self.integers
        a, w, log = self._a[i], self._w[i], self._log[i]
        v = np.clip(np.rint(_scale(a + np.clip(u[i], 0, 1) * w, log)), self._low[i], self._high[i])
        lo = (_unscale(v - 0.5, log) - a) / w
        hi = (_unscale(v + 0.5, log) - a) / w
        return lo, hi


def _one(name: str) -> Callable[[Mapping[str, Any]], tuple[Any]]:
    """An item getter that returns a 1-tuple (``itemgetter`` of one name returns the value)."""
    return lambda params: (params[name],)


def unit_clip(u: np.ndarray) -> np.ndarray:
    """``u`` clipped into ``[0, 1]`` (cheaper than ``numpy.clip`` on short vectors)."""
    return np.minimum(np.maximum(u, 0.0), 1.0)


def _scale(t: np.ndarray, log: np.ndarray) -> np.ndarray:
    return np.where(log, np.exp(t), t)


def _unscale(v: np.ndarray, log: np.ndarray) -> np.ndarray:
    return np.where(log, np.log(np.maximum(v, 1e-300)), v)
