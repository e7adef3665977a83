"""CMA-ES's mean update with late points (:meth:`propulate.propagators.cma_core.CMAState.update`
with ``moves``): the displacements children carry (:class:`propulate.propagators.cmaes.
CMAPropagator`'s tag) and what the update does with them."""

from __future__ import annotations

import random

import numpy as np
import pytest

from propulate.population import Individual
from propulate.propagators.cma_core import RECENTRE, CMAState
from propulate.propagators.cmaes import CMAPropagator


def _generation(state: CMAState, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    xs = np.array([state.sample(rng) for _ in range(state.lam)])
    ys = (xs - state.mean) / (state.sigma * state.scale)
    losses = np.sum((xs - 0.7) ** 2, axis=1)
    return xs, ys, losses


def test_points_sampled_from_this_mean_move_it_as_the_standard_update() -> None:
    """One worker: every point was sampled from this distribution, so recombining the points
    and applying their displacements to the mean are the same update."""
    a, b = CMAState(np.full(4, 0.3), 0.2, 8), CMAState(np.full(4, 0.3), 0.2, 8)
    for g in range(5):
        xs, ys, losses = _generation(a, g)
        a.update(xs, ys, losses)
        b.update(xs, ys, losses, moves=xs - b.mean)
        assert b.mean == pytest.approx(a.mean, abs=1e-12)
        assert b.sigma == pytest.approx(a.sigma, rel=1e-9)


def test_late_points_move_the_mean_on_from_where_it_is() -> None:
    """Points sampled from a mean one update old: recombining them alone puts the mean back
    where they were drawn (the last update's move lost), applying their displacements alone
    would repeat it; the update takes ``RECENTRE`` of the way from the first to the second."""
    state = CMAState(np.full(3, 0.5), 0.1, 6)
    old = np.full(3, 0.4)  # the mean the points were sampled from
    rng = np.random.default_rng(3)
    moves = 0.1 * rng.standard_normal((6, 3))
    xs = old + moves
    ys = moves / 0.1
    losses = np.arange(6.0)  # the first mu points selected, in this order
    w = state.s.weights[: state.s.mu]
    state.update(xs, ys, losses, moves=moves)
    recombined = w @ xs[: state.s.mu]
    displaced = np.full(3, 0.5) + w @ moves[: state.s.mu]
    assert state.mean == pytest.approx(
        (1 - RECENTRE) * recombined + RECENTRE * displaced, abs=1e-12
    )


def test_two_workers_means_come_together() -> None:
    """Two workers' distributions that differ (they saw their peers' children in another
    order) update with the same generation: their means' distance shrinks by ``RECENTRE``,
    so they cannot drift apart (with displacements alone it would stay as it is)."""
    a, b = CMAState(np.full(3, 0.5), 0.1, 6), CMAState(np.full(3, 0.45), 0.1, 6)
    xs, ys, losses = _generation(a, 1)
    moves = xs - a.mean
    before = np.linalg.norm(a.mean - b.mean)
    a.update(xs, ys, losses, moves=moves)
    b.update(xs, ys, losses, moves=moves)
    assert np.linalg.norm(a.mean - b.mean) == pytest.approx(RECENTRE * before, rel=1e-9)


def test_a_peers_child_carries_its_displacement() -> None:
    """The tag's sampling step size (and integer scales) with its step give back the
    displacement from the mean the child was drawn from, whoever reads it."""
    space = {"x": (-5.0, 5.0), "y": (-5.0, 5.0), "n": (0, 20)}
    prop = CMAPropagator(limits=space, rng=random.Random(1))
    child = prop([])
    _, raw, _ = prop._mine  # type: ignore[misc]
    state = prop.state
    assert state is not None
    assert prop._move(child.state, state.n) == pytest.approx(raw - state.mean, abs=1e-12)
    assert prop._moves(state, [(None, None, 0.0, child)], raw[None, :] + 1.0)[0] == pytest.approx(
        raw - state.mean, abs=1e-12
    )  # from the tag, not from the point
    foreign = Individual(dict(child))
    foreign.state = {"cma": [5, *child.state["cma"][1:]], "y": [0.0] * 3, "s": 1.0}
    assert prop._moves(state, [(None, None, 0.0, foreign)], raw[None, :])[0] == pytest.approx(
        raw - state.mean, abs=1e-12
    )  # another island's child (injected): the point's own displacement
    assert prop._move({"y": child.state["y"]}, state.n) is None  # an older record: no "s"


def test_an_older_record_without_the_step_size_is_recombined_as_a_point() -> None:
    """Records written before the tag held ``"s"`` (a resumed run) are recombined as points:
    with one worker, the same update as from full tags."""
    space = {"x": (-5.0, 5.0), "y": (-5.0, 5.0)}
    full = CMAPropagator(limits=space, rng=random.Random(2))
    old = CMAPropagator(limits=space, rng=random.Random(2))
    for prop, strip in ((full, False), (old, True)):
        for _ in range(3 * prop.lam0):
            child = prop([])
            prop._mine = None  # read back from its tag, as a peer's child
            if strip:
                child.state = {k: v for k, v in child.state.items() if k != "s"}
            child.loss = float(sum((v - 1.0) ** 2 for v in child.values()))
            prop.observe(child)
    assert full.state is not None and old.state is not None
    assert old.state.generation == full.state.generation == 3
    assert old.state.mean == pytest.approx(full.state.mean, abs=1e-9)
    assert not np.allclose(old.state.mean, 0.5)  # it moved


def test_the_displacements_apply_only_to_late_generations() -> None:
    """With few workers a generation's children were sampled from the current distribution
    (or one update before): the update is the standard one. Children sampled on average at
    least one update ago (many workers) get the displacement update."""
    prop = CMAPropagator(limits={"x": (-5.0, 5.0), "y": (-5.0, 5.0)}, rng=random.Random(4))
    state = prop._ensure()
    state.generation = 7

    def generation(*ages: int) -> list[tuple[object, ...]]:
        out = []
        for age in ages:
            child = prop([])
            child.state["cma"][3] = state.generation - age
            out.append((None, None, 0.0, child))
        return out

    assert not prop._late(state, generation(0, 0, 1, 0, 1, 0))
    assert not prop._late(state, generation(0, 1, 1, 1, 1, 1))  # five of six one update late
    assert prop._late(state, generation(1, 1, 1, 1, 1, 1))
    assert prop._late(state, generation(0, 2, 1, 2, 1, 0))
