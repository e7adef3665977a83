"""Tests of :mod:`propulate.population`: individuals and a worker's population index."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from propulate.population import Individual, Population, SortedView

SETTINGS = settings(max_examples=100, deadline=None)


def _ind(
    loss: float | None,
    uid: str | None = None,
    island: int = 0,
    status: str = "ok",
    active: bool = True,
    **params: float | int | str,
) -> Individual:
    ind = Individual(params or {"x": 0.0}, generation=1, rank=0)
    ind.loss = loss
    ind.uid = uid
    ind.island = island
    ind.status = status
    ind.active = active
    return ind


def _losses(view: SortedView) -> list[float]:
    return [ind.loss for ind in view]  # type: ignore[misc]


# --------------------------------------------------------------------------- Individual
def test_individual_is_a_dict_with_bookkeeping() -> None:
    ind = Individual({"x": 1.5, "n": 3, "act": "relu"}, generation=4, rank=2)
    assert isinstance(ind, dict)
    assert dict(ind) == {"x": 1.5, "n": 3, "act": "relu"}
    assert ind["n"] == 3 and list(ind) == ["x", "n", "act"]
    assert (ind.generation, ind.rank, ind.loss, ind.active, ind.island) == (4, 2, None, True, -1)
    assert ind.status == "ok" and not ind.failed and ind.uid is None
    np.testing.assert_array_equal(ind.position, [1.5, 3.0])  # categoricals left out
    ind.status = "failed"
    assert ind.failed
    assert "x=1.5" in repr(ind)


def test_individual_copy_is_a_fresh_unevaluated_individual() -> None:
    ind = _ind(0.5, uid="s:0:1", island=2, x=1.0, c="a")
    ind.migration_steps = 3
    child = ind.copy()
    assert type(child) is Individual
    assert dict(child) == dict(ind)
    assert child is not ind
    assert child.loss is None and child.uid is None and child.island == -1
    assert child.migration_steps == 0 and child.status == "ok"
    child["x"] = 2.0
    assert ind["x"] == 1.0


def test_individual_equality_is_identity() -> None:
    a = Individual({"x": 1.0})
    b = Individual({"x": 1.0})
    assert a == a and a != b
    assert len({a, b}) == 2
    assert a in [a] and b not in [a]


# --------------------------------------------------------------------------- Population
def test_add_indexes_active_individuals_by_loss() -> None:
    pop = Population(num_islands=2)
    for i, loss in enumerate([3.0, 1.0, 2.0, 0.5]):
        assert pop.add(_ind(loss, uid=f"s:0:{i}", island=i % 2))
    assert len(pop) == 4
    assert "s:0:1" in pop and "s:9:9" not in pop
    assert pop.get("s:0:1").loss == 1.0  # type: ignore[union-attr]
    assert pop.get("missing") is None
    assert _losses(pop.active(0)) == [2.0, 3.0]
    assert _losses(pop.active(1)) == [0.5, 1.0]
    assert pop.n_active(0) == 2 and pop.n_active(1) == 2
    assert len(pop.active(0)) == 2
    assert pop.best.loss == 0.5  # type: ignore[union-attr]
    assert {ind.loss for ind in pop} == {3.0, 1.0, 2.0, 0.5}


def test_sorted_view_indexing_and_slicing() -> None:
    pop = Population()
    inds = [_ind(loss, uid=str(i)) for i, loss in enumerate([5.0, 1.0, 4.0, 2.0, 3.0])]
    for ind in inds:
        pop.add(ind)
    view = pop.active(0)
    assert isinstance(view, SortedView)
    assert view[0] is inds[1] and view[-1] is inds[0]
    assert [i.loss for i in view[1:3]] == [2.0, 3.0]
    assert [i.loss for i in view[::-1]] == [5.0, 4.0, 3.0, 2.0, 1.0]
    assert view[:10] == list(view) == view.head(10)
    assert view.head(2) == view[:2] and view.head(0) == []
    with pytest.raises(IndexError):
        view[5]
    # The view is live: later additions show up.
    pop.add(_ind(0.1, uid="new"))
    assert view[0].uid == "new" and len(view) == 6


def test_equal_losses_keep_insertion_order() -> None:
    pop = Population()
    inds = [_ind(1.0, uid=str(i)) for i in range(5)]
    for ind in inds:
        pop.add(ind)
    assert list(pop.active(0)) == inds


def test_duplicate_uid_is_ignored() -> None:
    pop = Population()
    first = _ind(1.0, uid="s:0:0")
    assert pop.add(first)
    dup = _ind(0.1, uid="s:0:0")
    assert not pop.add(dup)
    assert len(pop) == 1 and pop.n_active(0) == 1
    assert pop.get("s:0:0") is first
    assert pop.best is first
    assert pop.best_of() == [first]


def test_individuals_without_uid_are_all_kept() -> None:
    pop = Population()
    assert pop.add(_ind(1.0)) and pop.add(_ind(1.0))
    assert len(pop) == 2 and pop.n_active(0) == 2


@pytest.mark.parametrize(
    ("loss", "status", "counts_as_failure"),
    [
        (math.inf, "failed", True),
        (None, "failed", True),
        (1.0, "failed", True),
        (math.nan, "ok", False),
        (math.inf, "ok", False),
        (None, "ok", False),
    ],
)
def test_failed_or_unevaluated_individuals_are_never_active(
    loss: float | None, status: str, counts_as_failure: bool
) -> None:
    pop = Population()
    good = _ind(2.0, uid="good")
    pop.add(good)
    bad = _ind(loss, uid="bad", status=status)
    assert pop.add(bad)
    assert len(pop) == 2
    assert pop.n_active(0) == 1 and list(pop.active(0)) == [good]
    assert not bad.active
    assert pop.failures == int(counts_as_failure)
    assert pop.best is good
    assert pop.best_of(top_n=5) == [good]
    pop.deactivate("bad")  # harmless
    assert pop.n_active(0) == 1


def test_inactive_individual_is_known_but_not_bred_from() -> None:
    pop = Population()
    ind = _ind(0.5, uid="a", active=False)
    pop.add(ind)
    assert pop.n_active(0) == 0
    assert pop.best_of() == [ind]
    assert pop.best is ind


def test_deactivate_known_individual() -> None:
    pop = Population()
    a, b = _ind(1.0, uid="a"), _ind(2.0, uid="b")
    pop.add(a)
    pop.add(b)
    pop.deactivate("a")
    assert not a.active and b.active
    assert list(pop.active(0)) == [b]
    pop.deactivate("a")  # idempotent
    pop.deactivate_individual(a)
    assert list(pop.active(0)) == [b]
    assert pop.best_of(top_n=2) == [a, b]  # still known, active or not
    pop.deactivate_individual(b)
    assert pop.n_active(0) == 0 and len(pop) == 2


def test_an_individual_two_populations_hold_is_deactivated_in_the_one_asked() -> None:
    # an individual knows where it is in the population that took it in last; another one
    # holding the same object finds it all the same
    first, second = Population(), Population()
    a, b, c = _ind(1.0, uid="a"), _ind(2.0, uid="b"), _ind(3.0, uid="c")
    for ind in (a, b, c):
        first.add(ind)
    second.add(c)
    second.add(a)  # a is at another place here
    first.deactivate_individual(a)
    assert list(first.active(0)) == [b, c]
    a.active = True  # still active in the second population's eyes
    assert list(second.active(0)) == [a, c]
    second.deactivate_individual(c)
    assert list(second.active(0)) == [a]
    stranger = _ind(0.5, uid="s")
    first.deactivate_individual(stranger)  # not held: nothing happens
    assert not stranger.active and list(first.active(0)) == [b, c]


def test_deactivation_before_arrival_is_kept_pending() -> None:
    pop = Population()
    pop.deactivate("late")
    pop.deactivate("late")
    assert len(pop) == 0
    other = _ind(3.0, uid="other")
    pop.add(other)
    assert other.active and pop.n_active(0) == 1  # pending deactivation is for "late" only
    late = _ind(1.0, uid="late")
    assert pop.add(late)
    assert not late.active
    assert list(pop.active(0)) == [other]
    assert pop.get("late") is late
    assert pop.best is late  # the best seen, active or not


def test_deactivation_is_per_island() -> None:
    pop = Population(num_islands=3)
    inds = [_ind(float(i), uid=str(i), island=i % 3) for i in range(9)]
    for ind in inds:
        pop.add(ind)
    pop.deactivate("4")  # island 1
    assert [pop.n_active(i) for i in range(3)] == [3, 2, 3]
    assert _losses(pop.active(1)) == [1.0, 7.0]


def test_best_of() -> None:
    pop = Population(num_islands=2)
    losses = [4.0, 1.0, 3.0, 0.5, 2.0, 6.0]
    inds = [_ind(loss, uid=str(i), island=i % 2) for i, loss in enumerate(losses)]
    for ind in inds:
        pop.add(ind)
    pop.add(_ind(math.inf, uid="f", status="failed"))
    assert [i.loss for i in pop.best_of(top_n=3)] == [0.5, 1.0, 2.0]
    assert [i.loss for i in pop.best_of(island=0)] == [2.0]
    assert [i.loss for i in pop.best_of(island=1, top_n=10)] == [0.5, 1.0, 6.0]
    assert pop.best_of(top_n=0) == []
    assert Population().best_of() == []
    assert pop.best is inds[3]


ops = st.lists(
    st.one_of(
        st.tuples(
            st.just("add"),
            st.integers(0, 30),
            st.integers(0, 20),
            st.integers(0, 1),
            st.sampled_from(["ok", "ok", "ok", "failed"]),
        ),
        st.tuples(st.just("deactivate"), st.integers(0, 30)),
    ),
    max_size=60,
)


@SETTINGS
@given(ops=ops)
def test_population_matches_a_simple_model(ops: list[tuple]) -> None:
    pop = Population(num_islands=2)
    known: dict[str, Individual] = {}
    deactivated: set[str] = set()
    order: list[str] = []
    for op in ops:
        if op[0] == "add":
            _, k, loss, island, status = op
            uid = f"u{k}"
            ind = _ind(float(loss), uid=uid, island=island, status=status)
            assert pop.add(ind) == (uid not in known)
            if uid not in known:
                known[uid] = ind
                order.append(uid)
        else:
            uid = f"u{op[1]}"
            pop.deactivate(uid)
            deactivated.add(uid)
    assert len(pop) == len(known)
    for island in range(2):
        expected = sorted(
            (
                known[u]
                for u in order
                if known[u].island == island and known[u].status == "ok" and u not in deactivated
            ),
            key=lambda i: i.loss,  # stable: ties keep insertion order
        )
        view = pop.active(island)
        assert list(view) == expected
        assert pop.n_active(island) == len(expected) == len(view)
        assert view.head(3) == expected[:3] == view[:3]
        assert all(ind.active for ind in view)
    ok = [known[u] for u in order if known[u].status == "ok"]
    assert pop.failures == len(known) - len(ok)
    best = pop.best_of(top_n=3)
    assert [i.loss for i in best] == sorted(i.loss for i in ok)[:3]
    if ok:
        assert pop.best.loss == min(i.loss for i in ok)  # type: ignore[union-attr]
    else:
        assert pop.best is None


def test_the_active_view_is_the_sorted_list_of_active_individuals_ties_by_arrival() -> None:
    """The loss index (plain float losses, ids per loss, a kept head, arrivals sorted in when
    read past the head) gives the order of sorting ``(loss, arrival)``: over random adds and deactivations with many ties (+-0.0 too), by
    iteration, position (negative too) and every slice with or without a step."""
    rng = random.Random(1)
    for _ in range(150):
        pop = Population(2)
        inds: list[Individual] = []
        k = 3
        for i in range(rng.randint(0, 50)):
            ind = Individual({"x": i})
            ind.loss = rng.choice([0.0, -0.0, 1.0, 2.0, 3.5, rng.random(), 1e9])
            ind.island, ind.uid = rng.randint(0, 1), f"u{i}"
            pop.add(ind)
            inds.append(ind)
            if rng.random() < 0.3:
                pop.deactivate_individual(rng.choice(inds))
            # the head (a breeding pool) is remembered between arrivals: still right?
            # (the same size for a while: arrivals enter a kept head)
            k = rng.choice([0, 1, 3, 8]) if rng.random() < 0.2 else k
            island = ind.island
            live = sorted(
                (j.loss, n) for n, j in enumerate(inds) if j.island == island and j.active
            )
            assert pop.active(island)[:k] == [inds[n] for _, n in live[:k]]
        for island in (0, 1):
            live = sorted(
                (ind.loss, k) for k, ind in enumerate(inds) if ind.island == island and ind.active
            )
            expect = [inds[k] for _, k in live]
            view = pop.active(island)
            assert list(view) == expect and len(view) == len(expect)
            assert [view[j] for j in range(-len(expect), len(expect))] == expect + expect
            n = len(expect) + 2
            for a in range(-n, n + 1):
                for b in range(-n, n + 1):
                    for step in (None, 1, 2, -1, -3):
                        assert view[a:b:step] == expect[a:b:step], (a, b, step)
