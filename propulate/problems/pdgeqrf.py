"""ScaLAPACK's parallel QR factorization PDGEQRF: the tuning problem's parameters and constraint.

The runtime itself is measured by the C driver ``apps/pdgeqrf/pdgeqrf_driver`` (built with
``make -C apps/pdgeqrf``), run once per evaluation as a command objective
(``config/pdgeqrf.yaml``). This module holds what the tuner needs before launching it.

Task: the matrix shape ``{"m": rows, "n": columns}``. Parameters:

* ``mb``, ``nb`` -- row and column block size of the 2-D block-cyclic distribution;
* ``nproc`` -- MPI processes of the launch (at most the cores the job has: the upper bound of
  ``nproc`` in the config, and ``PROPULATE_PDGEQRF_MAX_NPROC`` when that variable is set);
* ``p`` -- rows of the process grid; its columns are ``q = nproc // p`` (:func:`grid_q`), so
  ``p * q <= nproc`` always holds and at most ``p - 1`` processes stay idle.

A configuration is feasible when ``1 <= p <= nproc``, ``mb * p <= m`` and ``nb * q <= n``
(every process row and column owns at least one block). :func:`feasible` is the campaign's
``constraint``: the tuner never launches a configuration it rejects.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from typing import Any

#: Environment variable: the most MPI processes one evaluation may use (unset: no extra cap).
MAX_NPROC_ENV = "PROPULATE_PDGEQRF_MAX_NPROC"
#: Block size of the untuned default configuration (``mb = nb``).
DEFAULT_BLOCK = 32
#: The parameters of the problem, in the order of the config.
PARAMETERS = ("mb", "nb", "nproc", "p")


def _int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not (
        isinstance(value, int | float) or hasattr(value, "__index__")
    ):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if isinstance(value, float) and not value.is_integer():
        raise ValueError(f"{name} must be an integer, got {value!r}")
    return int(value)


def max_nproc() -> int | None:
    """The cap on ``nproc`` from ``PROPULATE_PDGEQRF_MAX_NPROC``, or None when it is not set.

    Raises
    ------
    ValueError
        If the variable is set but not a positive integer.
    """
    raw = os.environ.get(MAX_NPROC_ENV, "").strip()
    if not raw:
        return None
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{MAX_NPROC_ENV}={raw!r} is not an integer") from None
    if value < 1:
        raise ValueError(f"{MAX_NPROC_ENV}={raw!r} must be at least 1")
    return value


def grid_q(nproc: int, p: int) -> int:
    """Columns of the process grid: ``nproc // p`` (the driver's default for ``--q``).

    Parameters
    ----------
    nproc : int
        MPI processes of the launch.
    p : int
        Rows of the process grid.

    Returns
    -------
    int
        ``q`` with ``p * q <= nproc``.
    """
    return nproc // p


def squarest_p(nproc: int) -> int:
    """Rows of the squarest ``p x q`` grid using all ``nproc`` processes (``p <= q``).

    Parameters
    ----------
    nproc : int
        MPI processes.

    Returns
    -------
    int
        The largest divisor ``p`` of ``nproc`` with ``p <= sqrt(nproc)``: 1 for 2 processes,
        2 for 4 or 8, 4 for 16.
    """
    return max(d for d in range(1, math.isqrt(nproc) + 1) if nproc % d == 0)


def infeasibility(params: Mapping[str, Any], task: Mapping[str, Any]) -> str | None:
    """Why ``params`` cannot run on ``task``, or None when it can.

    Parameters
    ----------
    params : Mapping[str, int]
        ``{"mb", "nb", "nproc", "p"}`` (see the module docstring).
    task : Mapping[str, int]
        ``{"m": rows, "n": columns}``.

    Returns
    -------
    str or None
        One line naming the violated rule, e.g. ``"nb * q = 300 * 2 exceeds n = 500"``.
    """
    try:
        mb, nb = _int(params["mb"], "mb"), _int(params["nb"], "nb")
        nproc, p = _int(params["nproc"], "nproc"), _int(params["p"], "p")
        m, n = _int(task["m"], "m"), _int(task["n"], "n")
    except KeyError as err:
        return f"missing value {err.args[0]!r}"
    except ValueError as err:
        return str(err)
    if min(mb, nb, nproc, p, m, n) < 1:
        return "every value must be a positive integer"
    cap = max_nproc()
    if cap is not None and nproc > cap:
        return f"nproc = {nproc} exceeds {MAX_NPROC_ENV} = {cap}"
    if p > nproc:
        return f"p = {p} exceeds nproc = {nproc}"
    q = grid_q(nproc, p)
    if mb * p > m:
        return f"mb * p = {mb} * {p} exceeds m = {m}"
    if nb * q > n:
        return f"nb * q = {nb} * {q} exceeds n = {n}"
    return None


def feasible(params: Mapping[str, Any], task: Mapping[str, Any]) -> bool:
    """The campaign's constraint: whether ``params`` may be launched on ``task``.

    Parameters
    ----------
    params : Mapping[str, int]
        ``{"mb", "nb", "nproc", "p"}``.
    task : Mapping[str, int]
        ``{"m": rows, "n": columns}``.

    Returns
    -------
    bool
        True when :func:`infeasibility` finds nothing wrong.
    """
    return infeasibility(params, task) is None


def default_params(nproc: int) -> dict[str, int]:
    """The untuned default: ``mb = nb = 32`` on the squarest grid of ``nproc`` processes.

    Parameters
    ----------
    nproc : int
        MPI processes (normally the most the campaign allows).

    Returns
    -------
    dict[str, int]
        ``{"mb": 32, "nb": 32, "nproc": nproc, "p": squarest_p(nproc)}``.
    """
    return {"mb": DEFAULT_BLOCK, "nb": DEFAULT_BLOCK, "nproc": nproc, "p": squarest_p(nproc)}
