"""The TPE propagator: its split, its densities, its search, and its refusals."""

from __future__ import annotations

import math
import random
import statistics

import numpy as np
import pytest

from propulate.population import Individual
from propulate.propagators.random_search import RandomSearch
from propulate.propagators.registry import make_propagator
from propulate.propagators.tpe import TPE
from propulate.runs.status import FAILED, PRUNED
from propulate.settings import EvolveSettings
from propulate.space import Categorical, Float, Integer, SearchSpace

SPACE = SearchSpace(
    {
        "x": Float(-5.0, 5.0),
        "lr": Float(1e-4, 1.0, log=True),
        "n": Integer(1, 9),
        "act": Categorical(("relu", "tanh", "gelu")),
    }
)


def loss(p: Individual) -> float:
    """A smooth loss with its optimum inside the space: x = 1, lr = 1e-2, n = 3, gelu."""
    return (
        (p["x"] - 1.0) ** 2 / 4
        + (math.log10(p["lr"]) + 2.0) ** 2
        + 0.1 * (p["n"] - 3) ** 2
        + (0.0 if p["act"] == "gelu" else 1.0)
    )


def evaluated(params: dict, value: float, status: str = "ok", curve=None) -> Individual:
    ind = Individual(dict(params))
    ind.loss = value
    ind.status = status
    ind.curve = curve
    return ind


def drive(prop, evaluations: int) -> float:
    best = math.inf
    for _ in range(evaluations):
        child = prop([])
        child.loss = loss(child)
        best = min(best, child.loss)
        if prop.observes:
            prop.observe(child)
    return best


def test_it_searches_better_than_random_search() -> None:
    """Paired over ten seeds at 150 evaluations: TPE's best is below random search's on most
    seeds and in the median (an inverted ratio l / g would search worse than random)."""
    tpe = [drive(TPE(SPACE, random.Random(s)), 150) for s in range(10)]
    rnd = [drive(RandomSearch(SPACE, random.Random(s)), 150) for s in range(10)]
    assert sum(t < r for t, r in zip(tpe, rnd, strict=True)) >= 8
    assert statistics.median(tpe) < 0.3 * statistics.median(rnd)


def test_the_first_children_are_random_until_startup_evaluations_are_known() -> None:
    a, b = TPE(SPACE, random.Random(5), startup=4), RandomSearch(SPACE, random.Random(5))
    for _ in range(3):
        child = a([])
        assert dict(child) == dict(b([]))
        a.observe(evaluated(child, loss(child)))


def test_pruned_runs_rank_after_finished_ones_by_their_step_then_value() -> None:
    prop = TPE(SPACE, random.Random(0), gamma=0.5)
    p = {"x": 0.0, "lr": 0.1, "n": 2, "act": "relu"}
    prop.observe(evaluated({**p, "x": 4.0}, 3.0))  # finished, the worst loss
    prop.observe(evaluated({**p, "x": -4.0}, math.inf, PRUNED, [[1, 0.1]]))
    prop.observe(evaluated({**p, "x": -2.0}, math.inf, PRUNED, [[1, 0.5], [3, 0.9]]))
    prop.observe(evaluated({**p, "x": 2.0}, math.inf, FAILED))  # no information: ignored
    prop.observe(evaluated({**p, "x": 1.0}, 1.0))
    below, above = prop.split()
    order = [float(SPACE["x"].decode(u)) for u in np.vstack([below, above])[:, 0]]
    assert order == pytest.approx([1.0, 4.0, -2.0, -4.0])
    assert len(below) == 2  # ceil(0.5 x 4)


@pytest.mark.parametrize("n", [1, 5, 40])
def test_each_density_integrates_to_one_over_the_cube(n: int) -> None:
    """The ratio l / g compares two densities: both must be normalised (truncated kernels,
    categorical cells, the prior), whatever the number of components."""
    space = SearchSpace({"x": Float(0.0, 1.0), "c": Categorical(("a", "b", "c", "d"))})
    prop = TPE(space, random.Random(0))
    gen = np.random.default_rng(1)
    centres = np.column_stack([gen.random(n), (gen.integers(0, 4, n) + 0.5) / 4])
    grid = (np.arange(2000) + 0.5) / 2000
    total = 0.0
    for cell in range(4):
        pts = np.column_stack([grid, np.full_like(grid, (cell + 0.5) / 4)])
        total += np.exp(prop._log_density(pts, centres)).mean() / 4
    assert total == pytest.approx(1.0, abs=2e-3)


def test_children_stay_in_the_space_and_are_drawn_near_the_best() -> None:
    prop = TPE(SPACE, random.Random(2), startup=1)
    best = {"x": 1.0, "lr": 1e-2, "n": 3, "act": "gelu"}
    prop.observe(evaluated(best, 0.0))
    for s in range(40):
        p = {"x": -4.0 + s * 0.2, "lr": 0.5, "n": 9, "act": "relu"}
        prop.observe(evaluated(p, 10.0 + s))
    kids = [prop([]) for _ in range(200)]
    assert all(SPACE[k].contains(v) for kid in kids for k, v in kid.items())
    assert statistics.median(abs(k["x"] - 1.0) for k in kids) < 1.0
    assert sum(k["act"] == "gelu" for k in kids) > 120


BRANCHES = SearchSpace(
    {
        "branch": {"type": "categorical", "choices": ["a", "b"]},
        "a1": {"type": "float", "low": -5, "high": 5, "when": {"branch": "a"}},
        "a2": {"type": "float", "low": -5, "high": 5, "when": {"branch": "a"}},
        "b1": {"type": "float", "low": -5, "high": 5, "when": {"branch": "b"}},
    }
)


def branch_loss(p: Individual) -> float:
    """Branch a is the better one (0 at a1 = a2 = 1), branch b bottoms out at 0.5."""
    if p["branch"] == "a":
        return ((p["a1"] - 1.0) ** 2 + (p["a2"] - 1.0) ** 2) / 4
    return 0.5 + (p["b1"] + 2.0) ** 2 / 4


def test_a_conditional_space_gets_consistent_children_and_its_better_branch() -> None:
    """Eight seeds of 150 evaluations: every child holds exactly its active parameters, and
    most runs settle in the better branch and near its optimum (TPE, Optuna's included, stays
    in the other branch on some seeds: two of these eight, a quarter of Optuna's runs on the
    conditional benchmark)."""
    found = 0
    for seed in range(8):
        prop = make_propagator("tpe", BRANCHES, EvolveSettings(), random.Random(seed))
        kids = []
        for _ in range(150):
            child = prop([])
            assert set(child) == set(BRANCHES.active(child))  # no inactive one, none missing
            child.loss = branch_loss(child)
            prop.observe(child)
            kids.append(child)
        settled = sum(k["branch"] == "a" for k in kids[-50:]) >= 40
        found += settled and min(k.loss for k in kids) < 0.05
    assert found >= 5


def test_a_conditional_density_integrates_to_one_over_the_branches() -> None:
    """Over every branch with its own parameters (the others inactive), whatever branches the
    components hold."""
    space = SearchSpace(
        {
            "branch": {"type": "categorical", "choices": ["a", "b"]},
            "x": {"type": "float", "low": 0, "high": 1, "when": {"branch": "a"}},
            "y": {"type": "float", "low": 0, "high": 1, "when": {"branch": "b"}},
        }
    )
    prop = TPE(space, random.Random(0))
    centres = space.encode_many(
        [{"branch": "a", "x": 0.2}, {"branch": "a", "x": 0.9}, {"branch": "b", "y": 0.4}]
    )
    grid = (np.arange(2000) + 0.5) / 2000
    inactive = np.full_like(grid, -0.5)
    total = 0.0
    for cell, (x, y) in enumerate([(grid, inactive), (inactive, grid)]):
        pts = np.column_stack([np.full_like(grid, (cell + 0.5) / 2), x, y])
        total += np.exp(prop._log_density(pts, centres)).mean() / 2
    assert total == pytest.approx(1.0, abs=2e-3)


def test_a_candidate_a_forbidden_clause_excludes_is_passed_over() -> None:
    """The loss is lowest just outside the clause's boundary, where TPE's candidates crowd:
    after the random start every proposal is allowed (without the check about half of them
    were forbidden: 68-70 of 140 on four seeds)."""
    space = SearchSpace.from_dict(
        {
            "parameters": {
                "tx": {"type": "int", "low": 1, "high": 64},
                "ty": {"type": "int", "low": 1, "high": 64},
            },
            "forbidden": ["tx * ty > 1024"],
        }
    )
    prop = TPE(space, random.Random(0))
    forbidden = 0
    for i in range(150):
        child = prop([])
        forbidden += i >= prop.startup and not space.satisfies(child)
        child.loss = (child["tx"] - 40) ** 2 + (child["ty"] - 26) ** 2  # 40 x 26 = 1040: out
        prop.observe(child)
    assert forbidden <= 2


def test_workers_that_observe_the_same_results_build_the_same_model() -> None:
    """Asynchronous workers share no state: each rebuilds the model from what it observed,
    in whatever order the results arrived."""
    gen = random.Random(3)
    inds = [RandomSearch(SPACE, gen)([]) for _ in range(30)]
    for ind in inds:
        ind.loss = loss(ind)
    a, b = TPE(SPACE, random.Random(0)), TPE(SPACE, random.Random(0))
    for ind in inds:
        a.observe(ind)
    for ind in reversed(inds):
        b.observe(ind)
    assert [np.sort(m, axis=0).tolist() for m in a.split()] == [
        np.sort(m, axis=0).tolist() for m in b.split()
    ]


@pytest.mark.mpi
def test_two_ranks_share_their_results_through_the_engine(tmp_path) -> None:
    """``evolve --propagator tpe`` on two ranks: every evaluation is recorded once, both ranks
    evaluate, and the model concentrates the later proposals near the optimum. The median loss
    of the last 60 evaluations is about 1 (0.9-1.2 in twelve runs); of 60 random draws it is
    about 17, and below 10 once in a thousand. (The best loss alone does not tell them apart
    reliably: the ranks' interleaving changes from run to run, and TPE's best was 0.05-0.06 in
    two runs of twenty, where random draws get below 0.05 in one run of six.)"""
    from propulate.runs.log import iter_records
    from tests.mpi_utils import run_mpi

    (tmp_path / "quad.py").write_text(
        "def f(p):\n    return (p['x'] - 1.0) ** 2 + (p['y'] + 2.0) ** 2\n"
    )
    (tmp_path / "space.yaml").write_text(
        "parameters:\n  x: {type: float, low: -5, high: 5}\n  y: {type: float, low: -5, high: 5}\n"
    )
    out = tmp_path / "out"
    args = ["-m", "propulate", "evolve", "--objective", "quad:f", "--space", "space.yaml"]
    args += ["--out", str(out), "--propagator", "tpe", "--max-evaluations", "120", "--seed", "3"]
    run_mpi(2, args, cwd=tmp_path, env={"PYTHONPATH": str(tmp_path)})
    records = sorted(iter_records(out), key=lambda r: r["start"])
    assert len(records) == 120
    assert {r["rank"] for r in records} == {0, 1}
    assert statistics.median(r["loss"] for r in records[60:]) < 5.0
    assert min(r["loss"] for r in records) < 0.2
