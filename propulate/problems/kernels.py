"""Array kernels of the benchmark functions: points of shape ``(..., d)`` to values ``(...)``.

Each kernel works on the last axis, so a whole batch of points is scored in one call; the named
losses of :mod:`propulate.problems.benchmark` gather one point's coordinates and call the same
kernel. Constants are those of the Propulate paper's table (Taubert et al., ISC 2023).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

#: 2 pi.
TWO_PI = 2.0 * np.pi
#: Schwefel's constant V (paper's table) and the coordinate of its global minimizer.
SCHWEFEL_V = 418.982887
SCHWEFEL_XSTAR = 420.968746
#: Centre of the optimal funnel of Lunacek's bi-sphere and bi-Rastrigin.
LUNACEK_MU1 = 2.5


def sphere(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """``sum_i x_i^2``."""
    return np.add.reduce(x * x, axis=-1)


def rosenbrock(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """Rosenbrock's valley ``sum_i 100 (x_i^2 - x_{i+1})^2 + (1 - x_i)^2``."""
    head, tail = x[..., :-1], x[..., 1:]
    return np.add.reduce(100.0 * (head * head - tail) ** 2 + (1.0 - head) ** 2, axis=-1)


def step(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """``sum_i trunc(x_i)`` (truncation towards zero)."""
    # int() truncates towards zero, as in the paper's table and Propulate 1.2.
    return np.add.reduce(np.trunc(x), axis=-1)


def rastrigin(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """Rastrigin's ``10 n + sum_i (x_i^2 - 10 cos(2 pi x_i))``."""
    return 10.0 * x.shape[-1] + np.add.reduce(x * x - 10.0 * np.cos(TWO_PI * x), axis=-1)


class Griewank:
    """Griewank's kernel with its ``1 / sqrt(i)`` weights precomputed for ``dims`` coordinates."""

    def __init__(self, dims: int) -> None:
        self.inv_sqrt_i = 1.0 / np.sqrt(np.arange(1, dims + 1, dtype=np.float64))

    def __call__(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        return (
            1.0
            + np.add.reduce(x * x, axis=-1) / 4000.0
            - np.multiply.reduce(np.cos(x * self.inv_sqrt_i), axis=-1)
        )


def schwefel(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """Schwefel's ``V n - sum_i x_i sin(sqrt(|x_i|))``."""
    return SCHWEFEL_V * x.shape[-1] - np.add.reduce(x * np.sin(np.sqrt(np.abs(x))), axis=-1)


class Quartic:
    """Quartic kernel ``sum_i (i x_i^4 + N_i(0, 1))``; the noise comes from its own generator.

    Parameters
    ----------
    dims : int
        Number of coordinates.
    noise : bool
        Whether to add the standard normal noise term.
    seed : int, optional
        Seed of the noise generator; ``None`` draws fresh entropy.
    """

    def __init__(self, dims: int, noise: bool = True, seed: int | None = None) -> None:
        self.weights = np.arange(1, dims + 1, dtype=np.float64)
        self.noise = noise
        self.rng = np.random.default_rng(seed)

    def __call__(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        x2 = x * x
        terms = self.weights * (x2 * x2)
        if self.noise:
            terms = terms + self.rng.standard_normal(x.shape)
        return np.add.reduce(terms, axis=-1)


class BiSphere:
    """Lunacek's double sphere (``rastrigin=False``) or double Rastrigin (``rastrigin=True``).

    ``min(sum (x - mu1)^2, d n + s sum (x - mu2)^2)`` with ``d = 1``,
    ``s = 1 - (2 sqrt(n + 20) - 8.2)^(-1/2)`` and ``mu2 = -sqrt((mu1^2 - d) / s)``; the Rastrigin
    variant adds ``10 sum (1 - cos(2 pi (x - mu1)))``.

    Parameters
    ----------
    dims : int
        Number of coordinates ``n`` (at least 2, else ``s <= 0``).
    rastrigin : bool
        Whether to add the Rastrigin modulation.
    """

    def __init__(self, dims: int, rastrigin: bool) -> None:
        if dims < 2:
            raise ValueError(f"Lunacek's functions need at least 2 dimensions, got {dims}")
        d = 1.0
        self.s = 1.0 - 1.0 / np.sqrt(2.0 * np.sqrt(dims + 20.0) - 8.2)
        self.mu2 = -np.sqrt((LUNACEK_MU1**2 - d) / self.s)
        self.offset = d * dims
        self.rastrigin = rastrigin

    def __call__(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        u = x - LUNACEK_MU1
        v = x - self.mu2
        value = np.minimum(
            np.add.reduce(u * u, axis=-1), self.offset + self.s * np.add.reduce(v * v, axis=-1)
        )
        if self.rastrigin:
            value = value + 10.0 * np.add.reduce(1.0 - np.cos(TWO_PI * u), axis=-1)
        return value


def bukin_n6(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """Bukin N.6 over ``(a, b)``."""
    a, b = x[..., 0], x[..., 1]
    return 100.0 * np.sqrt(np.abs(b - 0.01 * a * a)) + 0.01 * np.abs(a + 10.0)


def egg_crate(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """Egg crate ``a^2 + b^2 + 25 (sin^2 a + sin^2 b)``."""
    a, b = x[..., 0], x[..., 1]
    sa, sb = np.sin(a), np.sin(b)
    return a * a + b * b + 25.0 * (sa * sa + sb * sb)


def himmelblau(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """Himmelblau's ``(a^2 + b - 11)^2 + (a + b^2 - 7)^2``."""
    a, b = x[..., 0], x[..., 1]
    return (a * a + b - 11.0) ** 2 + (a + b * b - 7.0) ** 2


def keane(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """Keane's bump ``-sin^2(a - b) sin^2(a + b) / sqrt(a^2 + b^2)`` (0 at the origin)."""
    a, b = x[..., 0], x[..., 1]
    num = -(np.sin(a - b) ** 2) * np.sin(a + b) ** 2
    r = np.hypot(a, b)
    return np.divide(num, r, out=np.zeros(np.shape(r)), where=r > 0.0)


def leon(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """Leon's ``100 (b - a^3)^2 + (1 - a)^2``."""
    a, b = x[..., 0], x[..., 1]
    return 100.0 * (b - a**3) ** 2 + (1.0 - a) ** 2
