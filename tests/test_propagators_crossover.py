"""Crossover in :mod:`propulate.propagators`: uniform (relative contribution, whole
categoricals), multiple parents, and sigmoid (favouring the lower loss, temperature, missing
losses).
"""

from __future__ import annotations

import math
import random
from collections import Counter

import numpy as np
import pytest

from propulate.population import Individual
from propulate.propagators import CrossoverMultiple, CrossoverSigmoid, CrossoverUniform
from tests.propagator_utils import SPACE, _assert_valid, _ind, _parents


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
