"""The pruners one by one, their registry, and how objectives report intermediate values."""

from __future__ import annotations

import math
import signal
from collections.abc import Iterator
from typing import Any

import pytest

from propulate.compat.surrogate import Surrogate
from propulate.engine.evaluation import Evaluator, call_objective, run_objective
from propulate.engine.signals import StopFlag
from propulate.engine.steps import Pruned, accepts_report
from propulate.population import Individual
from propulate.pruners import (
    ASHAPruner,
    DynamicSurrogate,
    MedianPruner,
    PatientPruner,
    Pruner,
    StaticSurrogate,
)
from propulate.pruners.registry import make_pruner, parse_pruner, pruner_text
from propulate.pruners.surrogates import LegacySurrogate, as_pruner
from propulate.user_objective.loading import bind_task


def finished(curve: list[float], status: str = "ok", **params: Any) -> Individual:
    ind = Individual(params)
    ind.curve = [[i, v] for i, v in enumerate(curve)]
    ind.status = status
    ind.loss = curve[-1] if status == "ok" else math.inf
    return ind


def stops_at(pruner: Pruner, curve: list[float], params: Any = None) -> int | None:
    pruner.start(params or {})
    seen: list[list[float]] = []
    for i, v in enumerate(curve):
        seen.append([i, v])
        if pruner.should_stop(seen):
            return i
    return None


# ------------------------------------------------------------------ ASHA
def test_asha_rungs_and_promotion_of_the_best_third() -> None:
    asha = ASHAPruner(min_steps=1, eta=3)
    assert [asha.rung_step(k) for k in range(4)] == [1, 3, 9, 27]
    assert stops_at(asha, [5.0, 4.0, 3.0, 2.0]) is None  # an empty rung: the best goes on
    for value in (1.0, 2.0, 3.0, 6.0, 7.0):
        asha.observe(finished([9.0, value]))
    # rung 0 (step 1) holds 4, 1, 2, 3, 6, 7 (+ the new value: 7 values, 7 // 3 = 2 go on)
    assert stops_at(asha, [9.0, 1.5]) is None  # second best of 7: promoted
    assert stops_at(asha, [9.0, 2.5]) == 1  # third: stopped at the rung
    assert stops_at(asha, [0.1, 8.0]) == 1  # only the value at the rung counts


def test_asha_learns_rung_values_from_pruned_curves_and_checks_options() -> None:
    asha = ASHAPruner(min_steps=2, eta=2)
    asha.observe(finished([3.0, 2.0, 1.0], status="pruned"))
    assert list(asha.rungs[0]) == [1.0]
    assert stops_at(asha, [3.0, 2.0, 1.5]) == 2
    for bad in ({"eta": 1}, {"min_steps": 0}, {"bootstrap": -1}, {"eta": 2.5}):
        with pytest.raises(ValueError, match="asha"):
            ASHAPruner(**bad)


# ------------------------------------------------------------------ median, patience
def test_median_waits_for_startup_and_warmup() -> None:
    median = MedianPruner(startup=2, warmup=1)
    median.observe(finished([1.0, 1.0, 1.0]))
    assert stops_at(median, [5.0, 5.0, 5.0]) is None  # one finished run < startup
    median.observe(finished([2.0, 2.0, 2.0]))
    median.observe(finished([9.0, 9.0], status="pruned"))  # no loss: not counted
    assert median.finished == 2
    assert stops_at(median, [5.0, 5.0, 5.0]) == 1  # median 1.5; step 0 is warm-up
    assert stops_at(median, [5.0, 1.2, 5.0]) is None  # best so far 1.2 < 1.5


def test_patience_alone_and_around_another_pruner() -> None:
    assert stops_at(PatientPruner(patience=2), [3.0, 2.0, 1.0, 0.5, 0.4]) is None
    assert stops_at(PatientPruner(patience=2), [3.0, 1.0, 1.5, 1.2, 1.1]) == 4
    never = Pruner()  # the wrapped rule says no: stalled runs go on
    assert stops_at(PatientPruner(never, patience=2), [3.0, 1.0, 1.5, 1.2, 1.1]) is None
    asha = ASHAPruner(min_steps=1, eta=2)
    wrapped = PatientPruner(asha, patience=1)
    wrapped.observe(finished([1.0, 0.5]))
    assert asha.rungs[0] and wrapped.observes  # observe goes through
    with pytest.raises(ValueError, match="patience"):
        PatientPruner(patience=0)


# ------------------------------------------------------------------ Propulate 1.2's surrogates
def test_static_surrogate_stops_curves_clearly_worse_than_the_best_run() -> None:
    static = StaticSurrogate(margin=0.8)
    assert stops_at(static, [9.0, 9.0, 9.0]) is None  # no finished run yet
    static.observe(finished([2.0, 1.0, 0.5]))
    static.observe(finished([4.0, 3.0, 2.0]))  # worse: not the baseline
    assert static.best_loss == 0.5
    assert stops_at(static, [2.4, 1.2, 0.6]) is None  # within 25 % at every step
    assert stops_at(static, [2.4, 1.3, 0.6]) == 1  # 1.3 > 1.0 / 0.8
    with pytest.raises(ValueError, match="margin"):
        StaticSurrogate(margin=1.5)


def test_dynamic_surrogate_stops_a_run_heading_far_above_the_best() -> None:
    space = {"x": (0.0, 1.0)}
    dyn = DynamicSurrogate(space)
    for x in (0.1, 0.3, 0.5, 0.7, 0.9):
        final = 0.2 + x
        dyn.observe(finished([final * 3, final * 2, final * 1.5, final], x=x))
    assert dyn.final_step == 3 and min(dyn.y) == pytest.approx(0.3)
    assert stops_at(dyn, [0.35 * 3, 0.35 * 2, 0.35 * 1.5, 0.35], {"x": 0.15}) is None
    # one value leaves the local model unsure; the second one far above the best stops it
    assert stops_at(dyn, [6.0, 5.9, 5.8, 5.7], {"x": 0.95}) == 1


class OneTwoSurrogate(Surrogate):
    """A Propulate 1.2-style surrogate: cancel any value above the best final loss seen."""

    def __init__(self) -> None:
        self.best = math.inf
        self.calls: list[str] = []

    def start_run(self, ind: Any) -> None:
        self.calls.append("start")

    def cancel(self, loss: float) -> bool:
        return loss > self.best

    def update(self, loss: float) -> None:
        self.calls.append("update")
        self.best = min(self.best, loss)


def test_a_propulate_1_2_surrogate_runs_through_the_adapter() -> None:
    legacy = as_pruner(OneTwoSurrogate())
    assert isinstance(legacy, LegacySurrogate)
    assert stops_at(legacy, [3.0, 2.0]) is None
    legacy.observe(finished([3.0, 2.0]))  # its own run: update only
    legacy.observe(finished([1.5, 1.0]))  # another rank's: replayed
    assert legacy.surrogate.calls == ["start", "update", "start", "update"]
    assert stops_at(legacy, [0.5, 1.2]) == 1
    assert as_pruner(legacy) is legacy
    with pytest.raises(TypeError, match="start_run"):
        as_pruner(object())


# ------------------------------------------------------------------ the registry
def test_pruner_specs_as_strings_and_mappings() -> None:
    assert parse_pruner("asha:min_steps=1,eta=3") == ("asha", {"min_steps": 1.0, "eta": 3})
    assert pruner_text({"type": "asha", "eta": 3, "min_steps": 2}) == "asha:eta=3,min_steps=2"
    assert pruner_text("patience") == "patience:patience=3"
    assert pruner_text("static") == "static"
    p = make_pruner("asha:eta=2,patience=4")
    assert isinstance(p, PatientPruner) and isinstance(p.wrapped, ASHAPruner)
    assert p.patience == 4 and p.wrapped.eta == 2
    assert isinstance(make_pruner("dynamic", space={"x": (0.0, 1.0)}), DynamicSurrogate)
    for bad, match in (
        ("hyperband", "unknown pruner 'hyperband'"),
        ("asha:eta", "KEY=VALUE"),
        ("asha:speed=2", "unknown option 'speed'"),
        ("asha:eta=three", "eta: expected a whole number"),
        ("asha:eta=1", "eta must be"),
        ({"eta": 3}, "needs 'type'"),
        (3, "KEY=VALUE"),
    ):
        with pytest.raises(ValueError, match=match):
            pruner_text(bad)


# ------------------------------------------------------------------ reporting values
class StopAt(Pruner):
    def __init__(self, step: float) -> None:
        self.step = step
        self.started: list[Any] = []

    def start(self, params: Any) -> None:
        self.started.append(dict(params))

    def should_stop(self, curve: Any) -> bool:
        return curve[-1][0] >= self.step


def test_a_generator_is_stopped_and_closed_at_the_pruners_step() -> None:
    closed = []

    def loss(params: Any) -> Iterator[float]:
        try:
            for epoch in range(10):
                yield 1.0 / (epoch + 1)
        finally:
            closed.append(True)

    out = run_objective(loss, {"a": 1}, pruner=StopAt(3))
    assert out.status == "pruned" and out.loss is None and closed == [True]
    assert out.curve == [[0, 1.0], [1, 0.5], [2, 1 / 3], [3, 0.25]]
    assert out.error == "stopped by the pruner at step 3"
    done = run_objective(loss, {"a": 1})  # no pruner: the last value is the loss
    assert done.ok and done.loss == 0.1 and len(done.curve) == 10


def test_a_generator_yielding_a_non_number_fails_naming_the_value() -> None:
    def loss(params: Any) -> Iterator[Any]:
        yield 1.0
        yield "n/a"

    out = run_objective(loss, {})
    assert out.status == "failed"
    assert "intermediate value at step 1" in out.error and "'n/a'" in out.error
    assert out.curve == [[0, 1.0]]
    with pytest.raises(ValueError, match="nan"):
        call_objective(lambda p: (v for v in [math.nan]), {})


def test_a_function_gets_a_reporter_by_its_report_keyword() -> None:
    calls = []

    def loss(params: Any, report: Any = None) -> float:
        for step in (1, 2, 2, 3, 4):  # a repeated step is ignored
            if report(step, float(step)):
                calls.append(step)
                return -1.0
        return 0.0

    assert accepts_report(loss) and not accepts_report(lambda p: 0.0)
    out = run_objective(loss, {}, pruner=StopAt(3), report=True)
    assert out.status == "pruned" and out.curve == [[1, 1.0], [2, 2.0], [3, 3.0]]
    assert calls == [3]
    done = run_objective(loss, {}, report=True)
    assert done.ok and done.loss == 0.0 and [s for s, _ in done.curve] == [1, 2, 3, 4]
    with_task = bind_task(lambda p, t, report=None: report(0, t["v"]) or t["v"], {"v": 2.0})
    assert accepts_report(with_task)
    assert run_objective(with_task, {}, report=True).curve == [[0, 2.0]]
    with pytest.raises(Pruned):
        call_objective(loss, {}, pruner=StopAt(1), report=True)


def test_the_evaluator_starts_the_pruner_and_records_pruned_outcomes() -> None:
    def loss(params: Any) -> Iterator[float]:
        yield from (3.0, 2.0, 1.0)

    pruner = StopAt(1)
    with StopFlag() as flag:
        evaluator = Evaluator(loss, flag, pruner=pruner)
        try:
            out = evaluator(Individual({"a": 1}))
        finally:
            evaluator.close()
    assert pruner.started == [{"a": 1}]
    assert out.status == "pruned" and out.curve == [[0, 3.0], [1, 2.0]] and out.seconds > 0
    assert signal.getsignal(signal.SIGALRM) is not None


def test_nothing_reports_to_a_function_without_report() -> None:
    def loss(params: Any) -> float:
        return 1.0

    out = run_objective(loss, {}, pruner=StopAt(0), report=accepts_report(loss))
    assert out.ok and out.curve == []
