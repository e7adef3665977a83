"""Check the internal links of the built site: every relative ``href`` and ``src`` of every page
names a file of the site, and its ``#anchor``, when it has one, an ``id`` of that page.

    python docs/check_links.py docs/_build/html

Prints one line per broken link and exits with status 1 when there is one. Links to other
sites (``http:``, ``https:``, ``mailto:``) are not followed: the site must read offline, and
nothing here reaches the network.
"""

from __future__ import annotations

import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit


class _Page(HTMLParser):
    """The link targets and the ids of one HTML page."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value is None:
                continue
            if name == "id" or (tag == "a" and name == "name"):
                self.ids.add(value)
            elif name in ("href", "src") and tag != "link" or (tag == "link" and name == "href"):
                self.links.append(value)


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def broken_links(site: Path) -> list[str]:
    """``page: link`` for every internal link of ``site`` whose file or anchor is missing."""
    pages = {path: _parse(path) for path in sorted(site.rglob("*.html"))}
    broken = []
    for path, page in pages.items():
        for link in page.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith("data:"):
                continue
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            if target.is_dir():
                target = target / "index.html"
            where = f"{path.relative_to(site)}: {link}"
            if not target.is_file():
                broken.append(where)
            elif parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else _parse(target).ids
                if unquote(parts.fragment) not in ids:
                    broken.append(where)
    return broken


def main(argv: list[str]) -> int:
    site = Path(argv[0] if argv else "docs/_build/html").resolve()
    if not (site / "index.html").is_file():
        print(f"{site}: no index.html (build the site first: make docs)", file=sys.stderr)
        return 1
    broken = broken_links(site)
    for line in broken:
        print(f"broken link: {line}")
    print(f"{len(broken)} broken internal links in {site}")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
