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


#: The test modules that take longest, longest first (seconds on a 2-core machine with the
#: suite on two workers). ``make test`` hands whole modules to its workers in collection
#: order, so these start first and the workers end together instead of one waiting on the
#: last long module; the Slurm campaigns, which mostly wait on the cluster, overlap the rest.
LONGEST_FIRST = (
    "test_packaging.py",  # ~220: a wheel, a venv, campaigns from it locally and on Slurm
    "test_chaos.py",  # ~110: campaigns under random faults
    "test_docs_site.py",  # ~105: the documentation site
    "test_slurm_campaign.py",  # ~75: campaigns on the test cluster
    "test_report_tuned.py",  # ~60
    "test_pdgeqrf_campaign.py",  # ~50
    "test_docs_howto.py",  # ~45
    "test_slurm_pdgeqrf.py",  # ~42
    "test_bo.py",  # ~40
    "test_workflow.py",  # ~35
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Put the modules of :data:`LONGEST_FIRST` first, in that order; the rest keep theirs."""
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))
