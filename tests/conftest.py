"""Fixtures shared by several test modules, and where the other shared test code lives.

- Fixtures used by more than one module are defined here; pytest hands them to any test that
  names them, so nothing imports this file (pytest advises against importing ``conftest.py``).
- Plain helpers (constants, functions, hypothesis strategies) shared by several modules live in
  one module per theme, ``tests/<theme>_utils.py`` (``mpi_utils`` for ``mpiexec``,
  ``slurm_utils`` for the test cluster, ``workflow_utils`` for Snakemake, ``evolve_utils`` for
  the evolve command, ...), and are imported from there:
  ``from tests.workflow_utils import snakemake``.
- A test module never imports another test module (``tests/test_layout.py`` checks), so each can
  be moved, split or run alone.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.evolve_utils import SPACE


@pytest.fixture
def space(tmp_path: Path) -> Path:
    """A YAML file with :data:`tests.evolve_utils.SPACE`, the 2-D space of the evolve tests."""
    path = tmp_path / "s.yaml"
    path.write_text(SPACE)
    return path
