"""Two machine fingerprints and a slower objective shared by the tests of the tuning database
(the drift test names :func:`slower_demo` as an objective reference).
"""

from __future__ import annotations

from typing import Any

from propulate.problems.demo import demo_loss

MACHINE_A = {
    "cpu_model": "A",
    "cores": 2,
    "blas": "openblas 1",
    "mpi": "mpich 4",
    "hostname": "node#",
}
MACHINE_B = {**MACHINE_A, "blas": "openblas 2"}


def slower_demo(params: dict[str, Any], task: dict[str, Any]) -> float:
    """The demo loss on a machine twice as slow (for the drift test)."""
    return 2.0 * demo_loss(params, task)
