"""The package's shape: small modules, no import cycles, nothing pointing outside the repository;
the test suite's: small files, no test module importing another."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.layout_utils import ROOT, _modules, import_graph

TESTS = ROOT / "tests"
#: A package module's hard cap: split a module by job when it holds two, not to stay under a
#: count; a merge by job may pass 400 lines.
MAX_MODULE_LINES = 600
#: The test suite's files stay short: split a long one by theme.
MAX_LINES = 400
#: A ``module:attribute`` reference to a test module (an objective or constraint given by name).
TEST_MODULE_REFERENCE = re.compile(r"\btests\.(test_\w+):")


@pytest.mark.parametrize("name", sorted(_modules()))
def test_module_is_small(name: str) -> None:
    lines = len(_modules()[name].read_text().splitlines())
    assert lines <= MAX_MODULE_LINES, (
        f"{name} has {lines} lines (at most {MAX_MODULE_LINES}): split it by job"
    )


def test_test_modules_are_small() -> None:
    """The test suite's files (test modules, helpers, MPI scripts) too: split a long one by theme."""
    long = {
        str(path.relative_to(ROOT)): lines
        for path in sorted(TESTS.rglob("*.py"))
        if (lines := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert not long, f"at most {MAX_LINES} lines per test file, split these by theme: {long}"


def _test_modules_imported_by(path: Path) -> set[str]:
    """The test modules (``test_*``) that the file ``path`` of the test suite imports (also
    lazily or relatively) or names in a ``module:attribute`` reference."""
    found: set[str] = set()

    def add(module: str) -> None:
        parts = module.split(".")
        if parts[0] == "tests":
            parts = parts[1:]
        if parts and parts[0].startswith("test_"):
            found.add(parts[0])

    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.module and node.module != "tests":
                add(node.module)
            elif node.module == "tests" or node.level:
                for alias in node.names:
                    add(alias.name)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.update(TEST_MODULE_REFERENCE.findall(node.value))
    return found


def test_test_modules_do_not_import_each_other() -> None:
    """Shared test code lives in ``tests/conftest.py`` (fixtures) or ``tests/*_utils.py``, so a
    test module can be moved, split or run alone."""
    offenders = {
        str(path.relative_to(ROOT)): sorted(imported)
        for path in sorted(TESTS.rglob("*.py"))
        if (imported := _test_modules_imported_by(path))
    }
    assert not offenders, f"move what these share into conftest.py or a *_utils.py: {offenders}"


def test_the_graph_counts_package_inits() -> None:
    graph = import_graph()
    # tuningdb.ingest imports propulate.runs.summary: propulate.runs' __init__ runs too
    assert "propulate.runs" in graph["propulate.tuningdb.ingest"]


def test_no_import_cycles() -> None:
    graph = import_graph()
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycle = stack[stack.index(nxt) :] + [nxt]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)


def test_nothing_points_users_to_files_they_do_not_have() -> None:
    """Docs, configs and docstrings must not send a user to the developers' design notes."""
    suffixes = {".py", ".md", ".yaml", ".yml", ".smk", ".rst", ".txt", ".cfg", ".toml"}
    offenders = []
    for path in ROOT.rglob("*"):
        rel = path.relative_to(ROOT)
        if rel.parts[0] in {".venv", ".git", "results", ".snakemake", "tests"}:
            continue
        if path.is_file() and (path.suffix in suffixes or path.name == "Snakefile"):
            text = path.read_text(errors="replace")
            if "design.md" in text or "shared/seeds" in text:
                offenders.append(str(rel))
    assert not offenders, f"these files point to design notes users do not have: {offenders}"


#: The package's layers: room -> the rooms it must never import (also lazily, inside a
#: function). The engine sits above the objective, the models, the records, the space, the
#: settings, the propagators and the pruners, so only the front ends (cli, compat), the
#: baselines' workers and the contract checks import it; the bottom rooms import nothing of
#: the package at all.
ABOVE_THE_ENGINE = {"cli", "compat", "contracts", "testing", "baselines", "engine"}
#: Rooms no other room imports: Propulate 1.2's front ends sit on top, re-exported by the package.
TOP = {"compat"}
#: Rooms that import no other room of the package.
LEAVES = {"polling", "transfer", "problems", "abort", "logging_config", "_aliases"}
MUST_NOT_IMPORT: dict[str, set[str]] = {
    "engine": {"methods", "campaign", "cli", "report", "tuningdb", "baselines", "models"},
    "user_objective": {"models", "propagators", "campaign", "cli", "report", "tuningdb"},
    "runs": {"user_objective", "models", "propagators", "pruners", "campaign", "report"},
    "space": {"user_objective", "models", "propagators", "pruners", "campaign", "report", "runs"},
    "settings": {"user_objective", "models", "propagators", "campaign", "report", "runs"},
    "models": {"propagators", "campaign", "cli", "report", "tuningdb"},
    "propagators": {"campaign", "cli", "report", "tuningdb", "user_objective"},
    "pruners": {"propagators", "campaign", "cli", "report", "tuningdb"},
}


def _room(module: str) -> str:
    """The room a module of the package lives in (``propulate.engine.worker`` -> ``engine``)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def layer_breaks(graph: dict[str, set[str]]) -> list[str]:
    """Every import edge ``a -> b`` of ``graph`` that breaks the layers stated above."""
    breaks = []
    for module, imported in sorted(graph.items()):
        room = _room(module)
        for target in sorted(imported):
            other = _room(target)
            if other == room or not other:
                continue
            engine = other == "engine" and room not in ABOVE_THE_ENGINE
            top = other in TOP and room != ""
            if engine or top or room in LEAVES or other in MUST_NOT_IMPORT.get(room, set()):
                breaks.append(f"{module} -> {target}")
    return breaks


def test_layers_hold() -> None:
    breaks = layer_breaks(import_graph())
    assert not breaks, "layer breaks (move what both need below both): " + ", ".join(breaks)


def test_layer_check_sees_breaks() -> None:
    """The check fails on each kind of break, lazy imports included (the graph reads them)."""
    graph = {
        "propulate.models.loop": {"propulate.engine.messaging", "propulate.polling"},
        "propulate.propagators.ga": {"propulate.engine", "propulate.population"},
        "propulate.runs.log": {"propulate.user_objective.loading"},
        "propulate.polling": {"propulate.runs"},
        "propulate.cli.evolve": {"propulate.engine.run"},
        "propulate.report.html": {"propulate.compat.history"},
        "propulate": {"propulate.compat.islands"},
    }
    assert layer_breaks(graph) == [
        "propulate.models.loop -> propulate.engine.messaging",
        "propulate.polling -> propulate.runs",
        "propulate.propagators.ga -> propulate.engine",
        "propulate.report.html -> propulate.compat.history",
        "propulate.runs.log -> propulate.user_objective.loading",
    ]
    lazy = import_graph()["propulate.models.loop"]  # its MPI polling is imported in a method
    assert "propulate.polling" in lazy
