"""Checks for code that plugs into propulate, like scikit-learn's ``check_estimator``, and
the proposals of a method as the engine breeds them.

:func:`check_propagator` and :func:`check_pruner` (from :mod:`propulate.contracts`) run one
named check per contract and raise ``AssertionError`` whose message starts with the name of
the first broken one. Every propagator and pruner the package ships passes them; run them on
your own in a test::

    from propulate.testing import check_propagator
    check_propagator(MyPropagator(space, rng=random.Random(0)))

:func:`propagator_checks` and :func:`pruner_checks` yield the checks one by one, to
parametrize a test per check. :func:`proposals` lists the configurations a method proposes.
"""

from __future__ import annotations

import random
from typing import Any

from propulate.contracts import check_propagator, check_pruner, propagator_checks, pruner_checks
from propulate.contracts.island import loss_of
from propulate.population import Individual
from propulate.space import SearchSpace

__all__ = ["check_propagator", "check_pruner", "propagator_checks", "proposals", "pruner_checks"]


def _loss(space: SearchSpace, params: dict[str, Any]) -> float:
    """A smooth test loss over the encoded space (minimum at its centre)."""
    return loss_of(space, params)


def proposals(
    space: SearchSpace,
    method: str,
    n: int,
    seed: int = 0,
    loss: Any = None,
    pop_size: int = 8,
    until: float | None = None,
) -> tuple[list[dict[str, Any]], list[float], int]:
    """The first ``n`` configurations a method hands to the objective on one worker.

    ``method`` is a registered propagator (``ga``, ``random``, ...), bred the way the engine
    breeds (:class:`~propulate.engine.breeder.Breeder`: constraints, forbidden clauses and the
    no-repeat rule), or ``optuna`` (TPE, asked as the baseline worker asks; a proposal the
    space rejects is not evaluated and is told as the worst loss so far). ``loss(params)``
    defaults to a smooth loss over the encoded space; with ``until``, the proposals stop after
    the first loss <= ``until``.

    Returns
    -------
    tuple
        The configurations, their losses, and how many proposals the space rejected before
        evaluation (Optuna only; the breeder redraws internally).
    """
    import bisect

    import numpy as np

    fn = loss if loss is not None else (lambda p: _loss(space, p))
    configs: list[dict[str, Any]] = []
    losses: list[float] = []
    rejected = 0
    if method == "optuna":
        import optuna

        from propulate.baselines.optuna_study import ask, distributions, tpe_sampler

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        study = optuna.create_study(sampler=tpe_sampler(seed, bool(space.conditions)))
        dists = distributions(space)
        while len(configs) < n:
            trial, params = ask(study, space, dists)
            if not space.satisfies(params):  # not evaluated; told as the worst loss so far,
                rejected += 1  # or TPE, which ignores failed trials, proposes it again
                study.tell(trial, max(losses, default=1.0))
                continue
            value = float(fn(params))
            study.tell(trial, value)
            configs.append(params)
            losses.append(value)
            if until is not None and value <= until:
                break
        return configs, losses, rejected
    from propulate.engine.breeder import Breeder
    from propulate.propagators.branches import DEPTH
    from propulate.propagators.registry import make_propagator
    from propulate.settings import EvolveSettings

    settings = EvolveSettings(pop_size=pop_size, max_evaluations=n)  # auto reads the budget
    prop = make_propagator(method, space, settings, random.Random(seed))
    breeder = Breeder(prop, space, None, np.random.default_rng(seed))
    # the best individuals, ascending: what SelectMin reads, and in a conditional space as
    # deep as BranchPool looks for the best of each branch
    pool: list[Individual] = []
    keep = DEPTH * pop_size if space.conditions else max(4 * pop_size, 64)
    for _ in range(n):
        ind = breeder(pool)
        if ind is None:  # a finite space is exhausted
            break
        ind.loss = float(fn(ind))
        ind.active = True
        breeder.seen.add(ind)
        if prop.observes:  # as the engine tells it of every evaluated individual
            prop.observe(ind)
        bisect.insort(pool, ind, key=lambda i: i.loss)
        del pool[keep:]
        configs.append(dict(ind))
        losses.append(ind.loss)
        if until is not None and ind.loss <= until:
            break
    return configs, losses, rejected
