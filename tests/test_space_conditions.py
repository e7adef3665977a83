"""Conditional parameters and forbidden clauses: parsing, consistency, the GA's operators,
random search and Optuna proposing only valid configurations, and unconditional spaces bred
exactly as before (a golden file computed on the code before conditions existed)."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import random
from pathlib import Path

import numpy as np
import pytest
import yaml

from propulate.population import Individual
from propulate.propagators import CrossoverUniform, PointMutation
from propulate.propagators.base import Propagator
from propulate.propagators.registry import make_propagator
from propulate.settings import EvolveSettings
from propulate.space import SearchSpace, SpaceError
from propulate.space.search import INACTIVE
from propulate.testing import check_propagator, proposals

DATA = Path(__file__).parent / "data"
REPO = Path(__file__).resolve().parents[1]
SHIPPED = REPO / "examples" / "digits_optimizers" / "space.yaml"

#: The space with forbidden clauses that benchmarks/conditional.py measures too.
TILES = yaml.safe_load((REPO / "benchmarks" / "spaces" / "tiles.yaml").read_text())


def _valid(space: SearchSpace, params: dict) -> bool:
    return space.in_bounds(params) and space.satisfies(params)


def test_when_and_forbidden_are_parsed_and_round_trip() -> None:
    space = SearchSpace.from_dict(TILES)
    assert set(space.conditions) == {"tx", "ty", "extra"}
    assert space.conditions["extra"].tests[0].op == ">="
    assert SearchSpace.from_dict(space.to_dict()).to_dict() == space.to_dict()
    assert (
        space.satisfies({"algo": "blocked", "tx": 32, "ty": 32, "unroll": 1, "depth": 1}) is False
    )
    assert space.satisfies({"algo": "blocked", "tx": 31, "ty": 32, "unroll": 1, "depth": 1})
    # a clause naming an inactive parameter forbids nothing
    assert space.satisfies({"algo": "naive", "unroll": 2, "depth": 1})
    assert not space.satisfies({"algo": "naive", "unroll": 5, "depth": 1})


@pytest.mark.parametrize(
    ("clause", "message"),
    [
        ("__import__('os').system('true')", "Call"),
        ("tx.real > 1", "Attribute"),
        ("nope > 1", "unknown parameter 'nope'"),
        ("tx >", "not an expression"),
        ("(lambda: 1)()", "Call"),
    ],
)
def test_forbidden_clauses_run_no_python_code(clause: str, message: str) -> None:
    with pytest.raises(SpaceError, match=message):
        SearchSpace.from_dict({**TILES, "forbidden": [clause]})


def test_bad_conditions_are_refused_with_one_line() -> None:
    base = dict(TILES["parameters"])
    with pytest.raises(SpaceError, match="unknown parameter 'algoo'"):
        SearchSpace({**base, "tx": {"type": "int", "low": 1, "high": 2, "when": {"algoo": "x"}}})
    with pytest.raises(SpaceError, match="not a choice"):
        SearchSpace({**base, "tx": {"type": "int", "low": 1, "high": 2, "when": {"algo": "x"}}})
    with pytest.raises(SpaceError, match="cycle"):
        SearchSpace(
            {
                "a": {"type": "int", "low": 1, "high": 2, "when": {"b": 1}},
                "b": {"type": "int", "low": 1, "high": 2, "when": {"a": 1}},
            }
        )


def test_inactive_parameters_are_absent_and_keyed_out() -> None:
    space = SearchSpace.from_dict(TILES)
    naive = {"algo": "naive", "unroll": 2, "depth": 1}
    assert space.in_bounds(naive)
    assert not space.in_bounds({**naive, "tx": 4})  # an inactive parameter present
    assert not space.in_bounds({"algo": "blocked", "unroll": 2, "depth": 1})  # tx missing
    # the no-repeat key ignores inactive values: the same configuration to the objective
    assert space.key({**naive, "tx": 4}) == space.key(naive) == space.key({**naive, "tx": 9})
    u = space.encode(naive)
    assert u[space.names.index("tx")] == INACTIVE and u[space.names.index("extra")] == INACTIVE
    assert space.decode(u) == {"algo": "naive", "unroll": 2, "depth": 1}
    rng = np.random.default_rng(0)
    for _ in range(200):
        p = space.sample(rng)
        assert _valid(space, p)
        assert ("tx" in p) == (p["algo"] == "blocked") and ("extra" in p) == (p["depth"] >= 3)


def test_crossover_switching_branch_inherits_or_samples_the_branch() -> None:
    space = SearchSpace.from_dict(TILES)
    a = Individual({"algo": "naive", "unroll": 2, "depth": 4, "extra": 0.3})
    b = Individual({"algo": "blocked", "tx": 8, "ty": 16, "unroll": 3, "depth": 1})
    mutate = PointMutation(space, probability=0.0, rng=random.Random(0))  # repairs only
    cross = CrossoverUniform(rng=random.Random(1))
    for _ in range(200):
        child = mutate([cross([a, b])])
        assert space.in_bounds(child), child
        if child["algo"] == "blocked":  # only b had tx, ty: inherited
            assert (child["tx"], child["ty"]) == (8, 16)
        if child["depth"] == 4:  # only a had extra
            assert child["extra"] == 0.3


def test_mutation_switching_branch_samples_the_new_branch() -> None:
    space = SearchSpace.from_dict(TILES)
    ind = Individual({"algo": "naive", "unroll": 2, "depth": 1})
    mutate = PointMutation(space, points=3, rng=random.Random(3))
    switched = [c for c in (mutate(ind) for _ in range(300)) if c["algo"] == "blocked"]
    assert switched and all(space.in_bounds(c) for c in switched)
    assert len({(c["tx"], c["ty"]) for c in switched}) > 10  # fresh draws, not a constant


@pytest.mark.parametrize("method", ["ga", "random", "optuna"])
@pytest.mark.parametrize("which", ["shipped", "forbidden"])
def test_every_method_proposes_only_valid_configurations(method: str, which: str) -> None:
    if method == "optuna":
        pytest.importorskip("optuna")
    space = SearchSpace.from_yaml(SHIPPED) if which == "shipped" else SearchSpace.from_dict(TILES)
    n = 300 if method == "optuna" else 2000
    configs, losses, _ = proposals(space, method, n, seed=4)
    assert len(configs) == n
    bad = [p for p in configs if not _valid(space, p)]
    assert not bad, bad[:3]
    keys = {space.key(p) for p in configs}
    if method != "optuna":  # the engine's no-repeat rule keys on active values
        assert len(keys) == n


@pytest.mark.parametrize("name", ["ga", "random", "tpe", "portfolio"])
@pytest.mark.parametrize("which", ["shipped", "forbidden"])
def test_check_propagator_checks_conditional_spaces(name: str, which: str) -> None:
    space = SearchSpace.from_yaml(SHIPPED) if which == "shipped" else SearchSpace.from_dict(TILES)
    check_propagator(make_propagator(name, space, EvolveSettings(), random.Random(1)))


class _Flat(Propagator):
    """Breeds a configuration of the flattened space: every parameter, active or not, or
    (``drop``) without the first conditional one."""

    def __init__(self, space: SearchSpace, drop: bool = False) -> None:
        super().__init__(-1, 1, random.Random(0))
        self.space, self.drop = space, drop

    def __call__(self, inds: list[Individual]) -> Individual:
        genes = {n: d.decode(self.rng.random()) for n, d in self.space.dimensions.items()}
        if self.drop:
            genes = self.space.active(genes)
            genes.pop(
                next(n for n in self.space.names if n in self.space.conditions and n in genes)
            )
        return Individual(genes)


@pytest.mark.parametrize(("drop", "message"), [(False, "inactive \\['"), (True, "missing \\['")])
def test_check_propagator_refuses_condition_inconsistent_children(drop: bool, message: str) -> None:
    space = SearchSpace.from_yaml(SHIPPED)
    with pytest.raises(AssertionError, match="condition-consistent") as err:
        check_propagator(_Flat(space, drop))
    assert err.match(message)


@pytest.mark.parametrize("name", ["cma", "pso", "nm"])
def test_vector_propagators_refuse_a_conditional_space_naming_the_parameter(name: str) -> None:
    space = SearchSpace.from_dict(TILES)
    with pytest.raises(ValueError, match="conditional parameter 'tx'") as err:
        make_propagator(name, space, EvolveSettings(), random.Random(0))
    assert "\n" not in str(err.value)


def test_unconditional_spaces_breed_as_before_conditions() -> None:
    """The golden file was computed by ``tests/data/make_unconditional_golden.py`` on the
    code before conditional spaces existed: same random streams, same proposals."""
    spec = importlib.util.spec_from_file_location("golden", DATA / "make_unconditional_golden.py")
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        gen.main()
    assert json.loads(out.getvalue()) == json.loads(
        (DATA / "unconditional_golden.json").read_text()
    )


def test_existing_space_files_and_limits_load_unchanged() -> None:
    limits = {"x": (-1.0, 1.0), "n": (1, 8), "act": ("relu", "tanh")}
    space = SearchSpace.from_limits(limits)
    assert not space.conditions and not space.forbidden and not space.constrained
    assert space.limits == limits
    for path in [*sorted((REPO / "examples").glob("*/space.yaml")), *REPO.glob("apps/*/*.yaml")]:
        text = path.read_text()
        if "parameters" not in text or "when:" in text:
            continue
        s = SearchSpace.from_yaml(path)
        assert not s.conditions and s.order == s.names


def test_the_breeder_completes_a_custom_propagators_children() -> None:
    from propulate.engine.breeder import Breeder
    from propulate.propagators.base import FunctionPropagator

    space = SearchSpace.from_dict(TILES)
    every = {"algo": "naive", "tx": 3, "ty": 5, "unroll": 2, "depth": 1, "extra": 0.5}
    breeder = Breeder(
        FunctionPropagator(lambda inds: Individual(every)), space, None, np.random.default_rng(0)
    )
    child = breeder([])
    assert dict(child) == {"algo": "naive", "unroll": 2, "depth": 1}
    breeder.seen.add(child)
    again = breeder([])  # the same active values: seen, so an unseen random one is drawn
    assert again is not None and space.key(again) != space.key(child) and _valid(space, again)


def test_a_finite_conditional_space_is_exhausted_after_its_distinct_configurations() -> None:
    space = SearchSpace(
        {
            "algo": {"type": "categorical", "choices": ["a", "b"]},
            "k": {"type": "int", "low": 1, "high": 3, "when": {"algo": "a"}},
        }
    )
    configs, _, _ = proposals(space, "ga", 50, seed=0)
    assert len(configs) == 4  # a/1, a/2, a/3, b: not 2 x 3
    assert {space.key(p) for p in configs} == {("a", 1), ("a", 2), ("a", 3), ("b", None)}


def test_the_optuna_baseline_groups_a_conditional_spaces_parameters(tmp_path: Path) -> None:
    """TPE with ``group=True`` (and ``multivariate=True``) in a conditional space, as Optuna
    advises for one; the plain TPE otherwise."""
    pytest.importorskip("optuna")
    from mpi4py import MPI

    from propulate.baselines.optuna_study import open_study

    for conditional in (True, False):
        out = tmp_path / str(conditional)
        out.mkdir()
        study, _, _ = open_study(out, 0, 0, MPI.COMM_WORLD, conditional=conditional)
        sampler = study.sampler
        assert type(sampler).__name__ == "TPESampler"
        assert sampler._group is conditional and (sampler._multivariate or not conditional)
