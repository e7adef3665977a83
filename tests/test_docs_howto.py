"""The how-to guides run: every code block they show is written or run, in order, at the small
budgets they show (``tests/docs_utils.py`` says how a block is taken), and the README's example
runs as its comment says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.docs_utils import ROOT, blocks, guides, run_guide
from tests.mpi_utils import run_mpi

#: The guides the manual's index lists (docs/index.md): each must exist and be run here.
GUIDES = (
    "python-function",
    "program",
    "early-stopping",
    "several-objectives",
    "conditional-space",
    "slurm",
    "tuning-database",
    "dashboard",
)


def test_every_guide_is_listed_and_run() -> None:
    assert sorted(p.stem for p in guides()) == sorted(GUIDES)
    index = (ROOT / "docs" / "index.md").read_text()
    for name in GUIDES:
        assert f"howto/{name}\n" in index, f"docs/index.md does not list howto/{name}"


@pytest.mark.parametrize("name", GUIDES)
def test_guide_blocks_are_runnable(name: str) -> None:
    """Each guide shows at least one block that runs, and no block in a language that cannot."""
    page = ROOT / "docs" / "howto" / f"{name}.md"
    found = blocks(page)
    assert any(b.file is None for b in found), f"{name}: nothing to run"


@pytest.mark.mpi
@pytest.mark.slow
@pytest.mark.parametrize("name", GUIDES)
def test_guide_runs(name: str, tmp_path: Path) -> None:
    outputs = run_guide(ROOT / "docs" / "howto" / f"{name}.md", tmp_path)
    assert outputs and all(isinstance(o, str) for o in outputs)


def test_blocks_are_read_as_a_reader_sees_them(tmp_path: Path) -> None:
    """The extraction itself: a file block is written, the others run in order in one
    directory, and a failing block fails with its page and line."""
    page = tmp_path / "guide.md"
    page.write_text(
        "# A guide\n\n```python\n# file: mod.py\nVALUE = 41\n```\n\n"
        "```bash\necho ran > marker\n```\n\n"
        "```python\nimport mod\nprint(mod.VALUE + 1, open('marker').read().strip())\n```\n"
    )
    work = tmp_path / "work"
    work.mkdir()
    assert run_guide(page, work) == ["", "42 ran\n"]
    page.write_text("```bash\nfalse\n```\n")
    with pytest.raises(AssertionError, match=r"guide\.md:1 exited 1"):
        run_guide(page, work)
    page.write_text("```sh\nls\n```\n")
    with pytest.raises(AssertionError, match="cannot be run"):
        run_guide(page, work)


def test_readme_is_a_front_page() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 150
    for command in ("make run", "make test", "make docs", "source .venv/bin/activate"):
        assert command in readme


@pytest.mark.mpi
def test_readme_example_runs(tmp_path: Path) -> None:
    """The README's example, run as its last comment says (mpiexec -n 2 python tune.py)."""
    readme = (ROOT / "README.md").read_text()
    code = re.search(r"```python\n(.*?)```", readme, re.S)
    assert code is not None
    assert "mpiexec -n 2 python tune.py" in code.group(1)
    (tmp_path / "tune.py").write_text(code.group(1))
    proc = run_mpi(2, ["tune.py"], cwd=tmp_path, timeout=120)
    best = re.search(r"'lr': ([0-9.e-]+), 'layers': (\d+)", proc.stdout)
    assert best is not None, proc.stdout
    assert 1e-4 < float(best.group(1)) < 1e-2 and int(best.group(2)) == 4
