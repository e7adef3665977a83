"""The documentation site builds from the repository as ``make docs`` builds it (warnings are
errors), its internal links resolve, its API reference documents every public name, and a
browser renders the index and the API page of the island model's entry point."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import sys
from pathlib import Path

import pytest

import propulate
from tests.browser_utils import load
from tests.docs_utils import ROOT, build_site

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built once for this module's tests into a fresh directory."""
    out = tmp_path_factory.mktemp("site")
    proc = build_site(out)
    assert proc.returncode == 0, f"the build failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
    assert "WARNING" not in proc.stderr and "ERROR" not in proc.stderr, proc.stderr[-6000:]
    return out / "html"


def _public_modules() -> list[str]:
    """Every module of the package a user may import (``__main__`` modules run a command)."""
    names = ["propulate"]
    for info in pkgutil.walk_packages(propulate.__path__, "propulate."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return sorted(names)


def test_internal_links_resolve(site: Path) -> None:
    sys.path.insert(0, str(ROOT / "docs"))
    try:
        from check_links import broken_links
    finally:
        sys.path.remove(str(ROOT / "docs"))
    assert broken_links(site) == []


def test_the_api_reference_documents_every_public_name(site: Path) -> None:
    """Each public module has its page, and each public class and function it defines is
    described there (an anchor named by its full name)."""
    missing = []
    for name in _public_modules():
        page = site / "api" / "generated" / f"{name}.html"
        if not page.is_file():
            missing.append(f"{name}: no page")
            continue
        html = page.read_text()
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            if attr.startswith("_") or not (inspect.isclass(value) or inspect.isfunction(value)):
                continue
            if getattr(value, "__module__", None) != name:
                continue  # imported: documented where it is defined
            if f'id="{name}.{attr}"' not in html:
                missing.append(f"{name}.{attr}")
    assert not missing, f"not in the API reference: {missing}"


def test_the_package_page_links_each_top_level_name(site: Path) -> None:
    html = (site / "api" / "generated" / "propulate.html").read_text()
    for name in propulate.__all__:
        if name.startswith("__"):
            continue
        value = getattr(propulate, name)
        target = value.__name__ if inspect.ismodule(value) else value.__module__
        assert f'href="{target}.html' in html, f"propulate.{name}: no link to {target}"


@pytest.mark.parametrize(
    ("page", "expected"),
    [
        ("index.html", ("Getting started", "How-to guides", "Tune a Python function")),
        (
            "api/generated/propulate.compat.islands.html",
            (
                'id="propulate.compat.islands.Islands"',
                'id="propulate.compat.islands.Islands.propulate"',
            ),
        ),
    ],
)
def test_a_browser_renders_the_page(site: Path, tmp_path: Path, page: str, expected: tuple) -> None:
    """Chromium opens the page from the file system (offline) with its theme's scripts: the
    page's content is in the rendered DOM and no script failed."""
    loaded = load((site / page).as_uri(), tmp_path / "profile", budget_ms=1500)
    for text in expected:
        assert text in loaded.dom, text
    assert 'class="sidebar-tree"' in loaded.dom  # the theme's navigation
    assert not [m for m in loaded.console if "Uncaught" in m or "Error" in m], loaded.console
