"""Selection in :mod:`propulate.propagators`: ``SelectMin``/``SelectMax`` on population views
and lists, missing losses as worst, too small pools, inputs left alone, ``SelectUniform``.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from propulate.population import Individual
from propulate.propagators import Propagator, SelectMax, SelectMin, SelectUniform
from tests.propagator_utils import _ind, _population

SETTINGS = settings(max_examples=100, deadline=None)


# --------------------------------------------------------------------------- selection


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
