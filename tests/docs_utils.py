"""The documentation site's sources: the how-to guides' code blocks, and building the site.

A guide's fenced code blocks are of two kinds: a block whose first line is ``# file: NAME`` is
a file the reader writes (it is written to ``NAME``), any other block is run, in the order of
the page, in one fresh directory (``bash`` blocks with bash, ``python`` blocks with the
environment's Python). A block in another language has no way to be checked, so a guide may not
show one (:data:`RUNNABLE`).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
HOWTO = DOCS / "howto"
BUILD = DOCS / "_build" / "html"

#: The languages a guide's blocks may have: those run, and those written as files.
RUNNABLE = ("bash", "python")
FILES = ("python", "yaml", "bash", "c", "text")

_FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)
_FILE = re.compile(r"^#\s*file:\s*(\S+)\s*$")


@dataclass(frozen=True)
class Block:
    """One fenced code block of a page."""

    language: str
    text: str
    line: int  # of the opening fence, from 1

    @property
    def file(self) -> str | None:
        """The file name of a ``# file: NAME`` block, ``None`` for a block that runs."""
        first = self.text.splitlines()[0] if self.text else ""
        match = _FILE.match(first)
        return match.group(1) if match else None


def blocks(page: Path) -> list[Block]:
    """The fenced code blocks of a Markdown page, in order (MyST directives excluded)."""
    text = page.read_text()
    found = []
    for match in _FENCE.finditer(text):
        language = match.group(1)
        if language.startswith("{"):
            continue
        line = text.count("\n", 0, match.start()) + 1
        found.append(Block(language, match.group(2), line))
    return found


def guides() -> list[Path]:
    """Every how-to guide."""
    return sorted(HOWTO.glob("*.md"))


def environment() -> dict[str, str]:
    """A reader's shell after ``source .venv/bin/activate``: this Python's scripts first."""
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


def run_guide(page: Path, workdir: Path, timeout: float = 300.0) -> list[str]:
    """Write and run every block of ``page`` in ``workdir``, in order; the outputs of the blocks
    run. Fails with the block's line and output when one exits non-zero."""
    env = environment()
    outputs = []
    name = page.relative_to(ROOT) if page.is_relative_to(ROOT) else page.name
    for block in blocks(page):
        where = f"{name}:{block.line}"
        if block.file is not None:
            assert block.language in FILES, f"{where}: a file block in {block.language!r}"
            target = workdir / block.file
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.text)
            continue
        assert block.language in RUNNABLE, (
            f"{where}: a block in {block.language!r} cannot be run; "
            f"use one of {RUNNABLE} or make it a '# file: NAME' block"
        )
        cmd = ["bash", "-euo", "pipefail", "-c", block.text]
        if block.language == "python":
            cmd = [sys.executable, "-c", block.text]
        proc = subprocess.run(
            cmd, cwd=workdir, env=env, capture_output=True, text=True, timeout=timeout
        )
        assert proc.returncode == 0, (
            f"{where} exited {proc.returncode}\nstdout:\n{proc.stdout[-3000:]}\n"
            f"stderr:\n{proc.stderr[-3000:]}"
        )
        outputs.append(proc.stdout)
    return outputs


def build_site(out: Path, timeout: float = 1500.0) -> subprocess.CompletedProcess[str]:
    """Build the site as ``make docs`` does (warnings are errors) into ``out/html``, from a
    copy of the sources in ``out/src`` (``docs/`` and the ``config/README.md`` it includes):
    the pages autosummary generates are written there, not into the working tree."""
    src = out / "src"
    shutil.copytree(DOCS, src / "docs", ignore=shutil.ignore_patterns("_build", "generated"))
    (src / "config").mkdir()
    shutil.copy2(ROOT / "config" / "README.md", src / "config" / "README.md")
    cmd = [sys.executable, "-m", "sphinx", "-j", "auto", "-b", "html", "-q", "-W", "--keep-going"]
    return subprocess.run(
        [*cmd, str(src / "docs"), str(out / "html")],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=src,
    )
