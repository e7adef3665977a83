"""Sobol indices of a function over a search space, estimated by SALib.

The function (a model's posterior mean) takes configurations encoded to the unit cube. SALib
draws Saltelli's sample over ``[0, 1]^d`` (a scrambled Sobol sequence, ``N (d + 2)`` points,
``N (2 d + 2)`` with second order) and estimates the indices from the function's values with
their bootstrap confidence intervals (``SALib.sample.sobol``, ``SALib.analyze.sobol``).

Integer and categorical parameters: every sampled coordinate is moved to the encoding of the
value it decodes to (:func:`snap`), so the function is only evaluated at configurations that
exist, and each integer or choice is drawn with the probability of its share of the cube: every
choice of a categorical equally often, the integers of a linear range uniformly, those of a
log-scaled range log-uniformly, as the search itself draws them. Sobol's decomposition holds
for any independent inputs, discrete ones included, and Saltelli's estimators only need
independent draws from them, which the snapped sample is.

A constraint is ignored: the decomposition needs independent parameters, and a constrained
space is not a product of intervals. The indices describe the function over the whole box.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from propulate.settings import SensitivitySettings
from propulate.space import SearchSpace
from propulate.space.dimensions import Float

#: Format tag of :meth:`SobolIndices.to_dict`.
FORMAT = "propulate-sobol/1"


def snap(U: np.ndarray, space: SearchSpace) -> np.ndarray:
    """The unit-cube points moved to the encodings of the values they decode to.

    Parameters
    ----------
    U : array (m, d)
        Points in ``[0, 1]^d``.
    space : SearchSpace
        The space whose integer and categorical dimensions are snapped (floats are kept).

    Returns
    -------
    array (m, d)
        A copy of ``U`` with each discrete coordinate at the centre of its value's cell. In a
        conditional space each row is the configuration it decodes to, encoded again: an
        inactive parameter's coordinate becomes :data:`~propulate.space.search.INACTIVE` (as
        the models see it), so its indices measure its effect where it is active, weighted by
        how often it is.
    """
    if space.conditions:
        return space.encode_many(space.decode_many(np.asarray(U, dtype=float)))
    out = np.array(U, dtype=float, copy=True)
    for k, dim in enumerate(space.dimensions.values()):
        if not isinstance(dim, Float):
            out[:, k] = [dim.encode(dim.decode(float(u))) for u in out[:, k]]
    return out


def check_samples(samples: int) -> int:
    """``samples`` if it is a power of two of at least 16, else a one-line ``ValueError``.

    The Sobol sequence's balance, which Saltelli's estimators rely on, holds for powers of two.
    """
    if samples < 16 or samples & (samples - 1):
        raise ValueError(f"samples must be a power of two (16, 32, ..., 1024, ...), got {samples}")
    return samples


@dataclass
class SobolIndices:
    """First-order, total and (optionally) second-order Sobol indices of one function.

    Attributes
    ----------
    names : tuple of str
        The parameters, in the space's order.
    S1, S1_conf : array (d,)
        First-order indices (the share of the variance one parameter explains alone) and the
        half-widths of their confidence intervals.
    ST, ST_conf : array (d,)
        Total indices (the share a parameter explains with all its interactions).
    S2, S2_conf : array (d, d) or None
        Second-order indices of each pair (upper triangle; NaN elsewhere), when estimated.
    samples : int
        Saltelli's base sample ``N``.
    evaluations : int
        Configurations the function was evaluated at.
    seed : int
        Seed of the sample and of the bootstrap.
    conf_level : float
        Confidence level of the intervals.
    variance : float
        Variance of the function over the space, in its units squared (0: a flat function,
        whose indices are all 0).
    """

    names: tuple[str, ...]
    S1: np.ndarray
    S1_conf: np.ndarray
    ST: np.ndarray
    ST_conf: np.ndarray
    S2: np.ndarray | None
    S2_conf: np.ndarray | None
    samples: int
    evaluations: int
    seed: int
    conf_level: float
    variance: float

    def ranking(self) -> list[str]:
        """The parameters by decreasing total index (first-order index breaks ties)."""
        order = sorted(range(len(self.names)), key=lambda k: (-self.ST[k], -self.S1[k], k))
        return [self.names[k] for k in order]

    def as_mapping(self, field: str) -> dict[str, float]:
        """One per-parameter field (``S1``, ``S1_conf``, ``ST``, ``ST_conf``) by name."""
        values = getattr(self, field)
        return {n: float(v) for n, v in zip(self.names, values, strict=True)}

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data (per-parameter mappings; ``S2`` as ``{a: {b: value}}``, a before b)."""

        def pairs(matrix: np.ndarray | None) -> dict[str, dict[str, float]] | None:
            if matrix is None:
                return None
            d = len(self.names)
            return {
                self.names[i]: {self.names[j]: float(matrix[i, j]) for j in range(i + 1, d)}
                for i in range(d - 1)
            }

        return {
            "format": FORMAT,
            "names": list(self.names),
            **{f: self.as_mapping(f) for f in ("S1", "S1_conf", "ST", "ST_conf")},
            "S2": pairs(self.S2),
            "S2_conf": pairs(self.S2_conf),
            "samples": self.samples,
            "evaluations": self.evaluations,
            "seed": self.seed,
            "conf_level": self.conf_level,
            "variance": self.variance,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SobolIndices:
        """Rebuild indices written by :meth:`to_dict`."""
        if data.get("format") != FORMAT:
            raise ValueError(f"not {FORMAT} indices (format={data.get('format')!r})")
        names = tuple(data["names"])

        def vector(field: str) -> np.ndarray:
            return np.array([data[field][n] for n in names], dtype=float)

        def matrix(field: str) -> np.ndarray | None:
            if data.get(field) is None:
                return None
            out = np.full((len(names), len(names)), np.nan)
            for i, a in enumerate(names):
                for j, b in enumerate(names):
                    if j > i:
                        out[i, j] = data[field][a][b]
            return out

        return cls(
            names,
            vector("S1"),
            vector("S1_conf"),
            vector("ST"),
            vector("ST_conf"),
            matrix("S2"),
            matrix("S2_conf"),
            int(data["samples"]),
            int(data["evaluations"]),
            int(data["seed"]),
            float(data["conf_level"]),
            float(data["variance"]),
        )


def sobol_indices(
    f: Callable[[np.ndarray], np.ndarray],
    space: SearchSpace,
    settings: SensitivitySettings | None = None,
) -> SobolIndices:
    """Sobol indices of ``f`` over ``space`` (uniform in the unit cube, discrete values snapped).

    Parameters
    ----------
    f : callable
        ``f(U) -> y``: values at the rows of ``U`` (an ``(m, d)`` array of encoded
        configurations), in any units.
    space : SearchSpace
        The parameters (their order is ``U``'s columns).
    settings : SensitivitySettings, optional
        ``samples`` (Saltelli's ``N``), ``second_order``, ``resamples``, ``conf_level`` and
        ``seed``.

    Raises
    ------
    ValueError
        When ``samples`` is not a power of two or ``f`` returns non-finite values.
    """
    settings = settings or SensitivitySettings()
    from SALib.analyze import sobol as analyze
    from SALib.sample import sobol as sample

    check_samples(settings.samples)
    d = space.dim
    second = settings.second_order and d > 1
    problem = {"num_vars": d, "names": list(space.names), "bounds": [[0.0, 1.0]] * d}
    U = sample.sample(problem, settings.samples, calc_second_order=second, seed=settings.seed)
    y = np.asarray(f(snap(U, space)), dtype=float).reshape(-1)
    if len(y) != len(U) or not np.all(np.isfinite(y)):
        raise ValueError("the function returned non-finite or missing values")
    variance = float(y.var())
    scale = max(1.0, float(np.abs(y).max()))
    if variance <= (1e-12 * scale) ** 2:  # flat: every index is 0
        zeros = np.zeros(d)
        pair = np.where(np.triu(np.ones((d, d)), 1) > 0, 0.0, np.nan) if second else None
        flat = (zeros, zeros, zeros, zeros, pair, pair)
        return SobolIndices(
            tuple(space.names),
            *flat,
            settings.samples,
            len(y),
            settings.seed,
            settings.conf_level,
            variance,
        )
    res = analyze.analyze(
        problem,
        y,
        calc_second_order=second,
        num_resamples=settings.resamples,
        conf_level=settings.conf_level,
        seed=settings.seed,
    )
    return SobolIndices(
        tuple(space.names),
        *(np.asarray(res[k], dtype=float) for k in ("S1", "S1_conf", "ST", "ST_conf")),
        np.asarray(res["S2"], dtype=float) if second else None,
        np.asarray(res["S2_conf"], dtype=float) if second else None,
        settings.samples,
        len(y),
        settings.seed,
        settings.conf_level,
        variance,
    )


def top(names: Sequence[str], values: Sequence[float], k: int) -> list[str]:
    """The ``k`` names with the largest values (ties: the earlier name)."""
    order = sorted(range(len(names)), key=lambda i: (-values[i], i))
    return [names[i] for i in order[:k]]
