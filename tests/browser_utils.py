"""Headless Chromium (Debian's ``chromium`` package) for the report's and dashboard's tests.

A test loads a page with :func:`load`: Chromium runs the page's scripts for a virtual time
budget, then prints the rendered DOM; its console messages (``console.error``, uncaught
exceptions) come on stderr with ``--enable-logging=stderr`` as ``CONSOLE`` lines.
Without Chromium the tests skip, unless ``PROPULATE_REQUIRE_BROWSER=1`` (CI, which installs
it with ``ci/chromium/install.sh``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

#: Chromium's executable names, Debian's first.
NAMES = ("chromium", "chromium-browser", "google-chrome")

#: Flags of every run: no sandbox (root in CI), no GPU (software WebGL for parallel
#: coordinates), nothing fetched from the network by the browser itself.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--enable-unsafe-swiftshader",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
)

_CONSOLE = re.compile(r":CONSOLE[^\]]*\] (.*)$", re.M)

#: Console lines that are no page's error: software WebGL's performance notices.
_NOTICE = re.compile(r"GL Driver Message \(OpenGL, Performance")


def chromium() -> str:
    """Chromium's path; skips the test without one (fails under PROPULATE_REQUIRE_BROWSER=1)."""
    for name in NAMES:
        path = shutil.which(name)
        if path:
            return path
    if os.environ.get("PROPULATE_REQUIRE_BROWSER") == "1":
        pytest.fail("Chromium is required (PROPULATE_REQUIRE_BROWSER=1): ci/chromium/install.sh")
    pytest.skip("no Chromium (apt-get install chromium)")


@dataclass
class Loaded:
    """A page as Chromium rendered it."""

    dom: str
    console: list[str]  # messages the page's scripts logged, uncaught exceptions
    seconds: float


def load(
    url: str,
    profile: Path,
    *,
    budget_ms: int = 2000,
    screenshot: Path | None = None,
    size: tuple[int, int] = (1280, 2400),
    timeout: float = 60.0,
) -> Loaded:
    """Load ``url`` in headless Chromium, in a window of ``size`` pixels: the rendered DOM and
    the console messages; with ``screenshot``, a second run writes a PNG of the window there
    (the report draws a plot when it comes near the window: a tall one draws them all)."""
    import time

    exe = chromium()
    started = time.perf_counter()
    proc = subprocess.run(
        [
            exe,
            *FLAGS,
            f"--user-data-dir={profile}",
            f"--virtual-time-budget={budget_ms}",
            "--enable-logging=stderr",
            "--v=0",
            f"--window-size={size[0]},{size[1]}",
            "--dump-dom",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    seconds = time.perf_counter() - started
    assert proc.returncode == 0, proc.stderr[-3000:]
    if screenshot is not None:  # a run of its own: with --dump-dom it sometimes hangs
        subprocess.run(
            [
                exe,
                *FLAGS,
                f"--user-data-dir={profile}",
                f"--virtual-time-budget={budget_ms}",
                f"--window-size={size[0]},{size[1]}",
                f"--screenshot={screenshot}",
                url,
            ],
            capture_output=True,
            timeout=timeout,
            check=True,
        )
    console = [m for m in _CONSOLE.findall(proc.stderr) if not _NOTICE.search(m)]
    return Loaded(proc.stdout, console, seconds)
