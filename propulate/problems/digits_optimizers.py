"""A conditional training objective: the digits network trained with a chosen optimizer and
learning-rate schedule, each with its own parameters.

:func:`digits_optimizers` trains a one-hidden-layer network (ReLU, softmax output, cross-entropy)
on the digits split of :mod:`propulate.problems.digits_mlp` with a small numpy implementation
of four optimizers and four schedules, and yields the validation log loss after each epoch (so
a pruner can stop it). Its space, ``examples/digits_optimizers/space.yaml``, is conditional: the
objective receives only the parameters of the chosen optimizer and schedule.

Optimizers (update of a weight ``w`` with gradient ``g`` at learning rate ``lr``):

* ``sgd``: velocity ``v = momentum * v - lr * g``; ``w += v``, or with ``nesterov == "true"``
  ``w += momentum * v - lr * g``;
* ``adam``: moments with ``beta1``, ``beta2``, bias-corrected, ``w -= lr * m / (sqrt(s) + eps)``;
* ``adagrad``: ``a += g^2`` from ``initial_accumulator_value``, ``w -= lr * g / (sqrt(a) + eps)``;
* ``rmsprop``: ``s = rho * s + (1 - rho) * g^2``, ``v = momentum * v + g / (sqrt(s) + eps)``,
  ``w -= lr * v``.

Schedules (learning rate of epoch ``e`` of ``E``): ``constant``; ``step`` (times ``gamma`` every
``step_size`` epochs); ``exponential`` (times ``decay`` per epoch); ``cosine`` (from ``lr`` to
``eta_min_ratio * lr`` over the run). Needs scikit-learn for the data (extra ``examples``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from propulate.problems.digits_mlp import DIVERGED, digits_data

#: Epochs of a full run (27: ASHA with eta 3 checks at the epoch indices 1, 3 and 9).
EPOCHS = 27


def learning_rate(params: Mapping[str, Any], epoch: int, epochs: int) -> float:
    """The schedule's learning rate of ``epoch`` (0-based) of ``epochs``."""
    lr = float(params["learning_rate"])
    schedule = params.get("schedule", "constant")
    if schedule == "step":
        return lr * float(params["gamma"]) ** (epoch // int(params["step_size"]))
    if schedule == "exponential":
        return lr * float(params["decay"]) ** epoch
    if schedule == "cosine":
        low = lr * float(params["eta_min_ratio"])
        return low + 0.5 * (lr - low) * (1 + math.cos(math.pi * epoch / max(epochs - 1, 1)))
    return lr


class Optimizer:
    """One of the four optimizers over a list of weight arrays (see the module docstring)."""

    def __init__(self, params: Mapping[str, Any], weights: list[np.ndarray]) -> None:
        self.kind = str(params["optimizer"])
        self.p = params
        self.t = 0
        zeros = [np.zeros_like(w) for w in weights]
        self.v = [z.copy() for z in zeros]
        start = float(params.get("initial_accumulator_value", 0.0))
        self.s = [z + start for z in zeros]

    def step(self, weights: list[np.ndarray], grads: list[np.ndarray], lr: float) -> None:
        """Update ``weights`` in place."""
        p, self.t = self.p, self.t + 1
        for w, g, v, s in zip(weights, grads, self.v, self.s, strict=True):
            if self.kind == "sgd":
                mom = float(p.get("momentum", 0.0))
                v *= mom
                v -= lr * g
                w += mom * v - lr * g if p.get("nesterov") == "true" else v
            elif self.kind == "adam":
                b1, b2, eps = float(p["beta1"]), float(p["beta2"]), float(p["eps"])
                v *= b1
                v += (1 - b1) * g
                s *= b2
                s += (1 - b2) * g * g
                m_hat, s_hat = v / (1 - b1**self.t), s / (1 - b2**self.t)
                w -= lr * m_hat / (np.sqrt(s_hat) + eps)
            elif self.kind == "adagrad":
                s += g * g
                w -= lr * g / (np.sqrt(s) + float(p["eps"]))
            elif self.kind == "rmsprop":
                rho = float(p["rho"])
                s *= rho
                s += (1 - rho) * g * g
                v *= float(p.get("momentum", 0.0))
                v += g / (np.sqrt(s) + float(p["eps"]))
                w -= lr * v
            else:
                raise ValueError(f"unknown optimizer {self.kind!r}")


def _forward(weights: list[np.ndarray], X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    W1, b1, W2, b2 = weights
    h = np.maximum(X @ W1 + b1, 0.0)
    z = h @ W2 + b2
    z -= z.max(axis=1, keepdims=True)
    p = np.exp(z)
    return h, p / p.sum(axis=1, keepdims=True)


def initial_weights(n_in: int, width: int, k: int, rng: np.random.Generator) -> list[np.ndarray]:
    """``[W1, b1, W2, b2]`` of a network with ``width`` hidden units and ``k`` outputs: He
    initialisation of the hidden layer, ``1 / width`` variance for the output, zero biases."""
    return [
        rng.normal(0, math.sqrt(2 / n_in), (n_in, width)),
        np.zeros(width),
        rng.normal(0, math.sqrt(1 / width), (width, k)),
        np.zeros(k),
    ]


def digits_optimizers(params: Mapping[str, Any], *, epochs: int = EPOCHS) -> Iterator[float]:
    """Train on the digits data and yield the validation log loss after each epoch.

    Parameters
    ----------
    params : mapping
        The active parameters of ``examples/digits_optimizers/space.yaml``.
    epochs : int
        Epochs of a full run.

    Yields
    ------
    float
        The validation log loss (nats); :data:`DIVERGED` once when training diverges.
    """
    X, y, Xv, yv = digits_data()
    rng = np.random.default_rng(0)
    weights = initial_weights(X.shape[1], int(params["width"]), int(y.max()) + 1, rng)
    k = len(weights[3])
    opt = Optimizer(params, weights)
    onehot = np.eye(k)[y]
    batch = int(params["batch_size"])
    for epoch in range(epochs):
        lr = learning_rate(params, epoch, epochs)
        order = rng.permutation(len(X))
        with np.errstate(all="ignore"):
            for i in range(0, len(X), batch):
                idx = order[i : i + batch]
                h, p = _forward(weights, X[idx])
                dz = (p - onehot[idx]) / len(idx)
                dh = (dz @ weights[2].T) * (h > 0)
                grads = [X[idx].T @ dh, dh.sum(0), h.T @ dz, dz.sum(0)]
                opt.step(weights, grads, lr)
            _, pv = _forward(weights, Xv)
            loss = float(-np.mean(np.log(np.maximum(pv[np.arange(len(yv)), yv], 1e-15))))
        if not math.isfinite(loss) or loss > DIVERGED:
            yield DIVERGED
            return
        yield loss
