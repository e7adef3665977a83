"""Benchmark functions for black-box minimization, with their search spaces and known minima.

The nine functions of the Propulate paper's table (Taubert et al., ISC 2023) and the five extra
two-dimensional functions Propulate 1.2 ships, under the same names and with the same parameter
names and limits as Propulate 1.2's ``get_function_search_space``:

=============  ====  ===================  =============================================
name           dims  limits (per coord.)  global minimum
=============  ====  ===================  =============================================
sphere          2    +-5.12               0 at (0, 0)
rosenbrock      2    +-2.048              0 at (1, 1)
step            5    +-5.12               -25 at any x with every x_i in [-5.12, -5]
quartic        30    +-1.28               sum_i N_i(0, 1) at 0 (expected value 0)
rastrigin      20    +-5.12               0 at 0
griewank       10    +-600                0 at 0
schwefel       10    +-500                0 at x_i = 420.968746 (within 3e-6, see below)
bisphere       30    +-5.12               0 at x_i = mu_1 = 2.5
birastrigin    30    +-5.12               0 at x_i = mu_1 = 2.5
bukin           2    [-15,-5] x [-3,3]    0 at (-10, 1)
eggcrate        2    +-5                  0 at (0, 0)
himmelblau      2    +-6                  0 at (3, 2) (and three other points)
keane           2    [0, 10]              -0.6736675 at (1.3932491, 0) and (0, 1.3932491)
leon            2    [0, 10]              0 at (1, 1)
=============  ====  ===================  =============================================

Parameters are named ``"a"``, ``"b"``, ..., ``"z"``, ``"A1"``, ``"B1"``, ... in this order, as in
Propulate 1.2. A loss reads its parameters *by name*, in its limits' key order, so the order of the
keys in ``params`` does not matter (it does for griewank, quartic, rosenbrock and the 2-D functions).

Every function has an array kernel (:mod:`propulate.problems.kernels`) working on the last
axis of an array of points, so
:meth:`BenchmarkFunction.evaluate` scores a whole batch at once; the per-point loss gathers the
coordinates with one ``numpy.fromiter`` and calls the same kernel.

Notes
-----
* quartic is noisy: each call adds fresh standard normal noise per coordinate, as in the paper
  (Propulate 1.2 returns the absolute value of the sum; this module does not). Use
  ``benchmark_nd("quartic", 30, noise=False)`` for the noise-free version or ``seed=...`` for a
  reproducible noise stream.
* schwefel uses the paper's rounded constant V = 418.982887, so its value at the minimizer is
  about -2.7e-6 rather than exactly 0.
* keane is defined as 0 at the origin (its limit there), where the formula divides 0 by 0.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from propulate.problems import kernels

#: A loss over named parameters: ``loss(params) -> float`` to minimize.
Loss = Callable[[Mapping[str, Any]], float]
#: An array kernel: points of shape ``(..., d)`` -> values of shape ``(...)``.
Kernel = Callable[[NDArray[np.float64]], NDArray[np.float64]]


def param_names(dims: int) -> list[str]:
    """Propulate 1.2's parameter names for a ``dims``-dimensional function.

    Parameters
    ----------
    dims : int
        Number of parameters.

    Returns
    -------
    list[str]
        ``"a"`` ... ``"z"``, then ``"A1"`` ... ``"Z1"``, ``"A2"`` ... (as many as ``dims``).
    """
    lower, upper = string.ascii_lowercase, string.ascii_uppercase
    return [lower[i] if i < 26 else f"{upper[i % 26]}{i // 26}" for i in range(dims)]


# ---------------------------------------------------------------------------------------------
# Losses over named parameters and the registry.
# ---------------------------------------------------------------------------------------------


class KeyedLoss:
    """A loss ``params -> float`` reading its parameters by name and evaluating an array kernel.

    Parameters
    ----------
    name : str
        Name of the function (also its ``__name__``).
    kernel : callable
        Array kernel mapping points of shape ``(..., d)`` to values of shape ``(...)``.
    keys : sequence of str
        Parameter names, in the order of the kernel's coordinates.
    """

    def __init__(self, name: str, kernel: Kernel, keys: list[str] | tuple[str, ...]) -> None:
        self.__name__ = name
        self.__qualname__ = name
        self.kernel = kernel
        self.keys = tuple(keys)
        self._n = len(self.keys)

    def __call__(self, params: Mapping[str, Any]) -> float:
        """Evaluate the function.

        Parameters
        ----------
        params : Mapping[str, float]
            Parameter name -> coordinate value; must hold every name in :attr:`keys` (extra
            names are ignored).

        Returns
        -------
        float
            The function value.
        """
        try:
            x = np.fromiter(map(params.__getitem__, self.keys), dtype=np.float64, count=self._n)
        except KeyError as err:
            raise KeyError(
                f"{self.__name__} expects parameters {list(self.keys)}; missing {err}"
            ) from None
        return float(self.kernel(x))

    def __repr__(self) -> str:
        return f"<loss {self.__name__} over {self._n} parameters>"


@dataclass(frozen=True, eq=False)
class BenchmarkFunction:
    """A benchmark function with its search space and known global minimum.

    Attributes
    ----------
    name : str
        Registry name (Propulate 1.2's name).
    function : KeyedLoss
        The loss ``function(params) -> float``.
    limits : dict[str, tuple[float, float]]
        Propulate-style search space: parameter name -> (low, high), continuous. Treat as
        read-only; :func:`propulate.compat.utils.benchmark_functions.get_function_search_space` hands
        out copies.
    minimum : float
        The global minimum value (for a noisy function: its expected value).
    minimizer : dict[str, float] or None
        One global minimizer (parameter name -> value), or None if not known in closed form.
    noisy : bool
        Whether repeated evaluations at the same point differ.
    """

    name: str
    function: KeyedLoss
    limits: dict[str, tuple[float, float]]
    minimum: float
    minimizer: dict[str, float] | None
    noisy: bool = False
    description: str = field(default="", repr=False)

    @property
    def dims(self) -> int:
        """Number of parameters."""
        return len(self.limits)

    @property
    def keys(self) -> tuple[str, ...]:
        """Parameter names in coordinate order."""
        return self.function.keys

    def __call__(self, params: Mapping[str, Any]) -> float:
        """Evaluate the loss at ``params`` (parameter name -> value)."""
        return self.function(params)

    def evaluate(self, x: ArrayLike) -> NDArray[np.float64]:
        """Evaluate a batch of points given as an array.

        Parameters
        ----------
        x : array_like, shape (..., dims)
            Points, coordinates in :attr:`keys` order.

        Returns
        -------
        numpy.ndarray, shape (...)
            The function values.
        """
        arr = np.asarray(x, dtype=np.float64)
        if arr.shape[-1:] != (self.dims,):
            raise ValueError(f"{self.name}: expected points with {self.dims} coordinates")
        return np.asarray(self.function.kernel(arr), dtype=np.float64)

    def bounds(self) -> NDArray[np.float64]:
        """The limits as an array of shape ``(dims, 2)`` (low, high) in coordinate order."""
        return np.array([self.limits[k] for k in self.keys], dtype=np.float64)


def _box(dims: int, low: float, high: float) -> dict[str, tuple[float, float]]:
    return {k: (float(low), float(high)) for k in param_names(dims)}


def _point(keys: list[str] | tuple[str, ...], values: list[float]) -> dict[str, float]:
    return {k: float(v) for k, v in zip(keys, values, strict=True)}


def _make(
    name: str,
    kernel: Kernel,
    limits: dict[str, tuple[float, float]],
    minimum: float,
    minimizer_values: list[float] | None,
    noisy: bool = False,
    description: str = "",
) -> BenchmarkFunction:
    keys = list(limits)
    minimizer = None if minimizer_values is None else _point(keys, minimizer_values)
    return BenchmarkFunction(
        name, KeyedLoss(name, kernel, keys), limits, minimum, minimizer, noisy, description
    )


#: Names of the functions defined for any dimension (the paper's nine).
ND_FUNCTIONS = (
    "sphere",
    "rosenbrock",
    "step",
    "quartic",
    "rastrigin",
    "griewank",
    "schwefel",
    "bisphere",
    "birastrigin",
)

#: The paper's dimension and per-coordinate limits of each n-dimensional function.
PAPER_SETUP: dict[str, tuple[int, float, float]] = {
    "sphere": (2, -5.12, 5.12),
    "rosenbrock": (2, -2.048, 2.048),
    "step": (5, -5.12, 5.12),
    "quartic": (30, -1.28, 1.28),
    "rastrigin": (20, -5.12, 5.12),
    "griewank": (10, -600.0, 600.0),
    "schwefel": (10, -500.0, 500.0),
    "bisphere": (30, -5.12, 5.12),
    "birastrigin": (30, -5.12, 5.12),
}


def benchmark_nd(
    name: str,
    dims: int,
    *,
    bound: float | None = None,
    noise: bool = True,
    seed: int | None = None,
) -> BenchmarkFunction:
    """One of the paper's functions in ``dims`` dimensions.

    Parameters
    ----------
    name : str
        One of :data:`ND_FUNCTIONS`.
    dims : int
        Number of parameters (at least 1; at least 2 for rosenbrock, bisphere, birastrigin).
    bound : float, optional
        Symmetric per-coordinate limit ``(-bound, bound)``; default the paper's. It must contain
        the minimizer (checked).
    noise : bool
        quartic only: add the noise term (default, as in the paper).
    seed : int, optional
        quartic only: seed of the noise generator.

    Returns
    -------
    BenchmarkFunction
        The function, its limits and its known minimum.
    """
    if name not in PAPER_SETUP:
        raise ValueError(f"no n-dimensional function {name!r}; choose from {list(ND_FUNCTIONS)}")
    dims = int(dims)
    if dims < 1 or (name == "rosenbrock" and dims < 2):
        raise ValueError(f"{name}: invalid dimension {dims}")
    _, low, high = PAPER_SETUP[name]
    if bound is not None:
        low, high = -float(bound), float(bound)
    limits = _box(dims, low, high)
    kernel: Kernel
    minimum = 0.0
    coordinate = 0.0
    noisy = False
    if name == "sphere":
        kernel = kernels.sphere
    elif name == "rosenbrock":
        kernel, coordinate = kernels.rosenbrock, 1.0
    elif name == "step":
        # trunc is non-decreasing: the minimum is trunc(low) per coordinate, reached on the
        # plateau [low, trunc(low)] (for the paper's limits: [-5.12, -5], value -5).
        plateau = float(np.trunc(low))
        kernel, minimum, coordinate = kernels.step, plateau * dims, (low + plateau) / 2.0
    elif name == "quartic":
        kernel, noisy = kernels.Quartic(dims, noise, seed), noise
    elif name == "rastrigin":
        kernel = kernels.rastrigin
    elif name == "griewank":
        kernel = kernels.Griewank(dims)
    elif name == "schwefel":
        kernel, coordinate = kernels.schwefel, kernels.SCHWEFEL_XSTAR
    else:
        kernel = kernels.BiSphere(dims, rastrigin=name == "birastrigin")
        coordinate = kernels.LUNACEK_MU1
    if not low <= coordinate <= high:
        raise ValueError(f"{name}: limits ({low}, {high}) exclude the global minimizer")
    return _make(name, kernel, limits, minimum, [coordinate] * dims, noisy)


def sphere_nd(dims: int, bound: float = 5.12) -> BenchmarkFunction:
    """The ``dims``-dimensional sphere ``sum_i x_i^2`` on ``[-bound, bound]^dims``.

    Parameters
    ----------
    dims : int
        Number of parameters.
    bound : float
        Per-coordinate limit (the throughput benchmark uses 20 dimensions and 5.12).

    Returns
    -------
    BenchmarkFunction
        The sphere, with minimum 0 at the origin.
    """
    return benchmark_nd("sphere", dims, bound=bound)


def _registry() -> dict[str, BenchmarkFunction]:
    functions = {name: benchmark_nd(name, PAPER_SETUP[name][0]) for name in ND_FUNCTIONS}
    two = param_names(2)
    functions["bukin"] = _make(
        "bukin", kernels.bukin_n6, {two[0]: (-15.0, -5.0), two[1]: (-3.0, 3.0)}, 0.0, [-10.0, 1.0]
    )
    functions["eggcrate"] = _make(
        "eggcrate", kernels.egg_crate, _box(2, -5.0, 5.0), 0.0, [0.0, 0.0]
    )
    functions["himmelblau"] = _make(
        "himmelblau", kernels.himmelblau, _box(2, -6.0, 6.0), 0.0, [3.0, 2.0]
    )
    functions["keane"] = _make(
        "keane", kernels.keane, _box(2, 0.0, 10.0), -0.6736675211468546, [1.3932490753, 0.0]
    )
    functions["leon"] = _make("leon", kernels.leon, _box(2, 0.0, 10.0), 0.0, [1.0, 1.0])
    return functions


#: The fourteen functions of Propulate 1.2, by its names, in the paper's setup.
FUNCTIONS: dict[str, BenchmarkFunction] = _registry()

# Module-level losses under Propulate 1.2's function names (paper dimensions).
sphere = FUNCTIONS["sphere"].function
rosenbrock = FUNCTIONS["rosenbrock"].function
step = FUNCTIONS["step"].function
quartic = FUNCTIONS["quartic"].function
rastrigin = FUNCTIONS["rastrigin"].function
griewank = FUNCTIONS["griewank"].function
schwefel = FUNCTIONS["schwefel"].function
bisphere = FUNCTIONS["bisphere"].function
birastrigin = FUNCTIONS["birastrigin"].function
bukin_n6 = FUNCTIONS["bukin"].function
egg_crate = FUNCTIONS["eggcrate"].function
himmelblau = FUNCTIONS["himmelblau"].function
keane = FUNCTIONS["keane"].function
leon = FUNCTIONS["leon"].function


def get_benchmark(name: str) -> BenchmarkFunction:
    """Look a function up in :data:`FUNCTIONS`.

    Parameters
    ----------
    name : str
        One of the fourteen names.

    Returns
    -------
    BenchmarkFunction
        The function.

    Raises
    ------
    ValueError
        For an unknown name; the message lists the valid ones.
    """
    try:
        return FUNCTIONS[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown benchmark function {name!r}; valid names: {', '.join(FUNCTIONS)}"
        ) from None
