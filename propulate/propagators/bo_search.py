"""The ``bo`` propagator's acquisition functions and their maximization over a search space.

Acquisitions (minimization, standardized outputs; higher is better):

* ``ei``: expected improvement below ``best - weight`` (``weight`` is EI's margin ``xi``);
* ``pi``: probability of improvement below ``best - weight``;
* ``ucb``: the lower confidence bound ``-(mean - weight * sigma)`` (``weight`` is ``kappa``).

:func:`maximize` is a multi-start search on a finite budget of model predictions: ``n_candidates``
points, half uniform in the unit cube and half drawn around the best observed configurations,
are scored; the best ``n_restarts`` are refined by rounds of Gaussian perturbations with a
shrinking step (each round keeps a start's best point). Every point is first *snapped* to what
the space can hold (:class:`Snap`: an integer to its cell's centre, a categorical to its
choice's, a conditional space's inactive parameters to
:data:`~propulate.space.search.INACTIVE`), so the model scores exactly the configurations that
can be proposed and no step is wasted inside one integer's cell.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.special import ndtr

from propulate.models.acquisition import expected_improvement
from propulate.space import Categorical, Integer, SearchSpace

ACQUISITIONS = ("ei", "pi", "ucb")


def acquisition(
    kind: str, mean: np.ndarray, var: np.ndarray, best: float, weight: float
) -> np.ndarray:
    """The acquisition ``kind`` (:data:`ACQUISITIONS`) at posterior ``mean`` and ``var``.

    Parameters
    ----------
    kind : str
        ``ei``, ``pi`` or ``ucb``.
    mean, var : array
        Posterior mean and variance (standardized outputs, minimization).
    best : float
        The best observed output.
    weight : float
        The exploration weight: EI's and PI's margin ``xi``, UCB's ``kappa``.
    """
    sigma = np.sqrt(np.maximum(var, 1e-24))
    if kind == "ei":
        return expected_improvement(mean, sigma, best - weight)
    if kind == "pi":
        return ndtr((best - weight - mean) / sigma)
    if kind == "ucb":
        return -(mean - weight * sigma)
    raise ValueError(f"unknown acquisition {kind!r}; choose from {', '.join(ACQUISITIONS)}")


class Snap:
    """Maps unit-cube points to the encodings of the configurations they decode to, and
    encodings to the model's features (:meth:`features`).

    Parameters
    ----------
    space : SearchSpace
        The space (a conditional one is snapped by decoding and encoding each point).
    """

    def __init__(self, space: SearchSpace) -> None:
        self.space = space
        dims = list(space.dimensions.values())
        self.cells = np.array([len(d.choices) if isinstance(d, Categorical) else 0 for d in dims])
        self.integers = [i for i, d in enumerate(dims) if isinstance(d, Integer)]
        self.categorical = self.cells > 0
        #: Number of model features: one per number, one per choice of a categorical.
        self.width = int(np.sum(np.where(self.categorical, self.cells, 1)))

    def features(self, U: np.ndarray) -> np.ndarray:
        """The model's inputs of encoded rows: numbers as encoded (an inactive one at
        :data:`~propulate.space.search.INACTIVE`), a categorical one-hot over its choices (all
        zero when inactive), so every two distinct choices are equally far apart."""
        U = np.atleast_2d(U)
        if not self.categorical.any():
            return U
        cols = []
        for j, k in enumerate(self.cells):
            if k == 0:
                cols.append(U[:, j : j + 1])
                continue
            u = U[:, j]
            index = np.minimum(np.floor(np.clip(u, 0.0, 1.0) * k), k - 1).astype(int)
            onehot = np.zeros((len(U), k))
            live = (u >= 0.0) & (u <= 1.0)  # an inactive parameter's code lies outside
            onehot[np.nonzero(live)[0], index[live]] = 1.0
            cols.append(onehot)
        return np.hstack(cols)

    def steps(self, lengthscale: np.ndarray) -> np.ndarray:
        """Per encoded dimension, the search's step around good points: half the lengthscale
        (in ``[0.01, 0.25]``) for a number, 0.5 for a categorical (a jump to any choice)."""
        out = np.full(len(self.cells), 0.5)
        numbers = np.nonzero(~self.categorical)[0]
        where = np.cumsum(np.where(self.categorical, self.cells, 1)) - 1  # feature of each
        out[numbers] = np.clip(0.5 * lengthscale[where[numbers]], 0.01, 0.25)
        return out

    def __call__(self, U: np.ndarray) -> np.ndarray:
        U = np.clip(U, 0.0, 1.0)
        if self.space.conditions:
            return self.space.encode_many(self.space.decode_many(U))
        cat = self.categorical
        if cat.any():
            k = self.cells[cat]
            U[:, cat] = (np.minimum(np.floor(U[:, cat] * k), k - 1) + 0.5) / k
        dims = list(self.space.dimensions.values())
        for i in self.integers:
            dim = dims[i]
            U[:, i] = [dim.encode(dim.decode(u)) for u in U[:, i]]
        return U


def maximize(
    score: Callable[[np.ndarray], np.ndarray],
    snap: Snap,
    centres: np.ndarray,
    steps: np.ndarray,
    gen: np.random.Generator,
    n_candidates: int = 512,
    n_restarts: int = 8,
    rounds: int = 4,
    per_round: int = 16,
) -> np.ndarray:
    """The scored points, best first, of a multi-start search (module docstring).

    Parameters
    ----------
    score : callable
        ``score(U) -> values`` for rows of encoded points (higher is better; ``-inf`` excludes).
    snap : Snap
        The space's snapping.
    centres : array (c, d)
        Encoded configurations to draw half the candidates around (the best observed); none:
        all candidates are uniform.
    steps : array (d,)
        Standard deviation of the draws around the centres per dimension (unit cube); the
        refinement's first step is half of it, shrinking by rounds (a categorical's stays).
    gen : numpy Generator
        The draws' randomness.
    n_candidates, n_restarts : int
        Candidates scored; how many of the best are refined.
    rounds, per_round : int
        Refinement rounds and perturbations of each start per round.

    Returns
    -------
    array (k, d)
        Distinct points, best first (the refined starts, then the other candidates).
    """
    d = len(steps)
    n_local = n_candidates // 2 if len(centres) else 0
    U = gen.random((n_candidates, d))
    if n_local:
        which = centres[gen.integers(len(centres), size=n_local)]
        scale = steps * np.exp(gen.uniform(np.log(0.05), 0.0, size=(n_local, 1)))
        U[:n_local] = which + gen.normal(size=(n_local, d)) * scale
    U = snap(U)
    values = score(U)
    order = np.argsort(-values, kind="stable")
    starts, best = U[order[:n_restarts]].copy(), values[order[:n_restarts]].copy()
    step = np.where(snap.categorical, steps, 0.5 * steps)
    for _ in range(rounds):
        k = len(starts)
        trial = np.repeat(starts, per_round, axis=0)
        trial = snap(trial + gen.normal(size=trial.shape) * step)
        tv = score(trial).reshape(k, per_round)
        j = np.argmax(tv, axis=1)
        better = tv[np.arange(k), j] > best
        starts[better] = trial.reshape(k, per_round, d)[np.arange(k), j][better]
        best[better] = tv[np.arange(k), j][better]
        step = np.where(snap.categorical, step, step * 0.4)
    rest = U[order[n_restarts:]]
    ranked = np.vstack([starts[np.argsort(-best, kind="stable")], rest])
    _, first = np.unique(ranked, axis=0, return_index=True)
    return ranked[np.sort(first)]
