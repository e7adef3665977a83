"""The LCM's file format: JSON data (never a pickle), one object per model.

A model file is ``{"format": "propulate-lcm/1", ...}`` with the sizes (``n_tasks``, ``latent``,
``rank``), ``log_output``, the training data (``X`` in the unit cube, ``task_index``, ``y`` in
the objective's units), the standardization (``y_mean``, ``y_std``), one nested list per
hyperparameter block (``lengthscale``, ``W``, ``kappa``, ``noise``; see
:mod:`propulate.models.hyperparameters`), the ``log_likelihood`` (``null`` when unknown) and
free metadata ``info`` (the spaces, the tasks and their best configurations).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from propulate.models.hyperparameters import Hyper, HyperLayout
from propulate.runs.files import write_json

FORMAT = "propulate-lcm/1"
#: The fields besides the hyperparameter blocks, as ``to_data`` expects and ``from_data`` returns.
FIELDS = (
    "n_tasks",
    "latent",
    "rank",
    "log_output",
    "X",
    "task_index",
    "y",
    "y_mean",
    "y_std",
    "log_likelihood",
    "info",
)


def to_data(fields: Mapping[str, Any], layout: HyperLayout, hyper: Hyper) -> dict[str, Any]:
    """A model as JSON-ready data.

    Parameters
    ----------
    fields : mapping
        The entries of :data:`FIELDS` (arrays allowed; a NaN ``log_likelihood`` is stored as
        ``null``).
    layout : HyperLayout
        The model's sizes.
    hyper : dict
        The hyperparameter blocks.
    """
    data: dict[str, Any] = {"format": FORMAT}
    for name in FIELDS:
        value = fields[name]
        data[name] = value.tolist() if isinstance(value, np.ndarray) else value
    ll = data["log_likelihood"]
    data["log_likelihood"] = float(ll) if ll is not None and math.isfinite(ll) else None
    for name in layout.shapes:
        data[name] = np.asarray(hyper[name], dtype=float).tolist()
    return data


def from_data(data: Mapping[str, Any]) -> tuple[dict[str, Any], Hyper]:
    """The fields and hyperparameter blocks of data written by :func:`to_data`.

    Raises
    ------
    ValueError
        When ``data`` is not a model of this format or its blocks have the wrong shapes.
    """
    if not isinstance(data, Mapping) or data.get("format") != FORMAT:
        found = data.get("format") if isinstance(data, Mapping) else type(data).__name__
        raise ValueError(f"not a {FORMAT} model (format={found!r})")
    fields = {name: data.get(name) for name in FIELDS}
    fields["X"] = np.array(fields["X"], dtype=float)
    fields["info"] = dict(fields["info"] or {})
    ll = fields["log_likelihood"]
    fields["log_likelihood"] = float(ll) if ll is not None else float("nan")
    layout = HyperLayout(
        int(data["latent"]), int(data["n_tasks"]), fields["X"].shape[1], int(data["rank"])
    )
    hyper: Hyper = {}
    for name, shape in layout.shapes.items():
        block = np.array(data[name], dtype=float)
        if block.size != math.prod(shape):
            raise ValueError(
                f"model block {name!r} has {block.size} values, expected shape {shape}"
            )
        hyper[name] = block.reshape(shape)
    return fields, hyper


def write(path: str | Path, data: Mapping[str, Any]) -> None:
    """Write model data as one line of JSON, atomically (a temporary file renamed into place)."""
    write_json(path, data, indent=None)


def read(path: str | Path) -> dict[str, Any]:
    """Read model data written by :func:`write`."""
    try:
        return json.loads(Path(path).read_text())
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: not a JSON model file ({err})") from None
