"""Engine parts without MPI: evaluation deadlines, the seen set, stop reasons, imports."""

from __future__ import annotations

import subprocess
import sys
import time

import numpy as np

from propulate.engine.breeder import SeenConfigurations, space_size
from propulate.engine.evaluation import Evaluator
from propulate.engine.result import combine_stop_reasons
from propulate.engine.signals import StopFlag
from propulate.space import Categorical, Float, Integer, SearchSpace


def test_eval_timeout_stops_a_sleeping_objective_and_records_a_traceback():
    with StopFlag() as flag:
        ev = Evaluator(lambda p: time.sleep(60), flag, eval_timeout=0.3)
        try:
            t = time.monotonic()
            out = ev({"x": 1.0})
        finally:
            ev.close()
    assert time.monotonic() - t < 5
    assert out.status == "timeout" and out.loss is None and 0.25 < out.seconds < 5
    assert "eval_timeout" in out.error


def test_time_limit_deadline_interrupts_and_failures_keep_tracebacks():
    with StopFlag() as flag:
        ev = Evaluator(lambda p: time.sleep(60), flag, deadline=time.monotonic() + 0.3)
        try:
            out = ev({"x": 1.0})
        finally:
            ev.close()
        assert out.status == "interrupted" and "time limit" in out.error

        def broken(p):
            raise KeyError("missing")

        bad = Evaluator(broken, flag)({"x": 1.0})
        assert bad.status == "failed" and "KeyError" in bad.traceback
        assert Evaluator(lambda p: True, flag)({"x": 1.0}).status == "failed"  # a bool is no loss


def test_seen_set_draws_unseen_until_a_finite_space_is_exhausted():
    space = SearchSpace({"a": Integer(0, 3), "b": Categorical(("x", "y"))})
    assert space_size(space) == 8
    assert space_size(SearchSpace({"f": Float(0.0, 1.0)})) is None
    seen = SeenConfigurations(space)
    rng = np.random.default_rng(0)
    drawn = []
    while (p := seen.draw_unseen(rng, None)) is not None:
        assert p not in seen
        seen.add(p)
        drawn.append(p)
    assert len(drawn) == 8 and seen.exhausted
    assert {"a": 2.0, "b": "x"} in seen  # keys are cast to the dimension's type


def test_a_bred_child_of_an_infinite_space_is_seen_from_its_breeding_on():
    from propulate.engine.breeder import Breeder
    from propulate.population import Individual
    from propulate.propagators import FunctionPropagator

    space = SearchSpace({"f": Float(0.0, 1.0), "g": Float(0.0, 1.0)})
    seen = SeenConfigurations(space)
    assert seen.take({"f": 0.5, "g": 0.25}) and not seen.take({"f": 0.5, "g": 0.25})
    assert {"f": 0.5, "g": 0.25} in seen and len(seen) == 1
    children = iter([{"f": 0.1, "g": 0.1}, {"f": 0.1, "g": 0.1}, {"f": 0.2, "g": 0.2}])
    copy = FunctionPropagator(lambda inds: Individual(next(children)))
    breeder = Breeder(copy, space, None, np.random.default_rng(0))
    first = breeder([])
    assert dict(first) == {"f": 0.1, "g": 0.1} and first in breeder.seen
    breeder.seen.add(first)  # after its evaluation: nothing more to do
    assert len(breeder.seen) == 1
    # the same configuration bred again (before or after an evaluation) is bred once more
    assert dict(breeder([])) == {"f": 0.2, "g": 0.2} and breeder.duplicates_avoided == 1


def test_run_stop_reason_is_the_most_decisive():
    assert combine_stop_reasons(["budget", "failures", None]) == "failures"
    assert combine_stop_reasons(["generations", "budget"]) == "budget"
    assert combine_stop_reasons([None]) is None


def test_engine_worker_imports_nothing_heavy_of_its_own():
    code = (
        "import sys, propulate.engine.worker; "
        "print(' '.join(m for m in ('scipy.stats', 'pandas', 'GPy', 'matplotlib', 'optuna') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_confirm_also_remeasures_an_outlier_against_its_neighbours():
    from propulate.runs.outcome import Outcome

    class Noisy:
        def __init__(self):
            self.confirmed = []

        def __call__(self, params):
            return params["x"]

        def confirm(self, params, outcome):
            self.confirmed.append(params["x"])
            return Outcome(1.5)

    loss = Noisy()
    with StopFlag() as flag:
        ev = Evaluator(loss, flag)
        # not a new best, neighbours alike: kept as measured, no re-measurement
        assert ev({"x": 2.0}, best=1.0, neighbours=lambda: [1.8, 2.1, 2.2]).loss == 2.0
        # not a new best but 50x its neighbours' median: re-measured before it is recorded
        assert ev({"x": 100.0}, best=1.0, neighbours=lambda: [1.8, 2.1, 2.2]).loss == 1.5
        # a new best is re-measured whatever the neighbours say
        assert ev({"x": 0.5}, best=1.0, neighbours=lambda: [0.4, 0.5, 0.6]).loss == 1.5
        ev.close()
    assert loss.confirmed == [100.0, 0.5]


def test_a_run_freezes_its_population_out_of_the_collector_and_unfreezes_it(tmp_path):
    """A worker freezes what it holds out of the garbage collector's passes as its population
    grows, and hands the collector everything back at the end; a program that froze objects
    itself is left alone."""
    import gc
    import random

    from propulate import Propulator, get_default_propagator

    frozen_during: list[int] = []

    calls = [0]

    def loss(p: dict[str, float]) -> float:
        calls[0] += 1
        if calls[0] % 500 == 0:  # (the count walks the frozen objects)
            frozen_during.append(gc.get_freeze_count())
        return p["x"] ** 2 + p["y"] ** 2

    def run(out: str) -> None:
        prop = get_default_propagator(4, {"x": (-1.0, 1.0), "y": (-1.0, 1.0)}, rng=random.Random(0))
        Propulator(loss, prop, generations=6_000, checkpoint_path=out).propulate()

    assert gc.get_freeze_count() == 0
    run(str(tmp_path / "a"))
    assert max(frozen_during) > 0  # frozen during the run
    assert gc.get_freeze_count() == 0  # and unfrozen after it
    frozen_during.clear()
    gc.freeze()  # the program's own
    try:
        mine = gc.get_freeze_count()
        run(str(tmp_path / "b"))
        # nothing frozen by the run (frozen objects the program dropped meanwhile are gone)
        assert max(frozen_during) <= mine and 0 < gc.get_freeze_count() <= mine
    finally:
        gc.unfreeze()


def test_a_finished_run_is_freed_without_the_cycle_collector(tmp_path):
    """Once the program drops a finished run, its worker and population go at once, by
    reference counting: kept for the cyclic collector, they stayed in memory until its next full
    pass (which then walked them all, inside the next run of the program)."""
    import gc
    import random
    import weakref

    from propulate import Islands, get_default_propagator

    prop = get_default_propagator(4, {"x": (-1.0, 1.0)}, rng=random.Random(0))
    opt = Islands(lambda p: p["x"] ** 2, prop, random.Random(1), generations=50,
                  checkpoint_path=str(tmp_path), num_islands=1)  # fmt: skip
    opt.propulate()
    worker, population = weakref.ref(opt.worker), weakref.ref(opt.worker.population)
    assert len(opt.worker.population) == 50
    gc.collect()
    gc.disable()
    try:
        del opt
        assert worker() is None and population() is None
    finally:
        gc.enable()


def test_an_individual_crosses_the_wire_with_every_field() -> None:
    """``from_wire`` builds the individual without its constructor's defaults: every slot
    must come from the wire (a slot added to ``Individual`` and left out fails here)."""
    from propulate.engine.wire import from_wire, wire_fields
    from propulate.population import FIELDS, Individual

    ind = Individual({"x": 1.5, "n": 3, "c": "a"}, generation=4, rank=1)
    values = {
        "loss": 0.25, "active": True, "island": 2, "current": 1, "migration_steps": 3,
        "evaltime": 10.0, "evalperiod": 0.5, "uid": "s:1:4", "status": "ok", "error": None,
        "state": {"v": [1.0]}, "curve": [[1, 0.5]], "objectives": {"f": 0.25},
    }  # fmt: skip
    for name, value in values.items():
        setattr(ind, name, value)
    back = from_wire(wire_fields(ind))
    assert type(back) is Individual and dict(back) == dict(ind)
    for name in FIELDS:  # every slot but a population's own bookkeeping (it does not travel)
        assert getattr(back, name) == getattr(ind, name), name
    assert from_wire(wire_fields(ind, migration_steps=7)).migration_steps == 7
