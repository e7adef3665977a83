"""Old import paths (propulate._aliases): every moved module still imports under its old name,
as the very same module, and so do objectives referenced by an old ``module:attribute``."""

from __future__ import annotations

import importlib
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

from propulate import _aliases
from propulate._aliases import ALIASES, new_name
from propulate.runs.log import iter_records
from tests.evolve_utils import cli, evolve_args
from tests.layout_utils import ROOT, _modules


def _old_names() -> list[str]:
    """Every old name of the table, and below an old package name each of its modules."""
    names = set(ALIASES)
    for old, new in ALIASES.items():
        module = importlib.import_module(new)
        for info in pkgutil.walk_packages(getattr(module, "__path__", []), prefix=f"{old}."):
            names.add(info.name)
    return sorted(names)


@pytest.mark.parametrize("old", _old_names())
def test_old_path_imports_the_same_module(old: str) -> None:
    module = importlib.import_module(old)
    current = importlib.import_module(new_name(old) or "")
    assert module is current
    assert module.__name__ == new_name(old)  # the module keeps its own name and spec
    assert module.__spec__ is not None and module.__spec__.name == module.__name__
    assert sys.modules[old] is current


def test_no_old_name_is_still_a_module() -> None:
    """An alias never shadows a module that exists (nor points to one that does not)."""
    modules = _modules()
    assert not set(ALIASES) & set(modules)
    assert set(ALIASES.values()) <= set(modules)


def test_names_outside_the_table_are_left_to_the_import_system() -> None:
    assert new_name("propulate.population") is None
    assert new_name("propulate.engine.breeder") is None
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("propulate.engine.seen_nosuch")


def test_install_is_idempotent() -> None:
    _aliases.install()
    _aliases.install()
    assert sum(isinstance(f, _aliases.AliasFinder) for f in sys.meta_path) == 1
    assert isinstance(sys.meta_path[0], _aliases.AliasFinder)


def _fresh(code: str) -> str:
    """``code``'s stdout, run by a fresh interpreter (nothing of the package imported yet)."""
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_old_names_first_in_a_fresh_interpreter() -> None:
    """Importing the old name first, then the new one, gives one module, imported once."""
    pairs = json.dumps(sorted(ALIASES.items()))
    code = (
        "import importlib, json, sys\n"
        f"for old, new in json.loads({pairs!r}):\n"
        "    a = importlib.import_module(old)\n"
        "    assert a is importlib.import_module(new), old\n"
        "    assert sys.modules[old] is sys.modules[new], old\n"
        "print('ok')\n"
    )
    assert _fresh(code).strip() == "ok"


def test_old_objective_references_resolve() -> None:
    """A campaign's or a script's ``module:attribute`` under an old path loads the same object."""
    from propulate.space import load_callable
    from propulate.user_objective import load_objective

    assert load_callable("propulate.objectives.demo:demo_loss") is load_callable(
        "propulate.problems.demo:demo_loss"
    )
    assert load_objective("propulate.objectives.benchmark:sphere") is load_objective(
        "propulate.problems.benchmark:sphere"
    )
    assert load_callable("propulate.utils.benchmark_functions:parse_arguments") is load_callable(
        "propulate.compat.utils.benchmark_functions:parse_arguments"
    )


def test_evolve_runs_an_objective_given_by_its_old_path(tmp_path: Path, space: Path) -> None:
    out = tmp_path / "run"
    args = evolve_args(
        space, out, "--max-evaluations", "4", objective="propulate.objectives.benchmark:sphere"
    )
    proc = cli(*args, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    records = [r for r in iter_records(out) if r.get("loss") is not None]
    assert len(records) == 4
