"""Sphinx configuration of the documentation site (``make docs`` -> docs/_build/html)."""

from __future__ import annotations

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
    "sphinx.ext.viewcode",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
templates_path = ["_templates"]

# Markdown: headings get anchors for `page.md#section` links; $...$ is not math here.
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence", "deflist"]

# The API reference: one page per module, generated from the docstrings (numpydoc style).
autosummary_generate = True
autosummary_imported_members = False
# Each object is documented once, on the page of the module that defines it: a package's
# re-exports (its ``__all__``) link there instead of describing it a second time.
autodoc_default_options = {"members": True, "show-inheritance": True, "ignore-module-all": True}
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_mock_imports: list[str] = []


def _defined_at(name: str) -> str:
    """Where the top-level name ``name`` is defined (and so documented)."""
    value = getattr(propulate, name)
    path = value.__name__ if isinstance(value, types.ModuleType) else value.__module__
    if not isinstance(value, types.ModuleType):
        path = f"{path}.{value.__qualname__}"
    return path.removeprefix("propulate.")  # relative to the package's page


#: The package's public names, linked from its page to their modules' pages.
autosummary_context = {
    "toplevel": [_defined_at(n) for n in propulate.__all__ if not n.startswith("__")],
}

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
