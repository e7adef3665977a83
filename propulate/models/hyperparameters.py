"""The LCM's hyperparameters: their blocks, bounds and place in the optimizer's flat vector.

An LCM with ``Q`` latent functions over ``T`` tasks, ``d`` encoded inputs and coregionalization
rank ``R`` has four blocks of hyperparameters:

===============  =============  ==========  ==================================================
block            shape          optimized   meaning
===============  =============  ==========  ==================================================
``lengthscale``  ``(Q, d)``     as ``log``  ARD lengthscales of each latent kernel (unit cube)
``W``            ``(Q, T, R)``  as is       coregionalization coefficients of each task
``kappa``        ``(Q, T)``     as ``log``  task-specific variances of each latent function
``noise``        ``(T,)``       as ``log``  observation noise variance of each task
===============  =============  ==========  ==================================================

:class:`HyperLayout` is the one description of how these blocks are packed into the flat
vector ``theta`` that the likelihood, its gradient, the optimizer's bounds, a prior, the GPy
bridge and the model files use; nothing else spells out the order.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

#: The blocks in the order they are packed.
BLOCKS: tuple[str, ...] = ("lengthscale", "W", "kappa", "noise")
#: Blocks optimized on a log scale (positive quantities).
LOG_SCALED = frozenset({"lengthscale", "kappa", "noise"})
#: Bounds of each block's entries in ``theta`` (log units for log-scaled blocks), for
#: standardized outputs and unit-cube inputs.
BOUNDS: dict[str, tuple[float, float]] = {
    "lengthscale": (math.log(1e-3), math.log(1e2)),
    "W": (-10.0, 10.0),
    "kappa": (math.log(1e-6), math.log(1e1)),
    "noise": (math.log(1e-6), math.log(1e1)),
}
#: Variance added to the diagonal of every kernel matrix (a numerical floor, not a parameter).
JITTER = 1e-8

Hyper = dict[str, np.ndarray]


@dataclass(frozen=True)
class HyperLayout:
    """Where each hyperparameter block sits in the flat vector ``theta``.

    Parameters
    ----------
    latent : int
        Number ``Q`` of latent functions.
    tasks : int
        Number ``T`` of tasks.
    dim : int
        Number ``d`` of encoded inputs.
    rank : int
        Rank ``R`` of each ``W_q``.
    """

    latent: int
    tasks: int
    dim: int
    rank: int

    @property
    def shapes(self) -> dict[str, tuple[int, ...]]:
        """The shape of each block."""
        Q, T, d, R = self.latent, self.tasks, self.dim, self.rank
        return {"lengthscale": (Q, d), "W": (Q, T, R), "kappa": (Q, T), "noise": (T,)}

    @property
    def slices(self) -> dict[str, slice]:
        """The slice of ``theta`` holding each block."""
        out, start = {}, 0
        for name, shape in self.shapes.items():
            size = math.prod(shape)
            out[name] = slice(start, start + size)
            start += size
        return out

    @property
    def size(self) -> int:
        """Length of ``theta``."""
        return sum(math.prod(shape) for shape in self.shapes.values())

    def pack(self, values: Mapping[str, np.ndarray | float], log: bool = True) -> np.ndarray:
        """The flat vector of the blocks ``values`` (a scalar fills its whole block).

        Parameters
        ----------
        values : mapping
            One array (or scalar) per block name.
        log : bool
            Take the ``log`` of the log-scaled blocks (hyperparameter values to ``theta``);
            ``False`` packs as given (gradients, prior widths, masks).
        """
        parts = []
        for name, shape in self.shapes.items():
            block = np.broadcast_to(np.asarray(values[name]), shape).ravel()
            parts.append(np.log(block) if log and name in LOG_SCALED else block)
        return np.concatenate(parts)

    def unpack(self, theta: np.ndarray, log: bool = True) -> Hyper:
        """The blocks of ``theta`` as arrays of their shapes (copies).

        Parameters
        ----------
        theta : array
            A vector of length :attr:`size`.
        log : bool
            Exponentiate the log-scaled blocks (``theta`` to hyperparameter values).
        """
        theta = np.asarray(theta, dtype=float)
        if theta.shape != (self.size,):
            raise ValueError(f"expected {self.size} hyperparameters, got shape {theta.shape}")
        out: Hyper = {}
        for name, sl in self.slices.items():
            block = np.array(theta[sl]).reshape(self.shapes[name])
            out[name] = np.exp(block) if log and name in LOG_SCALED else block
        return out

    def bounds(self) -> list[tuple[float, float]]:
        """Optimizer bounds of every entry of ``theta``."""
        return [
            BOUNDS[name] for name, shape in self.shapes.items() for _ in range(math.prod(shape))
        ]

    def task_mask(self, task: int) -> np.ndarray:
        """Boolean mask over ``theta`` of one task's entries: its ``W`` rows, kappas and noise."""
        masks = {name: np.zeros(shape, bool) for name, shape in self.shapes.items()}
        masks["W"][:, task, :] = True
        masks["kappa"][:, task] = True
        masks["noise"][task] = True
        return self.pack(masks, log=False).astype(bool)
