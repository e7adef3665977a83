"""Propulate 1.2 compatibility: an ``Islands`` run restored from its checkpoint holds exactly
what each island held when it stopped (immigrants and active flags included)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.mpi_utils import SCRIPTS, run_mpi

pytestmark = pytest.mark.mpi
SCRIPT = str(SCRIPTS / "islands_restore.py")


def held(out: Path, **opts: object) -> dict[int, list]:
    proc = run_mpi(4, [SCRIPT, str(out), json.dumps(opts)], timeout=180)
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    return {d["rank"]: d["held"] for d in lines}


@pytest.mark.parametrize(("islands", "pollination"), [(2, True), (2, False), (4, True)], ids=str)
def test_a_restored_island_holds_what_it_held(tmp_path, islands, pollination):
    before = held(tmp_path, islands=islands, pollination=pollination)
    after = held(tmp_path, islands=islands, pollination=pollination, restore=True)
    assert sorted(before) == sorted(after) == [0, 1, 2, 3]
    # The run migrated: some island holds an immigrant and some individual left breeding.
    assert any(ind[4] > 0 for pop in before.values() for ind in pop)
    assert any(not ind[3] for pop in before.values() for ind in pop)
    for rank in before:
        assert len(after[rank]) == len(before[rank]), rank
        assert after[rank] == before[rank], rank
