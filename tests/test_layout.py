"""The package's shape: small modules, no import cycles, nothing pointing outside the repository;
the test suite's: small files, no test module importing another."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "propulate"
TESTS = ROOT / "tests"
MAX_LINES = 400
#: A ``module:attribute`` reference to a test module (an objective or constraint given by name).
TEST_MODULE_REFERENCE = re.compile(r"\btests\.(test_\w+):")


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _top_level_imports(path: Path, name: str, is_package: bool) -> set[str]:
    """Modules ``name`` imports anywhere (also lazily, inside functions), except for type checking."""
    tree = ast.parse(path.read_text())
    found: set[str] = set()

    def visit(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = name.split(".") if is_package else name.split(".")[:-1]
                    base = base[: len(base) - node.level + 1]
                    mod = ".".join(base + ([node.module] if node.module else []))
                else:
                    mod = node.module or ""
                found.add(mod)
                found.update(f"{mod}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                visit(node.orelse)
            else:
                visit([c for c in ast.iter_child_nodes(node) if isinstance(c, ast.stmt)])

    visit(tree.body)
    return found


@pytest.mark.parametrize("name", sorted(_modules()))
def test_module_is_small(name: str) -> None:
    lines = len(_modules()[name].read_text().splitlines())
    assert lines <= MAX_LINES, f"{name} has {lines} lines (at most {MAX_LINES}): split it"


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


def _with_packages(imported: set[str], modules: dict[str, Path]) -> set[str]:
    """The imported modules and every package whose ``__init__`` importing them runs."""
    out = set()
    for mod in imported:
        parts = mod.split(".")
        for i in range(1, len(parts) + 1):
            prefix = ".".join(parts[:i])
            if prefix in modules:
                out.add(prefix)
    return out


def import_graph() -> dict[str, set[str]]:
    """Module -> the package modules importing it runs, ``__init__`` files included (importing
    ``a.b.c`` runs ``a/__init__`` and ``a/b/__init__`` first); a module's own packages are left
    out (they are running already when it is imported)."""
    modules = _modules()
    return {
        name: {
            m
            for m in _with_packages(
                _top_level_imports(path, name, path.name == "__init__.py"), modules
            )
            if m != name and not name.startswith(m + ".")
        }
        for name, path in modules.items()
    }


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
