"""Pareto dominance (propulate.runs.dominance) against hand-computed cases, and the GA's Pareto pool."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from propulate.population import Individual
from propulate.propagators.pareto_selection import ParetoPool, RankTournament
from propulate.runs.declared_objectives import Objectives
from propulate.runs.dominance import (
    crowding_distance,
    dominates,
    front_ranks,
    hypervolume,
    nondominated_sort,
    pareto_mask,
    rank_and_crowd,
)

#: Six points: a=(1,5) b=(2,3) c=(4,1) are non-dominated; d=(3,4) is dominated by b only;
#: e=(5,5) by a, b, c, d; f=(2,3) equals b.
POINTS = [(1, 5), (2, 3), (4, 1), (3, 4), (5, 5), (2, 3)]


def brute_ranks(points: list[tuple[float, ...]]) -> list[int]:
    """Fronts by definition: peel the points no remaining point dominates."""
    left, rank, k = set(range(len(points))), [-1] * len(points), 0
    while left:
        front = {i for i in left if not any(dominates(points[j], points[i]) for j in left)}
        for i in front:
            rank[i] = k
        left -= front
        k += 1
    return rank


def test_dominance_is_no_worse_everywhere_and_better_somewhere() -> None:
    assert dominates((1, 2), (1, 3))
    assert not dominates((1, 3), (1, 3))
    assert not dominates((1, 4), (2, 3))


def test_fronts_of_the_hand_computed_case() -> None:
    assert front_ranks(POINTS).tolist() == [0, 0, 0, 1, 2, 0]
    assert [f.tolist() for f in nondominated_sort(POINTS)] == [[0, 1, 2, 5], [3], [4]]
    assert pareto_mask(POINTS).tolist() == [True, True, True, False, False, True]


@pytest.mark.parametrize("m", [2, 3])
def test_fronts_match_the_definition_on_random_ties(m: int) -> None:
    rng = np.random.default_rng(m)
    for _ in range(50):
        pts = [tuple(p) for p in rng.integers(0, 4, (25, m)).astype(float)]
        expected = brute_ranks(pts)
        assert front_ranks(pts).tolist() == expected
        assert pareto_mask(pts).tolist() == [r == 0 for r in expected]


def test_crowding_distance_by_hand() -> None:
    # one front, sorted on f1: (0,4) (1,2) (3,1) (4,0); ranges 4 and 4
    front = [(1, 2), (4, 0), (0, 4), (3, 1)]
    d = crowding_distance(front)
    assert math.isinf(d[1]) and math.isinf(d[2])
    assert d[0] == pytest.approx((3 - 0) / 4 + (4 - 1) / 4)  # neighbours (0,4) and (3,1)
    assert d[3] == pytest.approx((4 - 1) / 4 + (2 - 0) / 4)  # neighbours (1,2) and (4,0)


def test_rank_and_crowd_orders_by_front_then_crowding() -> None:
    front = [(1, 2), (4, 0), (0, 4), (3, 1)]
    pts = [*front, (4, 4)]
    order = rank_and_crowd(pts).tolist()
    assert set(order[:2]) == {1, 2}  # the extremes (infinite crowding) first
    assert order[2:] == [0, 3, 4]  # then 1.5 before 1.25, then the dominated point


def test_hypervolume_by_hand() -> None:
    # staircase of (1,3) (2,2) (3,1) under ref (4,4): 3*1 + 2*1 + 1*1 = 6
    assert hypervolume([(1, 3), (2, 2), (3, 1), (3.5, 3.5)], (4, 4)) == pytest.approx(6.0)
    assert hypervolume([(5, 0)], (4, 4)) == 0.0  # beyond the reference: nothing
    # 3-D: a unit cube at the origin under ref (1,1,1), plus a dominated point
    assert hypervolume([(0, 0, 0), (0.5, 0.5, 0.5)], (1, 1, 1)) == pytest.approx(1.0)
    # two boxes [0,2]x[1,2]x... : (0,1,0) and (1,0,0) under (2,2,1): 2*1 + 1*2 - 1*1 = 3
    assert hypervolume([(0, 1, 0), (1, 0, 0)], (2, 2, 1)) == pytest.approx(3.0)


def test_hypervolume_of_a_dense_zdt1_front_is_the_known_value() -> None:
    f1 = np.linspace(0, 1, 20001)
    assert hypervolume(np.c_[f1, 1 - np.sqrt(f1)], (1.1, 1.1)) == pytest.approx(
        1.21 - 1 / 3, abs=1e-4
    )


def evaluated(values: dict[str, float], active: bool = True) -> Individual:
    ind = Individual({"x": 0.0})
    ind.loss, ind.objectives, ind.active = values["a"], values, active
    return ind


def test_pareto_pool_keeps_the_best_by_front_and_crowding() -> None:
    pool = ParetoPool(3, Objectives.parse("a:min,b:max"))
    inds = [
        evaluated({"a": 1, "b": 1}),  # front 0 (extreme)
        evaluated({"a": 2, "b": 3}),  # front 0
        evaluated({"a": 3, "b": 2}),  # dominated by (2, 3) since b is maximised
        evaluated({"a": 4, "b": 5}),  # front 0 (extreme)
        evaluated({"a": 5, "b": 0}),  # dominated by everything
    ]
    failed = Individual({"x": 1.0})
    failed.status, failed.loss = "failed", math.inf
    for ind in [*inds, failed]:
        pool.observe(ind)
    assert len(pool.members) == 3
    assert set(map(id, pool(inds))) == {id(inds[0]), id(inds[1]), id(inds[3])}
    # an individual that left the island (real migration) is not bred from
    inds[1].active = False
    assert id(inds[1]) not in set(map(id, pool(inds)))


def test_rank_tournament_prefers_the_front_of_the_pool() -> None:
    pool = [evaluated({"a": float(i), "b": 0.0}) for i in range(10)]
    pick = RankTournament(2, random.Random(0))
    drawn = [pool.index(p) for _ in range(500) for p in pick(pool)]
    assert np.mean(drawn) < 4.5 - 1  # uniform draws would average 4.5
    assert min(drawn) == 0
