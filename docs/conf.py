"""Sphinx configuration of the documentation site (``make docs`` -> docs/_build/html)."""

from __future__ import annotations

import pkgutil
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import propulate  # noqa: E402

project = "propulate"
author = "the propulate authors"
release = propulate.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]

# Markdown: headings get anchors for `page.md#section` links.
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence", "deflist"]

# The API reference: one page per module, generated from the docstrings (numpy style). The
# pages' sources are written by _write_api_pages below (api/generated/, not kept in git):
# autosummary's own recursion would take a submodule whose name its package also gives to a
# function (``propulate.report.collect``) for that function.
autosummary_generate = False
# Each object is documented once, on the page of the module that defines it: a package's
# re-exports (its ``__all__``) link there instead of describing it a second time.
autodoc_default_options = {"members": True, "show-inheritance": True, "ignore-module-all": True}
autodoc_member_order = "bysource"
# The types are the docstrings' (numpy style): annotations written under TYPE_CHECKING are
# strings that could name several classes of the package.
autodoc_typehints = "none"


def _defined_at(name: str) -> str:
    """Where the top-level name ``name`` is defined (and so documented)."""
    value = getattr(propulate, name)
    if isinstance(value, types.ModuleType):
        return value.__name__
    return f"{value.__module__}.{value.__qualname__}"


def public_modules() -> list[str]:
    """Every module of the package a user may import, sorted (``__main__`` modules, which run
    a command when imported, and private ones are left out)."""
    names = ["propulate"]
    for info in pkgutil.walk_packages(propulate.__path__, "propulate."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return sorted(names)


def _api_page(name: str, children: list[str]) -> str:
    """The reStructuredText of one module's page: its docstring and members, then its
    submodules' pages; the package's page also lists the top-level names."""
    lines = [name, "=" * len(name), "", f".. automodule:: {name}", ""]
    if name == "propulate":
        lines += [".. rubric:: The top-level names", ""]
        lines += ["Imported on first use from the modules that define them (documented there):"]
        lines += ["", ".. autosummary::", ""]
        top = [_defined_at(n) for n in propulate.__all__ if not n.startswith("__")]
        lines += [f"   ~{path.removeprefix('propulate.')}" for path in top]  # from this page
        lines += [""]
    if children:
        lines += [".. rubric:: Modules", "", ".. toctree::", "   :maxdepth: 1", ""]
        lines += [f"   {child}" for child in children]
        lines += [""]
    return "\n".join(lines)


def _write_api_pages(app: object) -> None:
    """Write api/generated/<module>.rst for every public module (only those that changed)."""
    out = Path(app.srcdir) / "api" / "generated"  # type: ignore[attr-defined]
    out.mkdir(parents=True, exist_ok=True)
    names = public_modules()
    for name in names:
        children = [n for n in names if n.rpartition(".")[0] == name]
        page = out / f"{name}.rst"
        text = _api_page(name, children)
        if not page.is_file() or page.read_text() != text:
            page.write_text(text)


def setup(app: object) -> None:
    """Sphinx's hook: the API pages are written before the sources are read."""
    app.connect("builder-inited", _write_api_pages)  # type: ignore[attr-defined]


napoleon_numpy_docstring = True
napoleon_google_docstring = False
napoleon_use_rtype = False
napoleon_preprocess_types = True
# Attributes sections as fields: a documented property is not described a second time.
napoleon_use_ivar = True

html_theme = "furo"
html_title = f"propulate {release}"
html_static_path: list[str] = []
html_copy_source = False
