"""Composition in :mod:`propulate.propagators`: ``Conditional``, ``Compose`` (order, real
operators, incompatible stages) and the default propagator (random while filling, then bred
from the best, mutated, in bounds).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

from propulate.population import Population
from propulate.propagators import (
    Compose,
    Conditional,
    CrossoverMultiple,
    CrossoverSigmoid,
    CrossoverUniform,
    FunctionPropagator,
    InitUniform,
    IntervalMutationNormal,
    PointMutation,
    Propagator,
    SelectMin,
    SelectUniform,
    get_default_propagator,
)
from propulate.space import Categorical, Integer, SearchSpace
from tests.propagator_utils import SPACE, _assert_valid, _ind, _population, _random_ind


# --------------------------------------------------------------------------- composition
def _tag(label: str, log: list[str], parents: int = -1, offspring: int = 1) -> FunctionPropagator:
    def fn(inds: Any) -> Any:
        log.append(label)
        return inds

    return FunctionPropagator(fn, parents=parents, offspring=offspring)


def test_conditional_branches_on_pool_size() -> None:
    log: list[str] = []
    prop = Conditional(3, _tag("full", log), _tag("filling", log))
    for n in range(6):
        prop([_ind({"x": 0.0}) for _ in range(n)])
    assert log == ["filling"] * 3 + ["full"] * 3
    pop, _ = _population([1.0, 2.0])
    prop(pop.active(0))
    assert log[-1] == "filling"
    pop.add(_ind({"x": 0.0}, 0.5, uid="third"))
    prop(pop.active(0))
    assert log[-1] == "full"


def test_compose_applies_stages_in_order() -> None:
    log: list[str] = []
    prop = Compose([_tag("a", log, 2, 2), _tag("b", log, 2, 1), _tag("c", log, 1, 1)])
    assert (prop.parents, prop.offspring) == (2, 1)
    assert prop([1, 2]) == [1, 2]  # type: ignore[list-item]
    assert log == ["a", "b", "c"]
    # the stages can be changed between calls (Propulate 1.2's list attribute)
    prop.propagators[1] = _tag("B", log, 2, 1)
    prop.propagators.append(_tag("d", log, 1, 1))
    prop([1, 2])  # type: ignore[list-item]
    assert log[3:] == ["a", "B", "c", "d"]


def test_compose_chains_real_operators() -> None:
    prop = Compose(
        [
            SelectMin(4),
            SelectUniform(2, rng=random.Random(0)),
            CrossoverUniform(rng=random.Random(0)),
            PointMutation(SPACE, rng=random.Random(0)),
        ]
    )
    assert (prop.parents, prop.offspring) == (-1, 1)
    parents = [_random_ind(random.Random(s), loss=float(s)) for s in range(8)]
    child = prop(parents)
    _assert_valid(child)


@pytest.mark.parametrize(
    "stages",
    [
        lambda: [CrossoverUniform(), CrossoverUniform()],  # 1 offspring into 2 parents
        lambda: [SelectMin(3), CrossoverUniform()],  # 3 into 2
        lambda: [SelectUniform(2), PointMutation(SPACE)],  # 2 into 1
        lambda: [PointMutation(SPACE), SelectMin(1), CrossoverSigmoid()],  # 1 into 2 at the end
    ],
)
def test_compose_rejects_incompatible_stages(stages: Callable[[], list[Propagator]]) -> None:
    with pytest.raises(ValueError, match="offspring"):
        Compose(stages())


def test_compose_accepts_any_count_and_rejects_empty() -> None:
    Compose([SelectMin(5), CrossoverMultiple()])  # parents=-1 matches anything
    Compose([FunctionPropagator(lambda i: i, offspring=-1), CrossoverUniform()])
    with pytest.raises(ValueError):
        Compose([])


# --------------------------------------------------------------------------- default propagator
def test_default_propagator_random_while_filling_then_bred() -> None:
    space = SearchSpace(
        {
            "a": Integer(0, 10_000),
            "b": Integer(0, 10_000),
            "c": Categorical(tuple(f"c{i}" for i in range(50))),
        }
    )
    pop_size = 4
    prop = get_default_propagator(
        pop_size,
        space,
        crossover_prob=1.0,
        mutation_prob=0.0,
        random_init_prob=0.0,
        rng=random.Random(0),
    )
    pop = Population()
    good = [(5 * i, 5 * i + 1, f"c{i}") for i in range(pop_size)]
    for i, (a, b, c) in enumerate(good[:-1]):
        pop.add(_ind({"a": a, "b": b, "c": c}, loss=float(i), uid=f"g{i}"))
    # Fewer than pop_size active: fresh random individuals.
    children = [prop(pop.active(0)) for _ in range(30)]
    for child in children:
        _assert_valid(child, space)
    assert sum(child["a"] > 100 for child in children) > 20
    # A deactivated individual does not count towards the pool.
    pop.add(_ind({"a": good[-1][0], "b": good[-1][1], "c": good[-1][2]}, loss=3.0, uid="last"))
    pop.add(_ind({"a": 9999, "b": 9999, "c": "c49"}, loss=100.0, uid="worst"))
    pop.deactivate("last")
    assert pop.n_active(0) == pop_size
    # Once the pool is full: children bred from the pop_size best only.
    pop.add(_ind({"a": good[-1][0], "b": good[-1][1], "c": good[-1][2]}, loss=3.0, uid="last2"))
    genes = {k: {g[j] for g in good} for j, k in enumerate("abc")}
    bred = [prop(pop.active(0)) for _ in range(200)]
    for child in bred:
        _assert_valid(child, space)
        assert all(child[k] in genes[k] for k in "abc"), child  # never from "worst"
    assert {child["a"] for child in bred} == genes["a"]
    mixed = sum(
        len(
            {good.index(g) for g in good if g[0] == child["a"]}
            | {good.index(g) for g in good if g[1] == child["b"]}
        )
        > 1
        for child in bred
    )
    assert mixed > 50  # crossover combined genes of two parents


def test_default_propagator_mutates_and_stays_in_bounds() -> None:
    prop = get_default_propagator(3, SPACE, rng=random.Random(1))
    pop = Population()
    rng = random.Random(0)
    for i in range(6):
        pop.add(_ind(dict(_random_ind(rng)), loss=float(i), uid=str(i)))
    parents = {tuple(p.values()) for p in pop}
    children = [prop(pop.active(0)) for _ in range(100)]
    for child in children:
        _assert_valid(child)
    assert sum(tuple(c.values()) not in parents for c in children) > 50


def test_default_propagator_needs_two_parents() -> None:
    with pytest.raises(ValueError, match="pop_size"):
        get_default_propagator(1, SPACE)


# --------------------------------------------------------------------------- in place
def _pool(space: SearchSpace, rng: random.Random, n: int) -> Population:
    """A population of ``n`` random individuals of ``space`` with random losses."""
    pop = Population()
    for i in range(n):
        ind = InitUniform(space, rng=rng)()
        ind.loss, ind.uid, ind.island = rng.random(), str(i), 0
        pop.add(ind)
    return pop


def test_the_default_chain_never_changes_the_individuals_it_breeds_from() -> None:
    """Compose hands a stage the child the previous stage made, to change in place: the pool
    the chain selects from (population members) stays as it was."""
    space = SearchSpace({"x": (-5.0, 5.0), "y": (-5.0, 5.0), "n": (1, 9), "c": ("a", "b", "c")})
    rng = random.Random(3)
    prop = get_default_propagator(4, space, crossover_prob=1.0, mutation_prob=1.0, rng=rng)
    pop = _pool(space, rng, 12)
    before = [(id(ind), dict(ind)) for ind in pop.active(0)]
    children = [prop(pop.active(0)) for _ in range(300)]
    assert [(id(ind), dict(ind)) for ind in pop.active(0)] == before
    members = {id(ind) for ind in pop.active(0)}
    assert not any(id(child) in members for child in children)
    assert len({id(child) for child in children}) == len(children)


def test_in_place_makes_the_child_a_call_makes_from_a_copy() -> None:
    space = SearchSpace(
        {"x": (-5.0, 5.0), "y": {"low": 0.1, "high": 10.0, "log": True}, "n": (1, 9)}
    )
    parent = _ind({"x": 1.0, "y": 2.0, "n": 3})
    for make in (
        lambda r: PointMutation(space, points=2, probability=0.5, rng=r),
        lambda r: IntervalMutationNormal(space, 0.3, points=2, rng=r),
        lambda r: InitUniform(space, parents=1, probability=0.5, rng=r),
    ):
        by_call, by_place = make(random.Random(5)), make(random.Random(5))
        for _ in range(50):
            child = parent.copy()
            assert dict(by_call(parent)) == dict(by_place.in_place(child))
        assert dict(parent) == {"x": 1.0, "y": 2.0, "n": 3}


def test_a_subclass_that_overrides_call_alone_is_called_and_copies() -> None:
    """A user's operator derived from one that works in place, overriding ``__call__`` only,
    runs its own ``__call__`` inside Compose, and its output counts as not fresh."""
    space = SearchSpace({"x": (-5.0, 5.0), "y": (-5.0, 5.0)})
    calls: list[int] = []

    class Logged(PointMutation):
        def __call__(self, inds: Any) -> Any:
            calls.append(1)
            return inds if not isinstance(inds, list) else inds[0]  # passes its input on

    rng = random.Random(0)
    pool = _pool(space, rng, 4)
    first = pool.active(0)[0]
    kept = dict(first)
    chain = Compose(
        [SelectMin(1), Logged(space, rng=rng), IntervalMutationNormal(space, 0.5, rng=rng)]
    )
    child = chain(pool.active(0))
    assert calls == [1]
    assert child is not first and dict(first) == kept  # the member was copied, not changed
