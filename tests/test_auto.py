"""``--propagator auto``: the rule table's choice from the run's facts, the race between the
first choice and a challenger, and the choice's reason in ``run.json``."""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from propulate.plugins.facts import RunFacts
from propulate.population import Individual
from propulate.propagators.auto import Auto
from propulate.propagators.auto_rules import RULES, Choice, choose, rules_table
from propulate.propagators.base import Propagator
from propulate.propagators.registry import build_propagator
from propulate.settings import EvolveSettings
from propulate.space import Categorical, Float, Integer, SearchSpace
from propulate.testing import check_propagator
from tests.mpi_utils import run_mpi

CONTINUOUS = SearchSpace({f"x{i}": Float(-5.0, 5.0) for i in range(10)})
MIXED = SearchSpace(
    {"a": Categorical(("p", "q", "r")), "b": Categorical(("u", "v")), "n": Integer(1, 9)}
)
BRANCHES = SearchSpace(
    {"kind": Categorical(("a", "b")), "x": Float(0.0, 1.0), "y": Float(0.0, 1.0)},
    conditions={"x": {"kind": "a"}, "y": {"kind": "b"}},
)
ONE_D = SearchSpace({"x": Float(0.0, 1.0)})
THREE_D = SearchSpace({"x": Float(0.0, 1.0), "y": Float(0.0, 1.0), "n": Integer(1, 64)})
REPO = Path(__file__).resolve().parents[1]


def _facts(space: SearchSpace = CONTINUOUS, ranks: int = 2, **settings: object) -> RunFacts:
    return RunFacts.of(EvolveSettings(**settings), space, ranks)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("space", "settings", "first", "challenger"),
    [
        (CONTINUOUS, {"max_evaluations": 200}, "bo", None),
        (CONTINUOUS, {"max_evaluations": 10_000}, "cma", "ga"),
        (CONTINUOUS, {"time_limit": 60.0}, "cma", "ga"),
        (CONTINUOUS, {"max_evaluations": 500, "objectives": "a:min,b:max"}, "ga:pop_size=40", None),
        (CONTINUOUS, {"max_evaluations": 500, "objectives": "a:min:1,b:max:1"}, "cma", None),
        (CONTINUOUS, {"max_evaluations": 1000}, "cma", None),
        (CONTINUOUS, {"max_evaluations": 1490}, "cma", None),
        (CONTINUOUS, {"max_evaluations": 1500}, "cma", "ga"),
        (CONTINUOUS, {"max_evaluations": 500, "pruner": "asha"}, "tpe", None),
        (MIXED, {"max_evaluations": 500}, "ga", None),
        (BRANCHES, {"max_evaluations": 300}, "bo", "ga"),
        (BRANCHES, {"max_evaluations": 3000}, "ga", None),
        (ONE_D, {"max_evaluations": 200}, "bo", None),
        (ONE_D, {"max_evaluations": 60}, "bo", None),
        (THREE_D, {"max_evaluations": 300}, "bo", None),
        (THREE_D, {"max_evaluations": 600}, "cma", "ga"),
        (THREE_D, {"max_evaluations": 400}, "cma", None),
        (ONE_D, {"max_evaluations": 250}, "cma", "ga"),
        (ONE_D, {"max_evaluations": 5000}, "cma", "ga"),
        (ONE_D, {"time_limit": 60.0}, "cma", "ga"),
    ],
)
def test_the_rule_table_chooses_from_the_facts(
    space: SearchSpace, settings: dict, first: str, challenger: str | None
) -> None:
    choice = choose(_facts(space, **settings))
    assert (choice.first, choice.challenger) == (first, challenger)
    assert choice.reason.startswith(f"auto chose {first}: ")


def test_the_race_is_a_share_of_the_budget_and_the_reason_says_so() -> None:
    choice = choose(_facts(max_evaluations=10_000))
    assert choice.race == 2_000
    assert choice.reason == (
        "auto chose cma: 10 continuous parameters, 10,000 evaluations, 2 workers (continuous "
        "or integer parameters, at least 150 evaluations per parameter or no evaluation budget; "
        "probes the landscape over 81 evaluations first, ga if separable with many local "
        "minima; races ga over 2,000 evaluations)"
    )
    assert choose(_facts(max_evaluations=10_000), race_share=0.0).challenger is None


@pytest.mark.parametrize(
    ("space", "settings", "probe"),
    [
        (CONTINUOUS, {"max_evaluations": 1000}, 0),  # 81 evaluations: more than 5 %
        (CONTINUOUS, {"max_evaluations": 1620}, 81),
        (CONTINUOUS, {"max_evaluations": 10_000}, 81),
        (CONTINUOUS, {"time_limit": 60.0}, 81),
        (CONTINUOUS, {"max_evaluations": 2000, "islands": 2}, 0),  # each island probes
        (CONTINUOUS, {"max_evaluations": 4000, "islands": 2}, 81),
        (CONTINUOUS, {"max_evaluations": 500, "pruner": "asha"}, 0),
        (MIXED, {"max_evaluations": 5000}, 0),
        (BRANCHES, {"max_evaluations": 5000}, 0),
        (ONE_D, {"max_evaluations": 5000}, 0),
        (THREE_D, {"max_evaluations": 5000}, 81),
    ],
)
def test_the_landscape_probe_comes_first_where_it_costs_at_most_a_twentieth(
    space: SearchSpace, settings: dict, probe: int
) -> None:
    choice = choose(_facts(space, **settings))
    assert choice.probe == probe
    assert choice.probe_pick == ("ga" if probe else None)
    assert ("probes the landscape" in choice.reason) == bool(probe)


def test_the_docs_show_the_rule_table() -> None:
    page = (REPO / "docs" / "auto.md").read_text()
    assert rules_table() in page, (
        "docs/auto.md: paste propulate.propagators.auto_rules.rules_table()"
    )
    assert len(RULES) >= 4


class _Fixed(Propagator):
    """Draws around a fixed centre: ``good`` near the optimum at 0, the other far from it."""

    def __init__(self, space: SearchSpace, centre: float, rng: random.Random) -> None:
        super().__init__(-1, 1, rng)
        self.space, self.centre = space, centre

    def __call__(self, inds: Sequence[Individual]) -> Individual:
        return Individual(
            {n: min(max(self.centre + self.rng.gauss(0, 0.3), -5.0), 5.0) for n in self.space.names}
        )


def _race(first_centre: float, second_centre: float) -> tuple[Auto, list[str]]:
    space = SearchSpace({"x": Float(-5.0, 5.0), "y": Float(-5.0, 5.0)})
    rng = random.Random(0)
    members = {"a": _Fixed(space, first_centre, rng), "b": _Fixed(space, second_centre, rng)}
    auto = Auto(space, members, Choice("a", "b", 20, "test"), rng)
    bred = []
    for k in range(60):
        child = auto([])
        bred.append(child.state["auto"])
        child.loss, child.status = float(child["x"] ** 2 + child["y"] ** 2), "ok"
        child.rank, child.generation = 0, k
        auto.observe(child)
    return auto, bred


def test_the_race_switches_to_a_challenger_that_clearly_leads() -> None:
    auto, bred = _race(4.0, 0.0)
    assert bred[:20].count("a") == 10 and bred[:20].count("b") == 10, "the race alternates"
    assert auto.leader == "b" and auto.switched_at == 20
    assert set(bred[20:]) == {"b"}, "after the race only the leader breeds"


def test_the_race_keeps_a_first_choice_that_leads() -> None:
    auto, bred = _race(0.0, 4.0)
    assert auto.leader == "a" and set(bred[20:]) == {"a"}


def _probed(
    loss: Callable[[Individual], float], workers: int = 2, race: int = 20, steps: int = 150
) -> tuple[list[Auto], list[Individual]]:
    """Workers of one island (``Auto`` of ranks 0, 1, ...) breeding in turn, each seeing every
    evaluation at once: the landscape probe, then the race of ``a`` and ``b`` (the probe's pick)."""
    space = SearchSpace({"x": Float(-5.0, 5.0), "y": Float(-5.0, 5.0)})
    run = RunFacts(dim=2, continuous=2, workers=workers, seed=3)
    autos = []
    for rank in range(workers):
        rng = random.Random(rank)
        members = {"a": _Fixed(space, 4.0, rng), "b": _Fixed(space, 0.0, rng)}
        choice = Choice("a", "b", race, "test", probe=81, probe_pick="b")
        auto = Auto(space, members, choice, rng, run)
        auto.bind(0, rank)
        autos.append(auto)
    children: list[Individual] = []
    for k in range(steps):
        child = autos[k % workers]([])
        child.loss, child.status = loss(child), "ok"
        child.rank, child.generation = k % workers, k
        children.append(child)
        for auto in autos:
            auto.observe(child)
    return autos, children


def _rastrigin(ind: Individual) -> float:
    return sum(v * v - 10.0 * math.cos(2.0 * math.pi * v) + 10.0 for v in (ind["x"], ind["y"]))


def _bred(children: list[Individual]) -> list[str]:
    return [c.state["auto"] for c in children]


def test_the_probe_picks_the_ga_for_a_separable_function_with_many_minima(caplog) -> None:
    caplog.set_level("INFO", logger="propulate")
    autos, children = _probed(_rastrigin)
    bred = _bred(children)
    size = len(autos[0].probe)
    assert bred[:size] == ["probe"] * size, "the workers share the design: each point once"
    points = [c.state["probe"][1] for c in children[:size]]
    assert sorted(points) == list(range(size))
    assert all(c.state["probe"][0] == 0 for c in children[:size]), "the island's design"
    assert set(bred[size:]) == {"b"}, "the probe's pick breeds the rest, without a race"
    for auto in autos:
        assert auto.leader == "b" and auto.switched_at == size and not auto.racing
        assert auto.verdict is not None and auto.verdict.separable_multimodal
    assert f"auto probed the landscape over {size} evaluations: separable" in caplog.text


def test_after_a_probe_that_finds_no_such_function_the_race_runs() -> None:
    autos, children = _probed(lambda ind: (ind["x"] + ind["y"]) ** 2 + 0.1 * ind["x"] ** 2)
    bred = _bred(children)
    size = len(autos[0].probe)
    assert bred[:size] == ["probe"] * size
    assert autos[0].verdict is not None and not autos[0].verdict.separable_multimodal
    race = bred[size : size + 20]
    assert race.count("a") == race.count("b") == 10, "the race follows the probe"
    assert autos[0].switched_at == size + 20 and autos[0].leader == "b"


def test_a_resumed_worker_judges_from_the_probes_records() -> None:
    autos, children = _probed(_rastrigin, steps=100)
    space = autos[0].space
    rng = random.Random(9)
    members = {"a": _Fixed(space, 4.0, rng), "b": _Fixed(space, 0.0, rng)}
    fresh = Auto(space, members, autos[0].choice, rng, autos[0].run)
    fresh.bind(0, 1)
    for child in children:  # the records, as the engine replays them on a resume
        fresh.observe(child)
    assert not fresh.probing and fresh.leader == "b"
    assert {fresh([]).state["auto"] for _ in range(5)} == {"b"}


def test_a_lost_probe_point_delays_the_verdict_to_twice_the_probe() -> None:
    space = SearchSpace({"x": Float(-5.0, 5.0), "y": Float(-5.0, 5.0)})
    rng = random.Random(0)
    members = {"a": _Fixed(space, 4.0, rng), "b": _Fixed(space, 0.0, rng)}
    auto = Auto(space, members, Choice("a", "b", 20, "t", probe=81, probe_pick="b"), rng)
    size = len(auto.probe)
    for k in range(3 * size):
        child = auto([])
        if child.state.get("probe", [0, -1])[1] == 4:
            continue  # its worker died: never evaluated, never seen
        child.loss, child.status = _rastrigin(child), "ok"
        child.rank, child.generation = 0, k
        auto.observe(child)
        if k == size + 5:
            assert auto.probing, "still waiting for the lost point"
            assert auto.shares_design, "the engine shares each probe point at once"
    assert not auto.probing and auto.switched_at == 2 * size and auto.leader == "b"
    assert not auto.shares_design


def test_auto_passes_the_contract_checks() -> None:
    facts = _facts(max_evaluations=400)
    check_propagator(build_propagator("auto:race=0.2", CONTINUOUS, random.Random(2), facts))
    # with the landscape probe first, in a space of every kind of parameter
    mixed = SearchSpace(
        {
            **{f"x{i}": Float(-5.0, 5.0) for i in range(8)},
            "n": Integer(1, 9),
            "k": Categorical(("a", "b")),
        }
    )
    probing = build_propagator("auto", mixed, random.Random(2), _facts(mixed, max_evaluations=5000))
    assert isinstance(probing, Auto) and probing.choice.probe == 81
    check_propagator(probing)


def test_a_small_space_hands_the_last_share_to_nelder_mead_at_the_best_point(caplog) -> None:
    facts = _facts(ONE_D, max_evaluations=20)
    choice = choose(facts)
    assert (choice.first, choice.challenger, choice.then, choice.handoff) == ("bo", None, "nm", 14)
    assert choice.reason.endswith("; nm polishes after 14 evaluations)")
    auto = build_propagator("auto", ONE_D, random.Random(0), facts)
    assert isinstance(auto, Auto)
    bred, best = [], None
    caplog.set_level("INFO", logger="propulate")
    for k in range(20):
        child = auto([])
        bred.append(child.state["auto"])
        if bred[-1] == "nm" and bred.count("nm") == 1:
            # Nelder-Mead's simplex starts at the best configuration bo found (known: not
            # proposed again), its first proposal one edge (0.1 of the range) away from it
            assert best is not None and abs(child["x"] - best[1]) == pytest.approx(0.1)
        child.loss, child.status = float((child["x"] - 0.3) ** 2), "ok"
        child.rank, child.generation = 0, k
        if best is None or child.loss < best[0]:
            best = (child.loss, child["x"])
        auto.observe(child)
    assert bred[:14] == ["bo"] * 14 and bred[14:] == ["nm"] * 6
    assert "auto hands over to nm after 14 evaluations" in caplog.text
    check_propagator(build_propagator("auto", ONE_D, random.Random(1), facts))


def test_without_a_race_auto_is_its_choice_itself() -> None:
    """No race: the member itself, so a run breeds exactly as with the method by name."""
    from propulate.propagators.bo import BO
    from propulate.propagators.tpe import TPE
    from propulate.testing import proposals

    built = build_propagator("auto", CONTINUOUS, random.Random(0), _facts(max_evaluations=200))
    assert isinstance(built, BO)
    pruned = _facts(max_evaluations=2000, pruner="asha")
    assert isinstance(build_propagator("auto", CONTINUOUS, random.Random(0), pruned), TPE)
    several = proposals(MIXED, "auto", 40, seed=5)[0]
    assert several == proposals(MIXED, "ga", 40, seed=5)[0]


def _auto_run(
    tmp_path: Path, budget: int, *args: str, function: str = "sphere"
) -> tuple[str, dict, list[dict], str]:
    """``evolve`` of the paper's ``function`` (the sphere: over two parameters) on 2 ranks with
    ``args`` (without: the default propagator, ``auto``): its output, ``run.json``'s propagator,
    the records and what ``status`` prints."""
    import subprocess
    import sys

    from propulate.compat.history import iter_records
    from propulate.problems.benchmark import FUNCTIONS

    limits = FUNCTIONS[function].limits
    (tmp_path / "space.yaml").write_text(
        "".join(f"{k}: {{type: float, low: {lo}, high: {hi}}}\n" for k, (lo, hi) in limits.items())
    )
    out = tmp_path / "run"
    proc = run_mpi(
        2,
        ["-m", "propulate", "evolve", "--objective", f"propulate.problems.benchmark:{function}"]
        + ["--space", "space.yaml", "--out", str(out), "--max-evaluations", str(budget), *args],
        cwd=tmp_path,
        timeout=300,
    )
    meta = json.loads((out / "run.json").read_text())["propagator"]
    status = subprocess.run(
        [sys.executable, "-m", "propulate", "status", str(out)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return proc.stdout, meta, list(iter_records(out)), status


@pytest.mark.mpi
def test_run_json_and_the_log_say_what_auto_chose(tmp_path: Path) -> None:
    stdout, meta, records, status = _auto_run(tmp_path, 1000, "--propagator", "auto")
    assert meta["first"] == "cma" and meta["challenger"] == "ga" and meta["race"] == 200
    assert meta["reason"] in stdout
    bred = [(r.get("state") or {}).get("auto") for r in records]
    assert {"cma", "ga"} <= set(bred)
    counts = f"(cma bred {bred.count('cma')}, ga bred {bred.count('ga')})"
    assert f"auto: cma, raced ga {counts}" in status


@pytest.mark.mpi
def test_run_json_status_and_the_log_show_the_polish(tmp_path: Path) -> None:
    stdout, meta, records, status = _auto_run(tmp_path, 40)
    assert (meta["first"], meta["then"], meta["handoff"]) == ("bo", "nm", 28)
    assert meta["reason"] in stdout  # the log's hand-over line: the unit test above
    bred = [(r.get("state") or {}).get("auto") for r in records]
    assert bred.count("nm") >= 6 and bred.count("bo") >= 26, bred
    # the two workers polish the same best point along different directions: no repeats
    params = [json.dumps(r["params"], sort_keys=True) for r in records]
    assert len(set(params)) == len(params) == 40
    counts = f"(bo bred {bred.count('bo')}, nm bred {bred.count('nm')})"
    assert f"auto: bo, then nm {counts}" in status


@pytest.mark.mpi
def test_run_json_status_and_the_log_show_the_probe(tmp_path: Path) -> None:
    """The paper's Schwefel function (10-D, separable, many local minima) at 200 evaluations per
    parameter: the probe comes first and hands the run to the GA, without a race."""
    stdout, meta, records, status = _auto_run(tmp_path, 2000, function="schwefel")
    assert (meta["first"], meta["challenger"], meta["probe"], meta["probe_pick"]) == (
        "cma",
        "ga",
        81,
        "ga",
    )
    assert meta["reason"] in stdout
    assert "auto probed the landscape over" in stdout and "switches to ga" in stdout
    bred = [(r.get("state") or {}).get("auto") for r in records]
    probes = [r["state"]["probe"][1] for r in records if r["state"].get("auto") == "probe"]
    assert 60 <= len(set(probes)) <= 81 and len(probes) <= len(set(probes)) + 4
    assert bred.count("ga") >= 2000 - 81 - 10, "the GA breeds nearly all of the rest"
    counts = ", ".join(f"{m} bred {bred.count(m)}" for m in ("cma", "ga", "probe"))
    assert f"auto: cma, probed for ga, raced ga ({counts})" in status
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["bred"] == {m: bred.count(m) for m in ("cma", "ga", "probe") if m in bred}
