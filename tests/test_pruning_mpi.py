"""A pruner with multi-rank workers: the leader decides, every rank stops at the same step."""

from __future__ import annotations

from pathlib import Path

import pytest

from propulate.runs.log import iter_records
from tests.mpi_utils import SCRIPTS, run_mpi

pytestmark = pytest.mark.mpi


def test_every_rank_of_a_worker_stops_at_the_leaders_step(tmp_path: Path) -> None:
    run_mpi(2, [str(SCRIPTS / "pruned_members.py"), str(tmp_path), "2"], timeout=180)
    leader = (tmp_path / "steps-r0.txt").read_text().splitlines()
    member = (tmp_path / "steps-r1.txt").read_text().splitlines()
    assert len(leader) == 12 and member == leader  # same configurations, same steps
    records = {f"{r['params']['x']:.17g}": r for r in iter_records(tmp_path / "run")}
    for line in leader:
        x, steps = line.split()
        rec = records[x]
        if float(x) > 0.5:
            assert int(steps) == 3 and rec["status"] == "pruned" and len(rec["curve"]) == 3
        else:
            assert int(steps) == 6 and rec["status"] == "ok" and len(rec["curve"]) == 6
    assert any(r["status"] == "pruned" for r in records.values())
