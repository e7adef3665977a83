"""Propulate 1.2's API beside the tutorials' runs: the tutorials' command line
(``parse_arguments``), the package's 1.2 names, ``summarize()``'s default output, the warning
about a 1.2 checkpoint, the 1.2 island layout of ``Migrator``/``Pollinator``, and the abort of
the whole MPI job when one rank dies."""

from __future__ import annotations

import logging
import random
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import propulate.abort as abort
from propulate.compat.legacy_checkpoint import LegacyCheckpointWarning, find_legacy_checkpoints
from propulate.compat.migrator import island_run_arguments
from propulate.compat.utils.benchmark_functions import parse_arguments


class Size:
    """A communicator of ``size`` ranks seen from rank ``rank``."""

    def __init__(self, size: int, rank: int = 0) -> None:
        self.size, self.rank = size, rank

    def Get_size(self) -> int:  # noqa: N802 - mpi4py's name
        return self.size

    def Get_rank(self) -> int:  # noqa: N802 - mpi4py's name
        return self.rank


def test_parse_arguments_has_the_tutorials_options_and_defaults() -> None:
    config, given = parse_arguments(Size(3), args=[])
    assert vars(config) == {
        "function": "sphere",
        "generations": 1000,
        "seed": 0,
        "verbosity": 1,
        "checkpoint": "./",
        "pop_size": 6,
        "crossover_probability": 0.7,
        "mutation_probability": 0.4,
        "random_init_probability": 0.1,
        "top_n": 1,
        "logging_interval": 10,
        "logging_level": logging.INFO,
        "num_islands": 2,
        "migration_probability": 0.9,
        "num_migrants": 1,
        "pollination": False,
        "variant": "Basic",
        "inertia": 0.729,
        "cognitive": 1.49445,
        "social": 1.49445,
        "clamping_factor": 0.6,
        "adapter": "basic",
        "ranks_per_worker": 2,
    }
    assert given == {"inertia": False, "cognitive": False, "social": False}


def test_parse_arguments_reads_the_options_and_notes_the_given_coefficients() -> None:
    argv = "--function rosenbrock --generations 7 --seed 3 --checkpoint ck --pop_size 5 "
    argv += "--num_islands 4 --migration_probability 0.2 --pollination --variant Canonical "
    argv += "--adapter active --ranks_per_worker 1 --social 2.5"
    config, given = parse_arguments(Size(2), args=argv.split())
    assert (config.function, config.generations, config.seed) == ("rosenbrock", 7, 3)
    assert (config.checkpoint, config.pop_size, config.num_islands) == ("ck", 5, 4)
    assert (config.migration_probability, config.pollination) == (0.2, True)
    assert (config.variant, config.adapter, config.ranks_per_worker) == ("Canonical", "active", 1)
    assert (config.social, config.cognitive) == (2.5, 1.49445)
    assert given == {"inertia": False, "cognitive": False, "social": True}


@pytest.mark.parametrize("bad", [["--function", "ackley"], ["--variant", "Stateless"]])
def test_parse_arguments_rejects_what_1_2_rejects(bad: list[str]) -> None:
    with pytest.raises(SystemExit):
        parse_arguments(Size(1), args=bad)


def test_the_1_2_names_after_import_propulate_and_the_import_stays_light() -> None:
    code = (
        "import sys, propulate\n"
        "assert 'mpi4py' not in sys.modules, 'import propulate imported MPI'\n"
        "from propulate import Surrogate, Migrator, Pollinator, Propulator, Islands\n"
        "from propulate import set_logger_config, get_default_propagator\n"
        "assert propulate.utils.get_default_propagator is get_default_propagator\n"
        "assert callable(propulate.utils.benchmark_functions.parse_arguments)\n"
        "assert propulate.propagators.SelectMin.__name__ == 'SelectMin'\n"
        "assert issubclass(Pollinator, Islands) and issubclass(Migrator, Islands)\n"
        "assert {'utils', 'propagators', 'Surrogate'} <= set(dir(propulate))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_summarize_prints_the_best_by_default(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    from propulate import Propulator, get_default_propagator

    monkeypatch.setattr(sys, "excepthook", sys.excepthook)  # the optimizer chains onto it
    limits = {"x": (-1.0, 1.0)}
    prop = get_default_propagator(4, limits, rng=random.Random(0))
    opt = Propulator(lambda p: p["x"] ** 2, prop, generations=12, checkpoint_path=tmp_path)
    opt.propulate()
    with caplog.at_level(logging.INFO, logger="propulate"):
        best = opt.summarize()
        opt.summarize(debug=-1)
    lines = [r.getMessage() for r in caplog.records if "best 1 of" in r.getMessage()]
    assert len(lines) == 1
    assert f"loss {best[0][0].loss:.6g}" in lines[0]


def test_a_1_2_checkpoint_in_the_run_directory_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from propulate import Propulator, get_default_propagator

    monkeypatch.setattr(sys, "excepthook", sys.excepthook)
    (tmp_path / "island_0_ckpt.pickle").write_bytes(b"\x80\x04N.")
    (tmp_path / "island_0_ckpt.bkp").write_bytes(b"\x80\x04N.")
    (tmp_path / "notes.pickle").write_bytes(b"")
    assert [p.name for p in find_legacy_checkpoints(tmp_path)] == [
        "island_0_ckpt.bkp",
        "island_0_ckpt.pickle",
    ]
    prop = get_default_propagator(4, {"x": (-1.0, 1.0)})
    with pytest.warns(LegacyCheckpointWarning, match=r"island_0_ckpt\.pickle.*does not read"):
        Propulator(lambda p: p["x"] ** 2, prop, generations=1, checkpoint_path=tmp_path)


@pytest.mark.parametrize(
    ("rank", "displs", "counts", "island", "expected"),
    [
        (3, [0, 2], [2, 3], 1, {"num_islands": 2, "island_sizes": [2, 3]}),
        (1, None, [2, 3], 0, {"num_islands": 2, "island_sizes": [2, 3]}),
        (0, None, None, 0, {"num_islands": 1, "island_sizes": None}),
    ],
)
def test_migrator_layout(
    rank: int,
    displs: list[int] | None,
    counts: list[int] | None,
    island: int,
    expected: dict[str, Any],
) -> None:
    world, own = Size(5, rank), Size(2)
    args = island_run_arguments(island, own, world, displs, counts, 1)
    assert args["comm"] is (world if counts else own)
    assert {k: args[k] for k in expected} == expected


@pytest.mark.parametrize(
    ("rank", "displs", "island", "message"),
    [
        (0, np.array([0, 3]), 0, "island_displs"),
        (3, None, 0, "lies on island 1"),
    ],
)
def test_migrator_rejects_a_layout_the_engine_does_not_build(
    rank: int, displs: np.ndarray | None, island: int, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        island_run_arguments(island, Size(2), Size(5, rank), displs, np.array([2, 3]), 1)


class World:
    """A stand-in for ``mpi4py.MPI``: a job of ``size`` ranks that records aborts."""

    def __init__(self, size: int) -> None:
        self.aborted: list[int] = []
        comm = types.SimpleNamespace(Get_size=lambda: size, Abort=self.aborted.append)
        self.mpi = types.SimpleNamespace(
            COMM_WORLD=comm, Is_initialized=lambda: True, Is_finalized=lambda: False
        )


@pytest.mark.parametrize(("size", "aborts"), [(2, [1]), (1, [])])
def test_an_uncaught_exception_aborts_a_job_of_several_ranks(
    monkeypatch: pytest.MonkeyPatch, size: int, aborts: list[int]
) -> None:
    world = World(size)
    printed: list[str] = []
    monkeypatch.setitem(sys.modules, "mpi4py.MPI", world.mpi)
    monkeypatch.setattr(sys, "excepthook", lambda t, e, tb: printed.append(str(e)))
    abort.abort_on_uncaught_error()
    abort.abort_on_uncaught_error()  # once only
    sys.excepthook(RuntimeError, RuntimeError("boom"), None)
    assert printed == ["boom"]  # the previous hook still prints the traceback
    assert world.aborted == aborts
