"""Tests of :mod:`propulate.propagators`: selection, genetic operators and composition."""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from propulate.population import Individual, Population
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
    RandomPointMutation,
    SelectMax,
    SelectMin,
    SelectUniform,
    Stochastic,
    get_default_propagator,
)
from propulate.space import Categorical, Float, Integer, SearchSpace

SETTINGS = settings(max_examples=100, deadline=None)

SPACE = SearchSpace(
    {
        "x": Float(-5.0, 5.0),
        "lr": Float(1e-5, 1e-1, log=True),
        "n": Integer(1, 64),
        "k": Integer(1, 1024, log=True),
        "act": Categorical(("relu", "tanh", "gelu", "silu")),
    }
)
CHOICES = SPACE["act"].choices  # type: ignore[union-attr]


def _ind(params: dict[str, Any], loss: float | None = None, uid: str | None = None) -> Individual:
    ind = Individual(params, generation=3, rank=1)
    ind.loss = loss
    ind.uid = uid
    ind.island = 0
    return ind


def _random_ind(rng: random.Random, loss: float | None = None) -> Individual:
    return _ind(InitUniform(SPACE, rng=rng)(), loss)


def _snapshot(ind: Individual) -> tuple[Any, ...]:
    return (dict(ind), ind.loss, ind.uid, ind.active, ind.island, ind.generation, ind.status)


def _assert_valid(ind: Individual, space: SearchSpace = SPACE) -> None:
    assert isinstance(ind, Individual)
    assert list(ind) == list(space.names)
    assert space.in_bounds(ind), ind
    for name, dim in space.dimensions.items():
        v = ind[name]
        if isinstance(dim, Integer):
            assert type(v) is int, (name, v)
        elif isinstance(dim, Categorical):
            assert type(v) is str and v in dim.choices
        else:
            assert isinstance(v, float) and math.isfinite(v)


def _parents(seed: int, k: int = 2) -> list[Individual]:
    rng = random.Random(seed)
    return [_random_ind(rng, loss=float(i)) for i in range(k)]


# --------------------------------------------------------------------------- every operator
OPERATORS: dict[str, tuple[Callable[[random.Random], Propagator], int]] = {
    "point": (lambda r: PointMutation(SPACE, points=2, rng=r), 1),
    "random_point": (lambda r: RandomPointMutation(SPACE, 1, 5, rng=r), 1),
    "interval": (lambda r: IntervalMutationNormal(SPACE, sigma_factor=0.3, points=2, rng=r), 1),
    "crossover_uniform": (lambda r: CrossoverUniform(0.5, rng=r), 2),
    "crossover_multiple": (lambda r: CrossoverMultiple(rng=r), 4),
    "crossover_sigmoid": (lambda r: CrossoverSigmoid(2.0, rng=r), 2),
    "init_replace": (lambda r: InitUniform(SPACE, parents=1, probability=0.5, rng=r), 1),
    "init": (lambda r: InitUniform(SPACE, rng=r), 0),
    "default_chain": (
        lambda r: get_default_propagator(3, SPACE, 0.7, 0.4, 0.1, 0.2, rng=r),
        5,
    ),
}


@pytest.mark.parametrize("name", list(OPERATORS))
def test_operator_outputs_valid_new_individual_and_leaves_inputs_alone(name: str) -> None:
    make, n_parents = OPERATORS[name]
    prop = make(random.Random(1))
    assert prop.offspring == 1 or isinstance(prop, Conditional)
    for seed in range(60):
        parents = _parents(seed, n_parents)
        before = [_snapshot(p) for p in parents]
        child = prop(parents)
        _assert_valid(child)
        assert all(child is not p for p in parents)
        assert child.loss is None and child.uid is None
        assert [_snapshot(p) for p in parents] == before


@pytest.mark.parametrize("name", ["point", "random_point", "interval", "init_replace"])
def test_single_parent_operators_accept_an_individual(name: str) -> None:
    prop = OPERATORS[name][0](random.Random(0))
    parent = _parents(0, 1)[0]
    child = prop(parent)
    _assert_valid(child)
    assert child is not parent


def test_operators_accept_propulate_limits() -> None:
    limits = {"x": (-1.0, 1.0), "n": (0, 3), "c": ("a", "b", "c")}
    space = SearchSpace.from_limits(limits)
    rng = random.Random(0)
    ind = InitUniform(limits, rng=rng)()
    _assert_valid(ind, space)
    for prop in (PointMutation(limits, 3, rng=rng), IntervalMutationNormal(limits, rng=rng)):
        _assert_valid(prop([ind]), space)


# --------------------------------------------------------------------------- Stochastic
@pytest.mark.parametrize(
    "make",
    [
        lambda p, r: PointMutation(SPACE, points=5, probability=p, rng=r),
        lambda p, r: RandomPointMutation(SPACE, 5, 5, probability=p, rng=r),
        lambda p, r: IntervalMutationNormal(SPACE, points=2, probability=p, rng=r),
        lambda p, r: CrossoverUniform(0.0, probability=p, rng=r),
        lambda p, r: CrossoverMultiple(probability=p, rng=r),
        lambda p, r: CrossoverSigmoid(probability=p, rng=r),
        lambda p, r: InitUniform(SPACE, parents=1, probability=p, rng=r),
    ],
)
def test_probability_zero_copies_and_one_always_applies(make: Callable[..., Propagator]) -> None:
    never, always = make(0.0, random.Random(0)), make(1.0, random.Random(0))
    for seed in range(50):
        a, b = _parents(seed, 2)
        # b differs in every gene and is much better; many copies of it make CrossoverMultiple
        # take at least one gene from b with near certainty.
        b = _ind({**b, "act": "gelu" if a["act"] != "gelu" else "relu"}, loss=-100.0)
        copy = never([a] + [b] * 9)
        assert dict(copy) == dict(a) and copy is not a and copy.loss is None
        changed = always([a] + [b] * 9)
        assert dict(changed) != dict(a)


@pytest.mark.parametrize("probability", [-0.1, 1.1])
def test_stochastic_rejects_bad_probability(probability: float) -> None:
    with pytest.raises(ValueError, match="probability"):
        Stochastic(1, 1, probability)
    with pytest.raises(ValueError, match="probability"):
        PointMutation(SPACE, probability=probability)


def test_intermediate_probability_is_respected() -> None:
    prop = PointMutation(SPACE, probability=0.3, rng=random.Random(5))
    parent = _parents(0, 1)[0]
    applied = sum(dict(prop(parent)) != dict(parent) for _ in range(2000))
    assert 0.25 < applied / 2000 < 0.35


def test_propagator_needs_offspring() -> None:
    with pytest.raises(ValueError):
        Propagator(1, 0)
    with pytest.raises(NotImplementedError):
        Propagator(1, 1)([])


# --------------------------------------------------------------------------- point mutation
def _changed(a: dict[str, Any], b: dict[str, Any]) -> set[str]:
    return {k for k in a if a[k] != b[k]}


@pytest.mark.parametrize("points", [1, 2, 3, 5])
def test_point_mutation_changes_exactly_points_genes(points: int) -> None:
    prop = PointMutation(SPACE, points=points, rng=random.Random(points))
    seen: Counter[str] = Counter()
    for seed in range(200):
        parent = _parents(seed, 1)[0]
        child = prop(parent)
        diff = _changed(parent, child)
        assert len(diff) == points
        seen.update(diff)
    assert set(seen) == set(SPACE.names)  # every gene gets picked


def test_point_mutation_of_categorical_always_changes_and_reaches_every_choice() -> None:
    space = SearchSpace({"act": Categorical(CHOICES)})
    prop = PointMutation(space, rng=random.Random(0))
    for old in CHOICES:
        parent = _ind({"act": old})
        new = Counter(prop(parent)["act"] for _ in range(600))
        assert old not in new
        assert set(new) == set(CHOICES) - {old}
        assert min(new.values()) > 150  # roughly uniform over the other three


def test_point_mutation_of_integer_changes_and_stays_int() -> None:
    space = SearchSpace({"n": Integer(0, 2), "k": Integer(1, 1000, log=True)})
    prop = PointMutation(space, points=2, rng=random.Random(0))
    values: Counter[int] = Counter()
    for _ in range(300):
        child = prop(_ind({"n": 1, "k": 10}))
        assert child["n"] in (0, 2) and child["k"] != 10
        assert type(child["n"]) is int and type(child["k"]) is int
        values[child["n"]] += 1
    assert set(values) == {0, 2}


def test_point_mutation_of_singleton_dimensions_keeps_the_value() -> None:
    space = SearchSpace({"c": Categorical(("only",)), "n": Integer(7, 7)})
    prop = PointMutation(space, points=2, rng=random.Random(0))
    for _ in range(20):
        assert dict(prop(_ind({"c": "only", "n": 7}))) == {"c": "only", "n": 7}


def test_random_point_mutation_changes_between_min_and_max_genes() -> None:
    prop = RandomPointMutation(SPACE, min_points=2, max_points=4, rng=random.Random(3))
    counts: Counter[int] = Counter()
    for seed in range(300):
        parent = _parents(seed, 1)[0]
        counts[len(_changed(parent, prop(parent)))] += 1
    assert set(counts) == {2, 3, 4}
    assert min(counts.values()) > 60


@pytest.mark.parametrize(
    "make",
    [
        lambda: PointMutation(SPACE, points=0),
        lambda: PointMutation(SPACE, points=6),
        lambda: RandomPointMutation(SPACE, 3, 2),
        lambda: RandomPointMutation(SPACE, 1, 6),
        lambda: RandomPointMutation(SPACE, 0, 2),
        lambda: IntervalMutationNormal(SPACE, sigma_factor=0.0),
        lambda: CrossoverUniform(1.5),
        lambda: CrossoverSigmoid(temperature=0.0),
    ],
)
def test_invalid_operator_arguments(make: Callable[[], Propagator]) -> None:
    with pytest.raises(ValueError):
        make()


# --------------------------------------------------------------------------- interval mutation
def test_interval_mutation_touches_only_floats() -> None:
    prop = IntervalMutationNormal(SPACE, sigma_factor=0.2, points=5, rng=random.Random(0))
    for seed in range(100):
        parent = _parents(seed, 1)[0]
        child = prop(parent)
        assert _changed(parent, child) <= {"x", "lr"}
        assert child["x"] != parent["x"] and child["lr"] != parent["lr"]  # points capped at 2


def test_interval_mutation_points_limits_genes() -> None:
    prop = IntervalMutationNormal(SPACE, sigma_factor=0.2, points=1, rng=random.Random(0))
    touched: Counter[str] = Counter()
    for seed in range(200):
        parent = _parents(seed, 1)[0]
        diff = _changed(parent, prop(parent))
        assert len(diff) == 1
        touched.update(diff)
    assert set(touched) == {"x", "lr"} and min(touched.values()) > 60


def test_interval_mutation_without_floats_is_a_copy() -> None:
    space = SearchSpace({"n": (1, 9), "c": ("a", "b")})
    parent = _ind({"n": 3, "c": "a"})
    child = IntervalMutationNormal(space, rng=random.Random(0))(parent)
    assert dict(child) == dict(parent) and child is not parent


@pytest.mark.parametrize("sigma", [0.01, 0.03])
def test_interval_mutation_sigma_is_a_fraction_of_the_range(sigma: float) -> None:
    space = SearchSpace({"x": Float(-5.0, 5.0)})
    prop = IntervalMutationNormal(space, sigma_factor=sigma, rng=random.Random(1))
    parent = _ind({"x": 0.5})
    steps = np.array([prop(parent)["x"] - 0.5 for _ in range(3000)])
    assert abs(steps.mean()) < 0.1 * sigma * 10
    assert steps.std() == pytest.approx(sigma * 10.0, rel=0.1)


def test_interval_mutation_of_log_float_is_multiplicative() -> None:
    space = SearchSpace({"lr": Float(1e-6, 1.0, log=True)})
    sigma = 0.05
    prop = IntervalMutationNormal(space, sigma_factor=sigma, rng=random.Random(2))
    spreads = []
    for centre in (1e-4, 1e-2):
        values = np.array([prop(_ind({"lr": centre}))["lr"] for _ in range(2000)])
        assert (values > 0).all()
        log_ratio = np.log(values / centre)
        # Steps are Gaussian on log(v): std = sigma * log(high / low), symmetric around 0.
        assert log_ratio.std() == pytest.approx(sigma * math.log(1e6), rel=0.1)
        assert abs(np.median(log_ratio)) < 0.1
        spreads.append(values.std() / centre)
    # The same relative spread at both scales (a linear mutation would be ~100x wider at 1e-4).
    assert spreads[0] == pytest.approx(spreads[1], rel=0.25)


def test_interval_mutation_clips_to_bounds() -> None:
    space = SearchSpace({"x": Float(0.0, 1.0), "lr": Float(1e-3, 1.0, log=True)})
    prop = IntervalMutationNormal(space, sigma_factor=5.0, points=2, rng=random.Random(0))
    values = [prop(_ind({"x": 0.99, "lr": 0.9})) for _ in range(300)]
    assert all(space.in_bounds(v) for v in values)
    assert any(v["x"] == 1.0 for v in values) and any(v["x"] == 0.0 for v in values)


# --------------------------------------------------------------------------- crossover
def _disjoint_parents() -> tuple[Individual, Individual]:
    a = _ind({f"g{i}": float(i) for i in range(20)}, loss=1.0)
    b = _ind({f"g{i}": float(100 + i) for i in range(20)}, loss=2.0)
    return a, b


def _share_from(child: Individual, parent: Individual) -> float:
    return sum(child[k] == parent[k] for k in child) / len(child)


@pytest.mark.parametrize("contribution", [0.0, 0.2, 0.5, 0.8, 1.0])
def test_crossover_uniform_respects_relative_contribution(contribution: float) -> None:
    a, b = _disjoint_parents()
    prop = CrossoverUniform(contribution, rng=random.Random(4))
    shares = []
    for _ in range(150):
        child = prop([a, b])
        assert all(child[k] in (a[k], b[k]) for k in a)
        assert list(child) == list(a)
        shares.append(_share_from(child, a))
    mean = float(np.mean(shares))
    assert mean == pytest.approx(contribution, abs=0.04)
    if contribution in (0.0, 1.0):
        assert set(shares) == {contribution}


def test_crossover_copies_categoricals_whole() -> None:
    prop = CrossoverUniform(rng=random.Random(0))
    for seed in range(50):
        a, b = _parents(seed, 2)
        child = prop([a, b])
        _assert_valid(child)
        assert all(child[k] in (a[k], b[k]) for k in SPACE.names)


def test_crossover_multiple_takes_genes_from_all_parents() -> None:
    parents = [_ind({f"g{i}": p * 100 + i for i in range(30)}) for p in range(3)]
    prop = CrossoverMultiple(rng=random.Random(0))
    origin: Counter[int] = Counter()
    for _ in range(100):
        child = prop(parents)
        for k, v in child.items():
            owners = [p for p, par in enumerate(parents) if par[k] == v]
            assert len(owners) == 1
            origin[owners[0]] += 1
    assert all(abs(origin[p] / 3000 - 1 / 3) < 0.04 for p in range(3))


def test_crossover_sigmoid_favours_the_lower_loss_parent() -> None:
    a, b = _disjoint_parents()  # a has the lower loss
    prop = CrossoverSigmoid(temperature=1.0, rng=random.Random(0))
    share_a = np.mean([_share_from(prop([a, b]), a) for _ in range(200)])
    share_b = np.mean([_share_from(prop([b, a]), a) for _ in range(200)])
    expected = 1 / (1 + math.exp(-1.0))  # loss difference 1 at temperature 1
    assert share_a == pytest.approx(expected, abs=0.04)
    assert share_b == pytest.approx(expected, abs=0.04)  # b first: still favours a
    for child in (prop([a, b]), prop([b, a])):
        assert all(child[k] in (a[k], b[k]) for k in a)


def test_crossover_sigmoid_temperature_and_missing_losses() -> None:
    a, b = _disjoint_parents()
    hot = CrossoverSigmoid(temperature=1e6, rng=random.Random(0))
    assert np.mean([_share_from(hot([a, b]), a) for _ in range(200)]) == pytest.approx(
        0.5, abs=0.04
    )
    cold = CrossoverSigmoid(temperature=1e-3, rng=random.Random(0))
    assert all(_share_from(cold([a, b]), a) == 1.0 for _ in range(20))
    assert all(_share_from(cold([b, a]), a) == 1.0 for _ in range(20))
    unevaluated = _ind(dict(b))
    assert all(_share_from(cold([a, unevaluated]), a) == 1.0 for _ in range(20))
    assert all(_share_from(cold([unevaluated, a]), a) == 1.0 for _ in range(20))
    # Neither parent evaluated, or equal losses: no preference.
    none_a, none_b = _ind(dict(a)), _ind(dict(b))
    for pair in ([none_a, none_b], [_ind(dict(a), 3.0), _ind(dict(b), 3.0)]):
        share = np.mean([_share_from(cold(pair), a) for _ in range(200)])
        assert share == pytest.approx(0.5, abs=0.05)


# --------------------------------------------------------------------------- init
def test_init_uniform_covers_the_space() -> None:
    prop = InitUniform(SPACE, rng=random.Random(0))
    draws = [prop() for _ in range(1000)]
    for d in draws:
        _assert_valid(d)
    assert {d["act"] for d in draws} == set(CHOICES)
    assert len({d["n"] for d in draws}) == 64
    xs = np.array([d["x"] for d in draws])
    assert xs.min() < -4.5 and xs.max() > 4.5 and abs(xs.mean()) < 0.3
    # Log-scaled float: uniform in log, so about half of the draws are below the geometric mean.
    lrs = np.array([d["lr"] for d in draws])
    assert 0.45 < np.mean(lrs < math.sqrt(1e-5 * 1e-1)) < 0.55
    ks = np.array([d["k"] for d in draws])
    assert 0.4 < np.mean(ks <= 32) < 0.6


def test_init_uniform_is_reproducible_with_seeded_rng() -> None:
    a = [dict(InitUniform(SPACE, rng=random.Random(9))()) for _ in range(3)]
    b = [dict(InitUniform(SPACE, rng=random.Random(9))()) for _ in range(3)]
    assert a == b
    c = InitUniform(SPACE, rng=random.Random(9))
    assert dict(c()) != dict(c())


def test_init_uniform_replacement_probability() -> None:
    prop = InitUniform(SPACE, parents=1, probability=0.25, rng=random.Random(1))
    parent = _parents(0, 1)[0]
    replaced = sum(dict(prop([parent])) != dict(parent) for _ in range(2000))
    assert 0.2 < replaced / 2000 < 0.3


# --------------------------------------------------------------------------- selection
def _population(
    losses: Sequence[float], shuffle_seed: int = 0
) -> tuple[Population, list[Individual]]:
    pop = Population()
    inds = [_ind({"x": float(i)}, loss=loss, uid=str(i)) for i, loss in enumerate(losses)]
    order = list(inds)
    random.Random(shuffle_seed).shuffle(order)
    for ind in order:
        pop.add(ind)
    return pop, inds


@SETTINGS
@given(
    losses=st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=30),
    data=st.data(),
)
def test_select_min_max_agree_on_sorted_view_and_list(
    losses: list[float], data: st.DataObject
) -> None:
    k = data.draw(st.integers(1, len(losses)))
    pop, inds = _population(losses, data.draw(st.integers(0, 100)))
    view = pop.active(0)
    shuffled = data.draw(st.permutations(inds))
    lo_view, lo_list = SelectMin(k)(view), SelectMin(k)(shuffled)
    hi_view, hi_list = SelectMax(k)(view), SelectMax(k)(shuffled)
    assert [i.loss for i in lo_view] == [i.loss for i in lo_list] == sorted(losses)[:k]
    assert (
        [i.loss for i in hi_view] == [i.loss for i in hi_list] == sorted(losses, reverse=True)[:k]
    )
    for out in (lo_view, lo_list, hi_view, hi_list):
        assert isinstance(out, list) and len(out) == k
        assert len({id(i) for i in out}) == k
        assert all(i in inds for i in out)
    if len(set(losses)) == len(losses):  # without ties the very same individuals
        assert lo_view == lo_list and hi_view == hi_list


def test_selection_treats_missing_loss_as_worst() -> None:
    a, b, c = _ind({"x": 0.0}, 1.0), _ind({"x": 1.0}, None), _ind({"x": 2.0}, -1.0)
    assert SelectMin(2)([a, b, c]) == [c, a]
    assert SelectMax(1)([a, b, c]) == [b]


@pytest.mark.parametrize("cls", [SelectMin, SelectMax, SelectUniform])
def test_selection_from_too_small_pool_raises(cls: type[Propagator]) -> None:
    pop, inds = _population([1.0, 2.0])
    with pytest.raises(ValueError, match="pool of 2"):
        cls(3)(inds)
    with pytest.raises(ValueError, match="pool of 2"):
        cls(3)(pop.active(0))


def test_selection_does_not_modify_its_input() -> None:
    pop, inds = _population([3.0, 1.0, 2.0])
    pool = list(inds)
    for prop in (SelectMin(2), SelectMax(2), SelectUniform(2, rng=random.Random(0))):
        prop(pool)
        prop(pop.active(0))
    assert pool == inds and pop.n_active(0) == 3
    assert [i.loss for i in pop.active(0)] == [1.0, 2.0, 3.0]


@pytest.mark.parametrize("from_view", [False, True])
def test_select_uniform_draws_distinct_individuals_uniformly(from_view: bool) -> None:
    pop, inds = _population([float(i) for i in range(10)])
    pool: Sequence[Individual] = pop.active(0) if from_view else inds
    prop = SelectUniform(3, rng=random.Random(0))
    counts: Counter[str] = Counter()
    for _ in range(1000):
        out = prop(pool)
        assert len(out) == 3 and len({id(i) for i in out}) == 3
        assert all(i in inds for i in out)
        counts.update(i.uid for i in out)  # type: ignore[misc]
    assert len(counts) == 10
    assert all(230 < c < 370 for c in counts.values())  # expected 300 each
    a = [i.uid for i in SelectUniform(3, rng=random.Random(5))(pool)]
    assert a == [i.uid for i in SelectUniform(3, rng=random.Random(5))(pool)]


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
