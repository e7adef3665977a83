"""Our pruners against Optuna's on the same learning curves: the same rungs give the same
promotion decisions, trial by trial."""

from __future__ import annotations

import random

import pytest

from propulate.population import Individual
from propulate.pruners import ASHAPruner, MedianPruner

optuna = pytest.importorskip("optuna")


def curves(seed: int, n: int = 60, steps: int = 28) -> list[list[float]]:
    """Noisy decreasing learning curves of different speed and level; some end early."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        level, speed = rng.uniform(0.05, 2.0), rng.uniform(0.05, 1.0)
        length = steps if rng.random() < 0.8 else rng.randint(1, steps)
        out.append(
            [
                level * (1 + 3 * 2.718 ** (-speed * s)) * rng.uniform(0.97, 1.03)
                for s in range(length)
            ]
        )
    return out


def optuna_decisions(values: list[list[float]], pruner: object) -> list[int | None]:
    """The step at which Optuna's pruner stops each curve (None: it runs to its end)."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="minimize", pruner=pruner)
    stops: list[int | None] = []
    for curve in values:
        trial = study.ask()
        stop = None
        for step, value in enumerate(curve):
            trial.report(value, step)
            if trial.should_prune():
                stop = step
                break
        if stop is None:
            study.tell(trial, curve[-1])
        else:
            study.tell(trial, state=optuna.trial.TrialState.PRUNED)
        stops.append(stop)
    return stops


def our_decisions(values: list[list[float]], pruner: object) -> list[int | None]:
    """The same replay through one of our pruners (the engine's calls: start, should_stop
    after each value, observe the finished evaluation)."""
    stops: list[int | None] = []
    for curve in values:
        pruner.start({})
        seen: list[list[float]] = []
        stop = None
        for step, value in enumerate(curve):
            seen.append([step, value])
            if pruner.should_stop(seen):
                stop = step
                break
        ind = Individual({})
        ind.curve = seen
        ind.status = "ok" if stop is None else "pruned"
        ind.loss = seen[-1][1] if stop is None else float("inf")
        pruner.observe(ind)
        stops.append(stop)
    return stops


@pytest.mark.parametrize(
    ("min_steps", "eta", "bootstrap", "seed"),
    [(1, 3, 0, 0), (1, 3, 0, 1), (2, 2, 0, 2), (1, 4, 2, 3), (3, 3, 1, 4)],
)
def test_asha_takes_optuna_successive_halving_decisions(
    min_steps: int, eta: int, bootstrap: int, seed: int
) -> None:
    values = curves(seed)
    theirs = optuna_decisions(
        values,
        optuna.pruners.SuccessiveHalvingPruner(
            min_resource=min_steps, reduction_factor=eta, bootstrap_count=bootstrap
        ),
    )
    ours = our_decisions(values, ASHAPruner(min_steps=min_steps, eta=eta, bootstrap=bootstrap))
    assert ours == theirs
    # a real test: both prune a good share and let some runs finish
    assert 0.3 * len(values) < sum(s is not None for s in ours) < len(values) - 2


def test_median_takes_optuna_median_decisions() -> None:
    values = curves(7)
    theirs = optuna_decisions(
        values, optuna.pruners.MedianPruner(n_startup_trials=5, n_warmup_steps=2)
    )
    ours = our_decisions(values, MedianPruner(startup=5, warmup=2))
    assert ours == theirs
    assert sum(s is not None for s in ours) > 10
