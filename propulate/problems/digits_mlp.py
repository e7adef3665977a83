"""A real training objective: a small neural network on scikit-learn's bundled digits data.

:func:`digits_mlp` trains scikit-learn's ``MLPClassifier`` (stochastic gradient descent with
Nesterov momentum) epoch by epoch with ``partial_fit`` and yields the validation loss (log
loss, nats) after each epoch, so a pruner (``--pruner asha``) can stop a bad configuration
after a few epochs. It needs the optional extra ``examples`` (scikit-learn)::

    python -m propulate evolve --objective propulate.problems.digits_mlp:digits_mlp \\
        --space examples/digits_mlp/space.yaml --out results/digits --time-limit 300 \\
        --pruner asha:min_steps=1,eta=3

The data: the 1797 8x8 images of ``sklearn.datasets.load_digits`` (no download), split once
into 70 % training and 30 % validation (stratified, seed 0), features standardised on the
training part. The network's initial weights and the order of the minibatches are seeded
(``random_state=0``): the same configuration gives the same curve.

The hyperparameters (:data:`SPACE`): ``learning_rate`` (SGD step size), ``width`` (units per
hidden layer), ``depth`` (hidden layers), ``batch_size``, ``alpha`` (L2 penalty) and
``momentum``. A run trains :data:`EPOCHS` epochs; its loss is the last epoch's validation loss.
A run that diverges (non-finite weights or loss) reports :data:`DIVERGED` and ends there.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

#: Epochs of a full training run (27 = 3^3: ASHA with eta 3 and min_steps 1 has rungs at the
#: epoch indices 1, 3 and 9).
EPOCHS = 27

#: The validation loss reported for a run that diverged (about 4 x a uniform guess's ln 10).
DIVERGED = 10.0

#: The search space, as ``propulate.SearchSpace.from_limits`` (and the YAML space file) read it.
SPACE: dict[str, dict[str, Any]] = {
    "learning_rate": {"type": "float", "low": 1e-4, "high": 0.5, "log": True},
    "width": {"type": "int", "low": 8, "high": 128, "log": True},
    "depth": {"type": "int", "low": 1, "high": 3},
    "batch_size": {"type": "int", "low": 16, "high": 256, "log": True},
    "alpha": {"type": "float", "low": 1e-6, "high": 1e-1, "log": True},
    "momentum": {"type": "float", "low": 0.0, "high": 0.99},
}


@functools.cache
def digits_data() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The standardised training and validation split ``(X_train, y_train, X_val, y_val)``."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    X, y = load_digits(return_X_y=True)
    X_train, X_val, y_train, y_val = train_test_split(
        X, y, test_size=0.3, stratify=y, random_state=0
    )
    scaler = StandardScaler().fit(X_train)
    return scaler.transform(X_train), y_train, scaler.transform(X_val), y_val


def _network(params: Mapping[str, Any]) -> Any:
    from sklearn.neural_network import MLPClassifier

    width, depth = int(params["width"]), int(params["depth"])
    return MLPClassifier(
        hidden_layer_sizes=(width,) * depth,
        solver="sgd",
        learning_rate_init=float(params["learning_rate"]),
        momentum=float(params["momentum"]),
        nesterovs_momentum=True,
        alpha=float(params["alpha"]),
        batch_size=int(params["batch_size"]),
        random_state=0,
    )


def digits_mlp(params: Mapping[str, Any], *, epochs: int = EPOCHS) -> Iterator[float]:
    """Train on the digits data and yield the validation loss after each epoch.

    Parameters
    ----------
    params : mapping
        ``learning_rate``, ``width``, ``depth``, ``batch_size``, ``alpha``, ``momentum``
        (:data:`SPACE`).
    epochs : int
        Epochs of a full run.

    Yields
    ------
    float
        The validation log loss (nats) after each epoch; :data:`DIVERGED` once if training
        diverges, and then the run ends.
    """
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.metrics import log_loss

    X_train, y_train, X_val, y_val = digits_data()
    classes = np.unique(y_train)
    net = _network(params)
    for _ in range(epochs):
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore", ConvergenceWarning)
            warnings.simplefilter("ignore", RuntimeWarning)
            try:
                net.partial_fit(X_train, y_train, classes=classes)
            except ValueError:  # scikit-learn refuses non-finite weights: diverged
                yield DIVERGED
                return
            proba = net.predict_proba(X_val)
        loss = log_loss(y_val, proba, labels=classes) if np.isfinite(proba).all() else math.inf
        if not math.isfinite(loss) or loss > DIVERGED:
            yield DIVERGED
            return
        yield float(loss)


def digits_mlp_costs(params: Mapping[str, Any], *, epochs: int = EPOCHS) -> dict[str, float]:
    """Two (three) objectives of the same training: the final validation loss, the network's
    number of weights and the training's wall-clock seconds, for ``--objectives``, e.g.
    ``val_loss:min,weights:min`` (accuracy against model size) or
    ``val_loss:min,seconds:min`` (against training time).

    Returns
    -------
    dict
        ``val_loss`` (nats, :func:`digits_mlp`'s last value), ``weights`` (weights and biases
        of the network: 64 inputs, ``depth`` hidden layers of ``width``, 10 outputs) and
        ``seconds`` (the training and validation, measured).
    """
    import time

    start = time.perf_counter()
    curve = list(digits_mlp(params, epochs=epochs))
    last = curve[-1] if curve else DIVERGED
    width, depth = int(params["width"]), int(params["depth"])
    sizes = [64, *([width] * depth), 10]
    weights = sum(a * b + b for a, b in zip(sizes, sizes[1:], strict=False))
    return {"val_loss": last, "weights": float(weights), "seconds": time.perf_counter() - start}
