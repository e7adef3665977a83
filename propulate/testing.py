"""Checks for code that plugs into propulate, like scikit-learn's ``check_estimator``.

:func:`check_propagator` drives a propagator the way the engine does (empty and growing
islands, evaluated, failed and pruned individuals from this rank and others, the outcome hook,
per-individual state on the wire, in the records and after a resume) and raises
``AssertionError`` naming the first contract it breaks. Every propagator the package ships
passes it; run it on your own in a test::

    from propulate.testing import check_propagator
    check_propagator(MyPropagator(space, rng=random.Random(0)))
"""

from __future__ import annotations

import copy
import json
import math
import random
import tempfile
from collections.abc import Sequence
from typing import Any

from propulate.engine.wire import from_record, from_wire, to_wire
from propulate.population import Individual, Population
from propulate.runs.log import EvaluationLog, iter_records
from propulate.runs.outcome import Outcome
from propulate.space import SearchSpace


def _loss(space: SearchSpace, params: dict[str, Any]) -> float:
    """A smooth test loss over the encoded space (minimum at its centre)."""
    return float(sum((u - 0.5) ** 2 for u in space.encode(params)))


def _offspring(out: Any) -> list[Individual]:
    children = out if isinstance(out, list) else [out]
    for child in children:
        assert isinstance(child, Individual), (
            f"a propagator must return Individual(s), got {type(child).__name__}"
        )
    return children


def _snapshot(inds: Sequence[Individual]) -> list[tuple[Any, ...]]:
    return [
        (dict(i), i.loss, i.status, i.uid, json.dumps(i.state, sort_keys=True), i.active)
        for i in inds
    ]


def _check_child(space: SearchSpace, child: Individual, parents: Sequence[Individual]) -> None:
    assert child.uid is None, (
        "offspring must be fresh individuals (uid None), not population members"
    )
    assert all(child is not p for p in parents), "offspring must not be one of the parents"
    if space.conditions:
        unknown = sorted(set(child) - set(space.names))
        assert not unknown, f"offspring sets parameters the space does not have: {unknown}"
    else:
        assert set(child) == set(space.names), (
            f"offspring must set exactly the space's parameters {sorted(space.names)}, "
            f"got {sorted(child)}"
        )
    for name, value in child.items():
        dim = space.dimensions[name]
        assert dim.contains(value), (
            f"offspring parameter {name}={value!r} is outside its dimension {dim!r}"
        )
    if space.conditions and not space.in_bounds(child):
        _inconsistent(space, child)
    if child.state is not None:
        assert isinstance(child.state, dict), "Individual.state must be a dict (or None)"
        try:
            text = json.dumps(child.state, allow_nan=False)
        except (TypeError, ValueError) as err:
            raise AssertionError(f"Individual.state must be JSON-ready: {err}") from None
        assert json.loads(text) == child.state, "Individual.state must survive a JSON round trip"


def _inconsistent(space: SearchSpace, child: Individual) -> None:
    """Fail naming what a child of a conditional space misses or holds against its conditions
    (the engine would complete it at random)."""
    # what the engine would make of it: the child completed with each dimension's low end
    whole = space.complete(child, lambda _, d: d.decode(0.0))
    missing, extra = sorted(set(whole) - set(child)), sorted(set(child) - set(whole))
    raise AssertionError(
        "offspring must be condition-consistent (every active parameter set, no inactive one): "
        f"missing {missing}, inactive {extra} (SearchSpace.complete repairs a child)"
    )


class _Island:
    """An island as the engine keeps it: a population, evaluated children, the hook."""

    def __init__(self, space: SearchSpace, propagator: Any, rng: random.Random) -> None:
        self.space, self.propagator, self.rng = space, propagator, rng
        self.population = Population(1)
        self.count = 0

    def evaluate(self, child: Individual, rank: int = 0, status: str = "ok") -> Individual:
        child.uid = f"check:{rank}:{self.count}"
        child.island, child.rank, child.generation = 0, rank, self.count
        self.count += 1
        if status == "ok":
            child.loss, child.status = _loss(self.space, child), "ok"
        else:
            child.loss, child.status, child.error = math.inf, status, f"evaluation {status}"
        if status == "pruned":
            child.curve = [[0, 1.0], [1, 0.9]]
        self.population.add(child)
        if getattr(self.propagator, "observes", False):
            self.propagator.observe(child)
        return child

    def breed(self, view: Sequence[Individual]) -> list[Individual]:
        before = _snapshot(view)
        children = _offspring(self.propagator(view))
        assert _snapshot(view) == before, "a propagator must not modify its inputs"
        for child in children:
            _check_child(self.space, child, view)
        return children


def _run(island: _Island, steps: int) -> list[Individual]:
    """Breed and evaluate ``steps`` children, some failed or pruned, some from another rank."""
    bred = []
    for step in range(steps):
        view = island.population.active(0)
        child = island.breed(view)[0]
        status = "failed" if step % 7 == 3 else ("pruned" if step % 11 == 5 else "ok")
        bred.append(island.evaluate(child, rank=step % 2, status=status))
    return bred


def check_propagator(
    propagator: Any, space: SearchSpace | None = None, *, steps: int = 60, seed: int = 0
) -> None:
    """Check that ``propagator`` keeps the engine's contracts; ``AssertionError`` if not.

    Checked: it declares (or is given) a search space; called with an empty island, a
    growing one (an ordered view, as the engine passes) and a plain unordered list, it returns
    fresh :class:`~propulate.population.Individual` s inside the space without modifying its
    inputs; :meth:`~propulate.propagators.base.Propagator.observe` accepts evaluated, failed
    and pruned individuals from any rank; ``Individual.state`` is JSON-ready and survives the
    wire, the records and a resume; two copies driven alike breed alike (no hidden global
    randomness); a copy that is given the records of a run (a resume) breeds valid children.
    In a conditional space a child must be condition-consistent: every active parameter set
    and no inactive one.

    Parameters
    ----------
    propagator : Propagator
        The propagator, freshly built (it is copied; the original is not used).
    space : SearchSpace, optional
        Its search space, when it does not declare one (:attr:`Propagator.space`).
    steps : int
        Children bred per phase.
    seed : int
        Seed of the check's own draws.
    """
    declared = getattr(propagator, "space", None)
    space = space if space is not None else declared
    assert isinstance(space, SearchSpace), (
        "the propagator must declare its search space (attribute .space), or pass space="
    )
    original = copy.deepcopy(propagator)
    twin = copy.deepcopy(propagator)
    rng = random.Random(seed)
    island = _Island(space, copy.deepcopy(original), rng)
    bred = _run(island, steps)
    # a plain list in random order (a third-party caller), and an empty pool
    shuffled = list(island.population.active(0))
    rng.shuffle(shuffled)
    island.breed(shuffled)
    island.breed([])
    # determinism: the same inputs give the same children
    other = _Island(space, twin, random.Random(seed))
    again = _run(other, steps)
    assert [dict(c) for c in again] == [dict(c) for c in bred], (
        "two copies of the propagator fed the same individuals bred different children: "
        "use only the rng given at construction"
    )
    # the wire and the records keep state and curves
    with tempfile.TemporaryDirectory() as folder:
        with EvaluationLog(folder, 0, session="check") as log:
            for ind in bred:
                wired = from_wire(to_wire(ind))
                assert wired.state == ind.state and dict(wired) == dict(ind), (
                    "an individual must cross the wire unchanged (state included)"
                )
                out = Outcome(ind.loss if ind.status == "ok" else None, ind.status)
                out.curve = ind.curve or []
                log.record(ind, out, generation=ind.generation, state=ind.state)
        restored = [from_record(rec, 1) for rec in iter_records(folder)]
    assert [r.state for r in restored] == [json.loads(json.dumps(b.state)) for b in bred], (
        "Individual.state must be restored from the records"
    )
    # a resume: a fresh copy that learns the run from its records, then breeds
    resumed = _Island(space, copy.deepcopy(original), random.Random(seed + 1))
    for ind in restored:
        resumed.population.add(ind)
        if getattr(resumed.propagator, "observes", False):
            resumed.propagator.observe(ind)
    _run(resumed, max(steps // 4, 5))


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
    breeds (:class:`~propulate.engine.seen.Breeder`: constraints, forbidden clauses and the
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
    from propulate.engine.seen import Breeder
    from propulate.propagators.branches import DEPTH
    from propulate.propagators.registry import make_propagator
    from propulate.settings import EvolveSettings

    prop = make_propagator(method, space, EvolveSettings(pop_size=pop_size), random.Random(seed))
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
