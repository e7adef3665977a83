"""The package's modules and the import graph between them, for the layout checks
(``tests/test_layout.py``) and any test that asks what a module imports."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "propulate"


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
