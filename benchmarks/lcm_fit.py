"""Seconds to fit the LCM for 50 tasks x 20 samples, 2 parameters, one restart.

Compares our fit (numpy likelihood and gradient, L-BFGS-B until the relative change of the log
likelihood per iteration is below ``--tol``, default 1e-4) at Q = 5 and Q = 20
with plain GPy's optimizer at Q = 5 (``GPCoregionalizedRegression.optimize``, capped at
``--gpy-iters`` iterations because it costs about 0.3 s per iteration at this size), all from
the same starting point, and reports the held-out RMSE of each fitted model (20 fresh points
per task). BLAS runs on one thread and both wall-clock and process CPU seconds are printed:
on a shared machine the CPU seconds are what the fit costs on one otherwise idle core. The
tasks are a smooth correlated family over t in [0, 1]::

    f(t, x) = sin(5 x0 + 3 t) + (1 + t) cos(4 x1 - 2 t) + 0.5 t x0

    .venv/bin/python benchmarks/lcm_fit.py [--gpy-iters 100] [--skip-gpy]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from threadpoolctl import threadpool_limits

from propulate.models.lcm import LCM


def family(t: np.ndarray, X: np.ndarray) -> np.ndarray:
    """The synthetic multitask function (t and X broadcast row-wise)."""
    return np.sin(5 * X[:, 0] + 3 * t) + (1 + t) * np.cos(4 * X[:, 1] - 2 * t) + 0.5 * t * X[:, 0]


def make_data(n_tasks: int, n: int, seed: int) -> tuple[np.ndarray, ...]:
    """Training and held-out data: ``(X, task, y, Xh, taskh, yh)``."""
    rng = np.random.default_rng(seed)
    ts = rng.random(n_tasks)
    task = np.repeat(np.arange(n_tasks), n)
    X = rng.random((n_tasks * n, 2))
    Xh = rng.random((n_tasks * 20, 2))
    taskh = np.repeat(np.arange(n_tasks), 20)
    y = family(ts[task], X) + 0.01 * rng.standard_normal(len(X))
    return X, task, y, Xh, taskh, family(ts[taskh], Xh)


def rmse(model: LCM, Xh: np.ndarray, taskh: np.ndarray, yh: np.ndarray) -> float:
    """Root-mean-square error of the posterior mean on the held-out points."""
    err = [model.predict(Xh[taskh == i], i)[0] - yh[taskh == i] for i in range(model.n_tasks)]
    return float(np.sqrt(np.mean(np.concatenate(err) ** 2)))


def main() -> None:
    """Run the benchmark and print its table."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--tasks", type=int, default=50)
    ap.add_argument("--samples", type=int, default=20)
    ap.add_argument("--gpy-iters", type=int, default=100)
    ap.add_argument("--skip-gpy", action="store_true")
    ap.add_argument("--tol", type=float, default=1e-4,
                    help="our convergence test: relative log-likelihood change per iteration")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    X, task, y, Xh, taskh, yh = make_data(args.tasks, args.samples, args.seed)
    rows = []
    runs = [("ours (numpy grad)", 5, "numpy"), ("ours (numpy grad)", 20, "numpy")]
    if not args.skip_gpy:
        runs.append(("plain GPy", 5, "gpy"))
    for name, Q, engine in runs:
        model = LCM(X, task, y, args.tasks, latent=Q)
        model.randomize(np.random.default_rng(args.seed))
        t0, c0 = time.perf_counter(), time.process_time()
        with threadpool_limits(limits=1, user_api="blas"):
            model.fit(restarts=1, seed=args.seed, engine=engine, tol=args.tol,
                      max_iter=args.gpy_iters if engine == "gpy" else 1000)
        seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
        rows.append((name, Q, seconds, cpu, model.fit_info.get("evaluations", 0),
                     model.log_likelihood(), rmse(model, Xh, taskh, yh)))
        print(f"done {name} Q={Q}: {seconds:.1f} s wall, {cpu:.1f} s CPU", flush=True)
    print(f"\nLCM fit, {args.tasks} tasks x {args.samples} samples, 2 parameters, one restart "
          f"(N = {len(y)}); held-out RMSE over {len(yh)} points (output std {y.std():.3f})")
    print(f"{'fit':<20} {'Q':>3} {'wall s':>7} {'CPU s':>7} {'evals':>6} {'CPU s/eval':>10} "
          f"{'log lik':>10} {'RMSE':>7}")
    for name, Q, s, c, it, ll, e in rows:
        print(f"{name:<20} {Q:>3} {s:>7.1f} {c:>7.1f} {it:>6} {c / max(it, 1):>10.3f} {ll:>10.1f} "
              f"{e:>7.4f}")


if __name__ == "__main__":
    main()
