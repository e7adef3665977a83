"""The engine's cost per evaluation at scale cannot grow silently.

32 oversubscribed ranks in 8 islands of 4, every evaluation a 20 ms sleep: the CPU the ranks
spend per evaluation with migration at every step, over the same run without migration. Each
emigration reaches the decider of each of the 7 other islands, which passes it on to its 3
peers with its next share, so this ratio is the cost of taking in an immigrant, measured
against the rest of the engine in the same conditions (the machine's speed and load cancel;
each run is made twice, interleaved, and averaged). When each worker of an island wrote every
arrival to its migration log, it was 2.6-2.9 on a 2-core machine; with emigrants sent to
every worker of the other islands 1.9-2.5; it is 1.7-1.8 now.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.mpi_utils import SCRIPTS, run_mpi

pytestmark = [pytest.mark.mpi, pytest.mark.slow, pytest.mark.serial]

#: CPU per evaluation with migration at every step / without migration, at most.
BOUND = 2.3


def _ms_per_evaluation(out: Path, probability: float) -> float:
    run_mpi(
        32,
        [str(SCRIPTS / "migration_overhead.py"), str(out), "8", str(probability), "100"],
        timeout=300,
        env={"OMP_NUM_THREADS": "1"},
    )
    report = json.loads((out / "overhead.json").read_text())
    assert report["evaluations"] == 3200
    return float(report["ms_per_evaluation"])


def test_migration_costs_a_bounded_share_of_the_engine_at_32_ranks(tmp_path: Path) -> None:
    # Two runs of each, interleaved, averaged: one pair alone ranged 1.86-2.06 on a quiet
    # machine and once gave 2.52 inside the whole suite, its run without migration at 0.50 ms
    # where 0.71-0.86 is usual.
    runs = {0.0: [], 1.0: []}
    for k in range(2):
        for probability, times in runs.items():
            times.append(_ms_per_evaluation(tmp_path / f"p{probability}-{k}", probability))
    without, with_migration = (sum(t) / len(t) for t in runs.values())
    ratio = with_migration / without
    assert ratio <= BOUND, (
        f"migration made an evaluation cost {ratio:.2f} x the CPU of a run without it "
        f"({with_migration:.2f} ms against {without:.2f} ms per evaluation over 32 ranks in "
        f"8 islands); the bound is {BOUND}: profile the immigration path "
        "(benchmarks/scaling.py --ranks 128/32 prints its share)"
    )
