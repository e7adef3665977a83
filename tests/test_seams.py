"""The extension seams: propagators (declared space, outcome hook, per-individual state,
``check_propagator``), pruners and the ``pruned`` status, report sections, the methods table."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from propulate.compat.history import iter_records
from propulate.engine.config import EngineConfig
from propulate.population import Individual
from propulate.propagators import get_default_propagator
from propulate.propagators.base import Propagator
from propulate.propagators.registry import PROPAGATORS, make_propagator
from propulate.pruners import Pruner
from propulate.settings import EvolveSettings
from propulate.space import Categorical, Float, Integer, SearchSpace
from propulate.testing import check_propagator
from tests.mpi_utils import SCRIPTS, run_mpi

SPACE = SearchSpace(
    {
        "x": Float(-5.0, 5.0),
        "lr": Float(1e-4, 1.0, log=True),
        "n": Integer(1, 9),
        "act": Categorical(("relu", "tanh", "gelu")),
    }
)


# ------------------------------------------------------------------ check_propagator
@pytest.mark.parametrize("name", sorted(PROPAGATORS))
def test_every_registered_propagator_passes_the_check(name: str) -> None:
    check_propagator(make_propagator(name, SPACE, EvolveSettings(), random.Random(3)))


def test_the_propulate_12_default_chain_passes_the_check() -> None:
    check_propagator(get_default_propagator(4, SPACE.limits, rng=random.Random(0)))


class Base(Propagator):
    """A correct random propagator that the broken ones below spoil one way each."""

    def __init__(self, rng: random.Random) -> None:
        super().__init__(-1, 1, rng)
        self.space = SPACE

    def __call__(self, inds: Any) -> Individual:
        u = [self.rng.random() for _ in range(SPACE.dim)]
        return Individual(SPACE.decode(u))


class ModifiesInputs(Base):
    def __call__(self, inds: Any) -> Individual:
        for ind in list(inds)[:1]:
            ind["x"] = 0.0
        return super().__call__(inds)


class OutOfBounds(Base):
    def __call__(self, inds: Any) -> Individual:
        child = super().__call__(inds)
        child["x"] = 7.5
        return child


class BadState(Base):
    def __call__(self, inds: Any) -> Individual:
        child = super().__call__(inds)
        child.state = {"velocity": {1, 2}}
        return child


class GlobalRandom(Base):
    def __call__(self, inds: Any) -> Individual:
        return Individual(SPACE.decode([random.random() for _ in range(SPACE.dim)]))


class ReturnsParent(Base):
    def __call__(self, inds: Any) -> Individual:
        return inds[0] if len(inds) else super().__call__(inds)


class Undeclared(Base):
    def __init__(self, rng: random.Random) -> None:
        super().__init__(rng)
        self.space = None


class ObserveFails(Base):
    def observe(self, individual: Individual) -> None:
        assert individual.status == "ok", "cannot learn from a failure"


@pytest.mark.parametrize(
    ("cls", "message"),
    [
        (ModifiesInputs, "must not modify its inputs"),
        (OutOfBounds, "outside its dimension"),
        (BadState, "JSON-ready"),
        (GlobalRandom, "bred different children"),
        (ReturnsParent, "fresh individuals"),
        (Undeclared, "declare its search space"),
        (ObserveFails, "cannot learn from a failure"),
    ],
)
def test_the_check_names_the_broken_contract(cls: type, message: str) -> None:
    with pytest.raises(AssertionError, match=message):
        check_propagator(cls(random.Random(0)))


def test_composites_declare_their_stages_space_and_forward_observe() -> None:
    class Listening(Base):
        def __init__(self, rng: random.Random) -> None:
            super().__init__(rng)
            self.seen: list[str] = []

        def observe(self, individual: Individual) -> None:
            self.seen.append(individual.uid)

    from propulate.propagators import Compose, Conditional

    inner = Listening(random.Random(0))
    chain = Conditional(2, Compose([inner]), Base(random.Random(1)))
    assert chain.space is SPACE and chain.observes
    assert not get_default_propagator(4, SPACE.limits).observes
    ind = Individual({"x": 0.0, "lr": 0.1, "n": 1, "act": "relu"})
    ind.uid = "u1"
    chain.observe(ind)
    assert inner.seen == ["u1"]


# ------------------------------------------------------------------ state over MPI and resume
@pytest.mark.mpi
def test_state_reaches_the_peers_and_the_records_and_is_observed_again_on_resume(
    tmp_path: Path,
) -> None:
    run_mpi(2, [str(SCRIPTS / "stateful_run.py"), str(tmp_path), "20"])
    records = list(iter_records(tmp_path))
    assert len(records) == 20
    assert all(r["state"]["born"] == r["rank"] for r in records)  # written with the record
    written = sorted((r["state"]["born"], r["state"]["n"]) for r in records)
    first = [json.loads(p.read_text()) for p in sorted(tmp_path.glob("observed-*.json"))]
    assert len(first) == 2
    for seen in first:  # each rank observed every child, its peer's with the state it was sent
        assert sorted((s["born"], s["n"]) for s in seen["all"]) == written
        assert seen["resumed"] == []
    for p in tmp_path.glob("observed-*.json"):
        p.unlink()
    run_mpi(2, [str(SCRIPTS / "stateful_run.py"), str(tmp_path), "30"])
    resumed = [json.loads(p.read_text())["resumed"] for p in tmp_path.glob("observed-*.json")]
    assert len(resumed) == 2
    for states in resumed:  # the resume shows every earlier record, state included
        assert sorted((s["born"], s["n"]) for s in states) == sorted(
            (r["state"]["born"], r["state"]["n"]) for r in records
        )


# ------------------------------------------------------------------ pruners
class StopAboveOne(Pruner):
    """Stops an evaluation whose second value is above 1; counts the curves it observes."""

    def __init__(self) -> None:
        self.curves: list[list[list[float]]] = []

    def should_stop(self, curve: Any) -> bool:
        return len(curve) >= 2 and curve[-1][1] > 1.0

    def observe(self, individual: Any) -> None:
        if individual.curve:
            self.curves.append(individual.curve)


def epochs(params: dict[str, float]) -> Any:
    """A generator objective: five epochs, decreasing to x^2 (above 1 early for |x| > 1)."""
    for epoch in range(5):
        yield params["x"] ** 2 + 1.0 / (epoch + 1)


def run_engine(tmp_path: Path, loss: Any, pruner: Any, budget: int, **extra: Any) -> Any:
    from mpi4py import MPI

    from propulate.engine.worker import Worker

    space = SearchSpace({"x": Float(-3.0, 3.0)})
    rng = random.Random(5)
    config = EngineConfig(
        checkpoint_path=tmp_path,
        max_evaluations=budget,
        space=space,
        pruner=pruner,
        progress_interval=1e9,
        **extra,
    )
    worker = Worker(loss, get_default_propagator(4, space, rng=rng), rng, config, MPI.COMM_SELF)
    worker.run()
    return worker


def test_a_pruned_evaluation_is_recorded_with_its_curve_and_neither_bred_nor_a_failure(
    tmp_path: Path,
) -> None:
    pruner = StopAboveOne()
    worker = run_engine(tmp_path, epochs, pruner, 40, failure_limit=2)
    records = list(iter_records(tmp_path))
    assert len(records) == 40 and worker.stop_reason == "budget"  # no failure stop
    pruned = [r for r in records if r["status"] == "pruned"]
    done = [r for r in records if r["status"] == "ok"]
    assert pruned and done
    for r in pruned:
        assert r["loss"] is None and len(r["curve"]) == 2 and r["curve"][-1][1] > 1.0
        assert "step 1" in r["error"]
    for r in done:
        assert [s for s, _ in r["curve"]] == [0, 1, 2, 3, 4]
        assert r["loss"] == pytest.approx(r["curve"][-1][1])
    active = {ind.uid for ind in worker.population.active(0)}
    assert not any(ind.uid in active for ind in worker.population if ind.status == "pruned")
    assert worker.population.failures == 0
    assert len(pruner.curves) == 40  # the hook saw every evaluation's curve


def test_a_generator_that_yields_a_non_number_fails_naming_the_value(tmp_path: Path) -> None:
    def bad(params: dict[str, float]) -> Any:
        yield 1.0
        yield "diverged"

    run_engine(tmp_path, bad, None, 3, failure_limit=0)
    records = list(iter_records(tmp_path))
    assert {r["status"] for r in records} == {"failed"}
    assert all("'diverged'" in r["error"] and "step 1" in r["error"] for r in records)


# ------------------------------------------------------------------ statuses
def test_every_status_has_one_meaning_everywhere() -> None:
    from propulate.runs.status import FAILURE_STATUSES, LOSS_STATUSES, STATUSES, is_failure

    assert LOSS_STATUSES == {"ok"}
    assert FAILURE_STATUSES == {"failed", "timeout"}
    assert not is_failure("pruned") and not is_failure("interrupted")
    assert is_failure(None) and is_failure("no such status")
    assert set(STATUSES) == {"ok", "failed", "timeout", "interrupted", "pruned"}


# ------------------------------------------------------------------ report sections
def test_a_new_report_section_is_one_class_and_one_line(tmp_path: Path, monkeypatch) -> None:
    import pandas as pd

    from propulate.report import html as page
    from propulate.report.section import Figure, ReportInputs, SectionContent
    from propulate.report.sections import SECTIONS

    class Extra:
        name = "extra"
        text_files = ("extra.txt",)

        def __init__(self, show: bool) -> None:
            self.show = show

        def build(self, inputs: ReportInputs) -> SectionContent | None:
            if not self.show:
                return None
            return SectionContent(
                f"<h2>Extra for {inputs.title}</h2>",
                [Figure("extra_fig", b"\x89PNG fake")],
                after="<p>after</p>",
                texts={"extra.txt": "extra table\n"},
            )

    summary = tmp_path / "summary.csv"
    pd.DataFrame(
        {"task": ["t"], "method": ["propulate"], "evaluations": [1], "wall_time": [1.0]}
    ).to_csv(summary, index=False)
    figures = tmp_path / "figures"
    monkeypatch.setattr(page, "SECTIONS", [*SECTIONS, Extra(True)])
    out = page.build_report(summary, [], tmp_path / "r.html", figures=figures, title="c")
    text = out.read_text()
    assert text.index("<h2>Best configurations</h2>") < text.index("<h2>Extra for c</h2>")
    assert 'alt="extra_fig"' in text and text.index("extra_fig") < text.index("<p>after</p>")
    assert (figures / "extra_fig.png").read_bytes() == b"\x89PNG fake"
    assert (figures / "extra.txt").read_text() == "extra table\n"
    monkeypatch.setattr(page, "SECTIONS", [*SECTIONS, Extra(False)])
    page.build_report(summary, [], tmp_path / "r.html", figures=figures, title="c")
    assert "Extra" not in (tmp_path / "r.html").read_text()
    assert not (figures / "extra.txt").exists(), "a stale text file of the section is removed"


# ------------------------------------------------------------------ methods and layout
def test_every_search_method_runs_and_names_its_settings() -> None:
    import importlib

    from propulate.methods import METHODS, SEARCH_METHODS

    for name in SEARCH_METHODS:
        method = METHODS[name]
        module, _, function = method.runner.partition(":")
        assert callable(getattr(importlib.import_module(module), function))
        assert {"method", "seed", "max_evaluations"} <= method.settings
    assert {m.stage for m in METHODS.values()} <= {"evolve", "mla", "tla1", "tla2", "measure"}


def test_the_engine_and_the_evolve_command_do_not_depend_on_the_12_front_ends() -> None:
    from tests.layout_utils import import_graph

    graph = import_graph()
    front_ends = {"propulate.compat.islands", "propulate.compat.propulator"}

    def reaches(start: str) -> set[str]:
        seen, todo = set(), [start]
        while todo:
            node = todo.pop()
            for nxt in graph.get(node, ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    for module in ("propulate.engine.run", "propulate.engine.worker", "propulate.cli.evolve"):
        assert not reaches(module) & front_ends, module
