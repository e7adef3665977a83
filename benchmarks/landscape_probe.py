"""Two cheap probes of a landscape, tried offline on bbob and the paper's nine functions.

A question for ``auto`` (``docs/auto.md``): which functions need the GA and not CMA-ES, before the
run says so? The GA wins on functions that are separable *and* have many local minima
(Rastrigin, Schwefel), which a race over the first fifth of the budget does not reveal in 20 or
more dimensions. Two probes ask the function directly, from one random base point ``x`` in the
box:

``interaction``
    On ``--pairs`` random coordinate pairs ``(i, j)``, steps ``a``, ``b`` of a tenth of each range:
    ``|f(x + a e_i + b e_j) - f(x + a e_i) - f(x + b e_j) + f(x)|`` over the main effects
    ``|f(x + a e_i) - f(x)| + |f(x + b e_j) - f(x)|``; the median over the pairs. 0 for an
    additively separable function (3 evaluations per pair, plus ``f(x)``).
``minima``
    ``--line`` evenly spaced points across one coordinate's whole range, through ``x``: the number
    of interior local minima of those values, the most over ``--coords`` coordinates.

Each function is probed twice (two base points). Prints one row per function; evaluations per
probe: ``1 + 3 pairs + line x coords``. Nothing here runs the engine. Usage::

    python benchmarks/landscape_probe.py                      # paper functions, bbob 10-D and 20-D
    python benchmarks/landscape_probe.py --dims 10 --pairs 8 --line 41 --coords 2 --seed 0
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np

from propulate.problems.benchmark import FUNCTIONS, ND_FUNCTIONS

Objective = Callable[[np.ndarray], float]


def probe(
    f: Objective,
    low: np.ndarray,
    high: np.ndarray,
    rng: np.random.Generator,
    pairs: int = 8,
    line: int = 41,
    coords: int = 2,
) -> tuple[float, int]:
    """The interaction score and the most local minima along a coordinate (module docstring).

    Parameters
    ----------
    f : callable
        The function of a point.
    low, high : array
        The box.
    rng : numpy Generator
        Draws the base point, the pairs and the coordinates.
    pairs, line, coords : int
        Coordinate pairs of the interaction test; points per line; lines.

    Returns
    -------
    tuple of float and int
        ``(interaction, minima)``.
    """
    d = len(low)
    span = high - low
    x = low + rng.random(d) * span
    fx = f(x)

    def step(point: np.ndarray, i: int) -> np.ndarray:
        moved = point.copy()
        a = 0.1 * span[i]
        moved[i] += a if x[i] + a <= high[i] else -a
        return moved

    ratios = []
    for _ in range(pairs):
        i, j = rng.choice(d, 2, replace=False)
        xi, xj = step(x, i), step(x, j)
        fi, fj, fij = f(xi), f(xj), f(step(xi, j))
        main = abs(fi - fx) + abs(fj - fx)
        ratios.append(abs(fij - fi - fj + fx) / (main + 1e-300))
    minima = 0
    for i in rng.choice(d, min(coords, d), replace=False):
        values = []
        for v in np.linspace(low[i], high[i], line):
            y = x.copy()
            y[i] = v
            values.append(f(y))
        arr = np.array(values)
        inner = (arr[1:-1] < arr[:-2]) & (arr[1:-1] < arr[2:])
        minima = max(minima, int(inner.sum()))
    return float(np.median(ratios)), minima


def _row(name: str, results: list[tuple[float, int]]) -> str:
    return f"  {name:14s}" + "".join(f"  interaction {s:7.4f}  minima {m:3d}" for s, m in results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dims", type=int, nargs="+", default=[10, 20], help="bbob dimensions")
    parser.add_argument("--pairs", type=int, default=8)
    parser.add_argument("--line", type=int, default=41)
    parser.add_argument("--coords", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    options = {"pairs": args.pairs, "line": args.line, "coords": args.coords}

    print("the paper's functions (their dimension):")
    for name in ND_FUNCTIONS:
        bench = FUNCTIONS[name]
        keys = list(bench.limits)
        low = np.array([bench.limits[k][0] for k in keys], dtype=float)
        high = np.array([bench.limits[k][1] for k in keys], dtype=float)

        def paper(x: np.ndarray, fn=bench.function, keys=keys) -> float:
            return float(fn(dict(zip(keys, x, strict=True))))

        results = [probe(paper, low, high, rng, **options) for _ in range(2)]
        print(_row(f"{name} {len(keys)}-D", results))

    import cocoex  # a benchmark dependency (coco-experiment)

    for d in args.dims:
        print(f"bbob {d}-D, instance 1:")
        for problem in cocoex.Suite("bbob", "", f"dimensions:{d} instance_indices:1"):
            low, high = np.full(d, -5.0), np.full(d, 5.0)
            results = [probe(problem, low, high, rng, **options) for _ in range(2)]
            print(_row(f"f{problem.id_function}", results))


if __name__ == "__main__":
    main()
