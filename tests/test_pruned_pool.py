"""The GA's breeding pool under a pruner (:class:`propulate.propagators.PrunedPool`): finished
evaluations first by loss, then pruned ones by the step they reached and their value there;
nothing changes without a pruner, and a pruned value never becomes a loss."""

from __future__ import annotations

import random
import statistics
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from propulate import Islands, get_default_propagator
from propulate.population import Individual, Population
from propulate.propagators import PrunedPool
from propulate.propagators.base import Conditional
from propulate.propagators.pruned_pool import pruned_rank
from propulate.propagators.registry import make_propagator
from propulate.runs.log import iter_records
from propulate.settings import EvolveSettings
from propulate.space import SearchSpace
from propulate.testing import check_propagator
from tests.pruning_utils import StopAtSecond, level_curve

LIMITS = {"a": (0.0, 1.0), "b": (0.0, 1.0)}


def evaluated(a: float, loss: float | None = None, curve: Any = None, uid: str = "") -> Individual:
    """An individual of island 0: finished with ``loss``, or pruned with ``curve``."""
    ind = Individual({"a": a, "b": 0.5})
    ind.island, ind.uid = 0, uid or f"u{a}:{loss}:{curve}"
    if loss is not None:
        ind.loss, ind.status = loss, "ok"
    else:
        ind.loss, ind.status, ind.curve = float("inf"), "pruned", curve
    return ind


def pool_of(pop_size: int) -> PrunedPool:
    return PrunedPool(pop_size, get_default_propagator(pop_size, LIMITS, rng=random.Random(0)))


def test_pruned_rank_prefers_the_later_step_then_the_lower_value() -> None:
    late_bad = evaluated(0.1, curve=[[0, 0.2], [3, 0.9]])
    late_good = evaluated(0.2, curve=[[0, 0.9], [3, 0.5]])
    early_best = evaluated(0.3, curve=[[0, 0.1], [1, 0.05]])
    ranked = sorted([early_best, late_bad, late_good], key=pruned_rank)  # type: ignore[arg-type]
    assert ranked == [late_good, late_bad, early_best]
    assert pruned_rank(evaluated(0.4, loss=0.1)) is None  # finished: ranked by loss instead
    failed = evaluated(0.5, curve=[[0, 0.1]])
    failed.status = "failed"
    assert pruned_rank(failed) is None
    assert pruned_rank(evaluated(0.6, curve=[])) is None  # nothing reported


def test_the_pool_is_finished_by_loss_then_the_best_pruned() -> None:
    prop = pool_of(4)
    pruned = [
        evaluated(0.1, curve=[[0, 0.3], [1, 0.8]]),
        evaluated(0.2, curve=[[0, 0.2]]),
        evaluated(0.3, curve=[[0, 0.1], [1, 0.7], [2, 0.9]]),
        evaluated(0.4, curve=[[0, 0.4], [1, 0.6]]),
        evaluated(0.5, curve=[[0, 0.5], [1, 0.6]]),  # ties with 0.4: the earlier one first
    ]
    population = Population()
    for ind in pruned:
        population.add(ind)
        prop.observe(ind)
    assert [e[2] for e in prop.pruned] == [pruned[2], pruned[3], pruned[4], pruned[0]]
    assert population.n_active(0) == 0 and population.best is None  # no loss, never a best
    finished = [evaluated(0.8, loss=0.9), evaluated(0.9, loss=0.2)]
    for ind in finished:
        population.add(ind)
        prop.observe(ind)
    view = population.active(0)
    assert list(prop.pool(view)) == [finished[1], finished[0], pruned[2], pruned[3]]
    assert prop.pool([]) == [pruned[2], pruned[3], pruned[4], pruned[0]]
    for ind in prop.pool(view):  # only breeding reads the order: statuses and losses stay
        assert ind.status == ("ok" if ind in finished else "pruned")
    assert population.best is finished[1]


def test_with_a_full_pool_the_chain_sees_exactly_the_islands_view() -> None:
    prop = pool_of(2)
    population = Population()
    for ind in [evaluated(0.1, curve=[[0, 0.1], [5, 0.01]]), evaluated(0.2, loss=0.5)]:
        population.add(ind)
        prop.observe(ind)
    assert len(prop.pool(population.active(0))) == 2  # one finished, one pruned
    population.add(evaluated(0.3, loss=0.7))
    view = population.active(0)
    assert prop.pool(view) is view


def test_the_pruned_pool_breeds_alike_twice_and_keeps_the_engine_contracts() -> None:
    check_propagator(pool_of(4))


def test_ga_is_wrapped_only_under_a_pruner_with_one_objective() -> None:
    space = SearchSpace.from_limits(LIMITS)
    plain = make_propagator("ga", space, EvolveSettings(pop_size=4), random.Random(0))
    assert isinstance(plain, Conditional)  # exactly get_default_propagator's chain
    pruned = replace(EvolveSettings(pop_size=4), pruner="asha:min_steps=1,eta=3")
    wrapped = make_propagator("ga", space, pruned, random.Random(0))
    assert isinstance(wrapped, PrunedPool) and wrapped.pop_size == 4
    assert isinstance(wrapped.inner, Conditional) and wrapped.space == space
    # a bred child is replaced by a random one with pruned_random_init_prob under a pruner
    assert plain.true_prop.propagators[-1].probability == 0.1  # type: ignore[attr-defined]
    assert wrapped.inner.true_prop.propagators[-1].probability == 0.3  # type: ignore[attr-defined]
    custom = replace(pruned, pruned_random_init_prob=0.5, random_init_prob=0.2)
    inner = make_propagator("ga", space, custom, random.Random(0)).inner  # type: ignore[attr-defined]
    assert inner.true_prop.propagators[-1].probability == 0.5
    unpruned = replace(custom, pruner=None)
    chain = make_propagator("ga", space, unpruned, random.Random(0))
    assert chain.true_prop.propagators[-1].probability == 0.2  # type: ignore[attr-defined]
    several = replace(pruned, objectives="loss,time")
    assert not isinstance(make_propagator("ga", space, several, random.Random(0)), PrunedPool)


def test_without_pruned_individuals_the_wrapper_breeds_as_the_chain() -> None:
    chain = get_default_propagator(3, LIMITS, rng=random.Random(7))
    wrapped = pool_of(3)
    wrapped.inner = get_default_propagator(3, LIMITS, rng=random.Random(7))
    population = Population()
    for i, a in enumerate([0.2, 0.6, 0.4, 0.9]):
        population.add(evaluated(a, loss=a, uid=f"f{i}"))
    for _ in range(20):
        view = population.active(0)
        assert dict(chain(view)) == dict(wrapped(view))  # type: ignore[arg-type]


#: Six decreasing values whose level is ``a + b``.
level_loss = level_curve(6, 1.0)


def run_levels(tmp: Path, propagator: Any) -> list[float]:
    """``a + b`` of the last 40 of 80 evaluations of a run where everything is pruned."""
    rng = random.Random(3)
    isl = Islands(
        level_loss,
        propagator,
        rng,
        checkpoint_path=tmp,
        space=LIMITS,
        progress_interval=1e6,
        max_evaluations=80,
        pruner=StopAtSecond(),
    )
    isl.propulate()
    records = list(iter_records(tmp))
    assert len(records) == 80 and all(r["status"] == "pruned" for r in records)
    assert all(r["loss"] is None for r in records)  # a pruned value is never a loss
    assert isl.result().best_loss is None
    return [r["params"]["a"] + r["params"]["b"] for r in records[40:]]


@pytest.mark.parametrize("wrapped", [True, False])
def test_the_island_model_breeds_from_pruned_runs_only_with_the_pool(
    tmp_path: Path, wrapped: bool
) -> None:
    chain = get_default_propagator(4, LIMITS, random_init_prob=0.0, rng=random.Random(3))
    levels = run_levels(tmp_path, PrunedPool(4, chain) if wrapped else chain)
    mean = statistics.mean(levels)
    if wrapped:  # bred from the pruned runs that got furthest lowest: low a + b
        assert mean < 0.5
    else:  # no finished run: every child is drawn at random (a + b about 1 on average)
        assert 0.8 < mean < 1.2


def test_the_benchmarks_epoch_budget_gives_the_same_figures_twice(tmp_path: Path) -> None:
    pytest.importorskip("sklearn")
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "pruning.py"
    spec = importlib.util.spec_from_file_location("pruning_benchmark", path)
    bench = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(bench)  # type: ignore[union-attr]
    from threadpoolctl import threadpool_limits  # a scikit-learn dependency

    with threadpool_limits(1):  # numpy is loaded already: the script's own limit comes late
        rows = [bench.one_run("asha", 5, 0.0, tmp_path, 4, epochs_budget=30) for _ in range(2)]
    for row in rows:  # CPU seconds are measured, not budgeted: they may differ
        row.pop("cpu"), row.pop("per_hour")
    assert rows[0] == rows[1]
    assert rows[0]["epochs_budget"] == 30 and rows[0]["budget"] is None
    # the run stops at the first evaluation that starts after 30 epochs (a full one: 27 more)
    assert 30 <= rows[0]["epochs"] < 30 + 27 and rows[0]["pruned"] >= 1
