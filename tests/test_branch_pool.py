"""The GA's breeding pool in a conditional space (:class:`BranchPool`): the best individuals,
where the best branches keep places, so a search caught on a deceptive branch leaves it."""

from __future__ import annotations

import random

import pytest

from propulate.population import Individual, Population
from propulate.propagators import SelectMin
from propulate.propagators.branches import BranchPool
from propulate.propagators.default import get_default_propagator
from propulate.space import SearchSpace
from propulate.testing import proposals


def _two_branch(choices: tuple[str, ...] = ("a", "b")) -> SearchSpace:
    """``branch`` in ``choices``, two floats per branch, one shared float."""
    params: dict = {"branch": {"type": "categorical", "choices": list(choices)}}
    for br in choices:
        for i in (1, 2):
            params[f"{br}{i}"] = {"type": "float", "low": -5, "high": 5, "when": {"branch": br}}
    params["s"] = {"type": "float", "low": -5.0, "high": 5.0}
    return SearchSpace(params)


def _deceptive_loss(p: dict) -> float:
    """Branch a's optimum 0 (at a_i = 1), branch b's 0.5 (at b_i = -2), plus s^2 / 4."""
    shared = p["s"] ** 2 / 4
    if p["branch"] == "a":
        return shared + sum((p[f"a{i}"] - 1.0) ** 2 for i in (1, 2)) / 2
    return shared + 0.5 + sum((p[f"b{i}"] + 2.0) ** 2 for i in (1, 2)) / 2


def _inds(branches: str, start: int = 0) -> list[Individual]:
    """One individual per letter (its branch), losses ascending in the order given."""
    out = []
    for i, br in enumerate(branches, start):
        ind = Individual({"branch": br, f"{br}1": 0.0, f"{br}2": 0.0, "s": float(i)})
        ind.loss, ind.uid, ind.island = float(i), str(i), 0
        out.append(ind)
    return out


def _view(inds: list[Individual]):  # noqa: ANN202 - a SortedView
    pop = Population()
    for ind in reversed(inds):
        pop.add(ind)
    return pop.active(0)


def _branches(pool: list[Individual]) -> str:
    return "".join(i["branch"] for i in pool)


def test_the_runner_up_branch_keeps_two_places_in_the_pool() -> None:
    inds = _inds("a" * 12 + "bbb")
    for view in (_view(inds), list(reversed(inds))):  # the engine's view, a plain list
        pool = BranchPool(8, _two_branch())(view)
        assert [i.loss for i in pool] == [0, 1, 2, 3, 4, 5, 12, 13]
        assert _branches(pool) == "aaaaaabb"
    assert [i.loss for i in BranchPool(8, _two_branch(), places=1)(inds)] == [
        0, 1, 2, 3, 4, 5, 6, 12
    ]  # fmt: skip


def test_a_branch_with_its_places_or_alone_gets_the_plain_best() -> None:
    space = _two_branch()
    for branches in ("abbaaaaaaaaaaa", "aaaaaaaaaaaaaa", "bbbbbbbbbbbbbbba"):
        inds = _inds(branches)
        pool = BranchPool(8, space)(inds)
        if branches.startswith("bbb"):  # the one a (rank 15) takes the worst b's place
            assert [i.loss for i in pool] == [0, 1, 2, 3, 4, 5, 6, 15]
        else:
            assert pool == SelectMin(8)(inds)
    pair = BranchPool(2, space)(_inds("aaab"))  # a pool of 2: no reserve
    assert [i.loss for i in pair] == [0, 1]


def test_only_the_best_branches_are_reserved_and_only_as_deep_as_asked() -> None:
    space = _two_branch(("a", "b", "c"))
    inds = _inds("a" * 10 + "c" + "b" * 3 + "c")
    pool = BranchPool(8, space)(inds)  # 8 // (2 * 2) = 2 branches: a, and c (rank 10)
    assert _branches(pool) == "aaaaaacc" and pool[-1].loss == 14
    assert BranchPool(8, space, places=1)(inds)[-3:] == [inds[5], inds[10], inds[11]]
    shallow = BranchPool(8, space, depth=1)(inds)  # looks at the 8 best only
    assert shallow == SelectMin(8)(inds)
    with pytest.raises(ValueError, match="places"):
        BranchPool(8, space, places=0)
    with pytest.raises(ValueError, match="pool of 3"):
        BranchPool(8, space)(inds[:3])


def test_the_ga_of_a_conditional_space_breeds_from_a_branch_pool() -> None:
    cond = get_default_propagator(8, _two_branch(), rng=random.Random(0))
    stages = cond.true_prop.propagators  # type: ignore[attr-defined]
    assert any(isinstance(s, BranchPool) for s in stages)
    plain = SearchSpace({"x": {"type": "float", "low": 0.0, "high": 1.0}})
    stages = get_default_propagator(8, plain, rng=random.Random(0)).true_prop.propagators  # type: ignore[attr-defined]
    assert not any(isinstance(s, BranchPool) for s in stages)


def test_the_ga_leaves_a_deceptive_branch() -> None:
    """Branch b is good at first and worse at the end: with the runner-up branch bred on,
    every seed reaches 0.01 within 350 evaluations (81 to 277; without BranchPool, 3 of these
    10 seeds needed 423 to 506)."""
    space = _two_branch()
    for seed in range(10):
        _, losses, _ = proposals(space, "ga", 350, seed=seed, loss=_deceptive_loss, until=0.01)
        assert losses[-1] <= 0.01, (seed, len(losses))
