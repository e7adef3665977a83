"""The first Propulate paper's search space on the digits network.

:func:`digits_paper` trains a one-hidden-layer network on the digits split of
:mod:`propulate.problems.digits_mlp` with every choice of the paper's ResNet-50 table
(``examples/digits_optimizers/paper_space.yaml``), in numpy, and yields the validation log loss
(of the softmax of the output, whatever the training loss) after each of :data:`EPOCHS` epochs,
so a pruner can stop it. It receives the active parameters only.

* Optimizers (learning rate ``lr``, gradient ``g``): ``sgd`` and ``rmsprop`` as in
  :mod:`propulate.problems.digits_optimizers` (with ``epsilon``); ``adagrad`` with
  ``initial_accumulator_value``; ``adadelta``: ``s = rho s + (1 - rho) g^2``,
  ``d = sqrt(u + eps) / sqrt(s + eps) g``, ``u = rho u + (1 - rho) d^2``, ``w -= lr d``.
* Clipping before the update: each gradient array scaled to norm ``clipnorm`` at most, and/or
  its values clipped to ``[-clipvalue, clipvalue]``.
* Weight averaging (``use_ema``): ``ema = m ema + (1 - m) w`` after every step, the weights set
  to it every ``ema_overwrite_frequency`` steps, and the averaged weights evaluated.
* Learning rate at step ``t``: ``initial_lr (t / warmup_steps) ^ warmup_power`` during the
  warmup, then from ``initial_lr`` over ``t' = t - warmup_steps``: exponential
  ``rate ^ (t' / decay_steps)``; inverse time ``1 / (1 + rate t' / decay_steps)``; polynomial
  ``(initial - end) (1 - min(t', decay_steps) / decay_steps) ^ power + end``. A staircase
  schedule uses ``floor(t' / decay_steps)`` (inverse time) or moves only at epoch ends
  (polynomial).
* Training losses on the output ``z`` (one-hot ``y``, ``k`` classes, ``y' = 2 y - 1``):
  categorical cross-entropy and KL divergence (equal for one-hot targets) on ``softmax(z)``;
  binary cross-entropy on ``sigmoid(z)`` per class; ``hinge`` ``mean(max(0, 1 - y' z))``,
  ``squared_hinge`` its square; ``categorical_hinge`` ``max(0, 1 + max_other z - z_true)``.
* Hidden activations: Keras' twelve (``softmax`` over the hidden units, ``swish`` = ``x
  sigmoid(x)``, ``hard_sigmoid`` = ``clip(0.2 x + 0.5, 0, 1)``, ``selu`` with its published
  constants).

A run that diverges yields :data:`~propulate.problems.digits_mlp.DIVERGED` once and ends.
Needs scikit-learn for the data (extra ``examples``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

from propulate.problems import digits_optimizers
from propulate.problems.digits_mlp import DIVERGED, digits_data

#: Epochs of a full run (27: ASHA with eta 3 checks at the epoch indices 1, 3 and 9).
EPOCHS = 27
#: Minibatch size (the table has none).
BATCH = 32
SELU_ALPHA, SELU_SCALE = 1.6732632423543772, 1.0507009873554805

Array = np.ndarray


def _sigmoid(x: Array) -> Array:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def _softmax(x: Array) -> Array:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def activation(
    name: str,
) -> tuple[Callable[[Array], Array], Callable[[Array, Array, Array], Array]]:
    """``(f, back)``: the activation and ``back(x, f(x), upstream)``, the gradient it passes on."""
    if name == "softmax":
        return _softmax, lambda x, s, g: s * (g - (g * s).sum(axis=1, keepdims=True))
    elementwise: dict[str, tuple[Callable[[Array], Array], Callable[[Array, Array], Array]]] = {
        "elu": (lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0))),
                lambda x, f: np.where(x > 0, 1.0, f + 1.0)),
        "exponential": (np.exp, lambda x, f: f),
        "hard_sigmoid": (lambda x: np.clip(0.2 * x + 0.5, 0.0, 1.0),
                         lambda x, f: np.where(np.abs(x) < 2.5, 0.2, 0.0)),
        "linear": (lambda x: x, lambda x, f: np.ones_like(x)),
        "relu": (lambda x: np.maximum(x, 0.0), lambda x, f: (x > 0).astype(float)),
        "selu": (lambda x: SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * np.expm1(np.minimum(x, 0))),
                 lambda x, f: np.where(x > 0, SELU_SCALE, f + SELU_SCALE * SELU_ALPHA)),
        "sigmoid": (_sigmoid, lambda x, f: f * (1 - f)),
        "softplus": (lambda x: np.logaddexp(0.0, x), lambda x, f: _sigmoid(x)),
        "softsign": (lambda x: x / (1 + np.abs(x)), lambda x, f: 1 / (1 + np.abs(x)) ** 2),
        "swish": (lambda x: x * _sigmoid(x),
                  lambda x, f: _sigmoid(x) * (1 + x * (1 - _sigmoid(x)))),
        "tanh": (np.tanh, lambda x, f: 1 - f * f),
    }  # fmt: skip
    f, d = elementwise[name]
    return f, lambda x, fx, g: g * d(x, fx)


def loss_gradient(name: str, z: Array, onehot: Array) -> tuple[float, Array]:
    """The mean training loss ``name`` over the rows of the output ``z`` and its gradient."""
    n, k = z.shape
    if name in ("categorical_crossentropy", "kl_divergence"):
        p = _softmax(z)
        value = -np.log(np.maximum((p * onehot).sum(axis=1), 1e-15)).mean()
        return float(value), (p - onehot) / n
    if name == "binary_crossentropy":
        s = _sigmoid(z)
        value = -(
            onehot * np.log(np.maximum(s, 1e-15)) + (1 - onehot) * np.log(np.maximum(1 - s, 1e-15))
        )
        return float(value.mean()), (s - onehot) / (n * k)
    sign = 2 * onehot - 1
    if name in ("hinge", "squared_hinge"):
        margin = np.maximum(0.0, 1 - sign * z)
        if name == "hinge":
            return float(margin.mean()), -sign * (margin > 0) / (n * k)
        return float((margin**2).mean()), -2 * sign * margin / (n * k)
    if name == "categorical_hinge":
        true = (z * onehot).sum(axis=1)
        others = np.where(onehot > 0, -np.inf, z)
        worst = others.argmax(axis=1)
        margin = np.maximum(0.0, 1 + others.max(axis=1) - true)
        grad = np.zeros_like(z)
        on = margin > 0
        grad[on, worst[on]] += 1.0
        grad[on] -= onehot[on]
        return float(margin.mean()), grad / n
    raise ValueError(f"unknown loss {name!r}")


def learning_rate(p: Mapping[str, Any], step: int, epoch_start: int) -> float:
    """The learning rate of optimizer step ``step`` (0-based); ``epoch_start`` is the first
    step of the current epoch (a staircase polynomial decay stays there during the epoch)."""
    peak, warm = float(p["initial_lr"]), int(p["warmup_steps"])
    if step < warm:
        return peak * ((step + 1) / warm) ** float(p["warmup_power"])
    t, decay = step - warm, int(p["decay_steps"])
    schedule = p["schedule"]
    if schedule == "exponential":
        return peak * float(p["exponential_decay_rate"]) ** (t / decay)
    if schedule == "inverse_time":
        ratio = t // decay if p["inverse_staircase"] == "true" else t / decay
        return peak / (1 + float(p["inverse_decay_rate"]) * ratio)
    if p["polynomial_staircase"] == "true":
        t = max(epoch_start - warm, 0)
    end = float(p["end_lr"])
    return (peak - end) * (1 - min(t, decay) / decay) ** float(p["power"]) + end


class Optimizer(digits_optimizers.Optimizer):
    """The table's optimizers with clipping and weight averaging (module docstring): SGD,
    Adagrad and RMSprop are :class:`propulate.problems.digits_optimizers.Optimizer`'s (the
    table's ``epsilon`` is its ``eps``), Adadelta is added here."""

    def __init__(self, p: Mapping[str, Any], weights: list[Array]) -> None:
        super().__init__({**p, "eps": float(p.get("epsilon", 1e-7))}, weights)
        self.u = [np.zeros_like(w) for w in weights]
        self.ema = [w.copy() for w in weights] if p["use_ema"] == "true" else None
        self.steps = 0

    def clip(self, g: Array) -> Array:
        """The gradient after ``clipnorm`` and ``clipvalue``."""
        p = self.p
        if p["use_clipnorm"] == "true":
            norm = float(np.sqrt((g * g).sum()))
            bound = float(p["clipnorm"])
            if norm > bound:
                g = g * (bound / norm)
        if p["use_clipvalue"] == "true":
            bound = float(p["clipvalue"])
            g = np.clip(g, -bound, bound)
        return g

    def step(self, weights: list[Array], grads: list[Array], lr: float) -> None:
        """Clip the gradients, update ``weights`` in place, average them."""
        grads = [self.clip(g) for g in grads]
        if self.kind == "adadelta":
            rho, eps = float(self.p["rho"]), float(self.p["eps"])
            for w, g, s, u in zip(weights, grads, self.s, self.u, strict=True):
                s *= rho
                s += (1 - rho) * g * g
                d = np.sqrt(u + eps) / np.sqrt(s + eps) * g
                u *= rho
                u += (1 - rho) * d * d
                w -= lr * d
        else:
            super().step(weights, grads, lr)
        self.steps += 1
        if self.ema is not None:
            m = float(self.p["ema_momentum"])
            for e, w in zip(self.ema, weights, strict=True):
                e *= m
                e += (1 - m) * w
            if self.steps % int(self.p["ema_overwrite_frequency"]) == 0:
                for e, w in zip(self.ema, weights, strict=True):
                    w[...] = e

    def evaluated(self, weights: list[Array]) -> list[Array]:
        """The weights to evaluate: the averaged ones with ``use_ema``."""
        return self.ema if self.ema is not None else weights


def digits_paper(params: Mapping[str, Any], *, epochs: int = EPOCHS) -> Iterator[float]:
    """Train on the digits data and yield the validation log loss after each epoch.

    Parameters
    ----------
    params : mapping
        The active parameters of ``examples/digits_optimizers/paper_space.yaml``.
    epochs : int
        Epochs of a full run.

    Yields
    ------
    float
        The validation log loss (nats); :data:`DIVERGED` once when training diverges.
    """
    X, y, Xv, yv = digits_data()
    rng = np.random.default_rng(0)
    k = int(y.max()) + 1
    weights = digits_optimizers.initial_weights(X.shape[1], int(params["width"]), k, rng)
    act, back = activation(str(params["activation"]))
    opt = Optimizer(params, weights)
    onehot = np.eye(k)[y]
    step = 0
    for _ in range(epochs):
        order, start = rng.permutation(len(X)), step
        with np.errstate(all="ignore"):
            for i in range(0, len(X), BATCH):
                idx = order[i : i + BATCH]
                W1, b1, W2, b2 = weights
                a = X[idx] @ W1 + b1
                h = act(a)
                _, dz = loss_gradient(str(params["loss"]), h @ W2 + b2, onehot[idx])
                da = back(a, h, dz @ W2.T)
                grads = [X[idx].T @ da, da.sum(0), h.T @ dz, dz.sum(0)]
                opt.step(weights, grads, learning_rate(params, step, start))
                step += 1
            W1, b1, W2, b2 = opt.evaluated(weights)
            pv = _softmax(act(Xv @ W1 + b1) @ W2 + b2)
            loss = float(-np.mean(np.log(np.maximum(pv[np.arange(len(yv)), yv], 1e-15))))
        if not math.isfinite(loss) or loss > DIVERGED:
            yield DIVERGED
            return
        yield loss
