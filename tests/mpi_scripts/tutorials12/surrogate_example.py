"""The surrogate tutorials' code path: an objective that yields a loss per epoch, run by
``Islands`` with ``surrogate_factory=lambda: <surrogate>()``, as Propulate 1.2's MNIST and
CIFAR-10 examples use them (without torch: the "training" is a sphere that improves per epoch).

    mpiexec -n 2 python surrogate_example.py OUT log|mock

Writes ``OUT/surrogate-<rank>.json``: the calls this rank's surrogate received and, for the
log surrogate, the best final loss it saw.
"""

import json
import random
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mpi4py import MPI
from surrogates import LogSurrogate, MockSurrogate

from propulate import Islands
from propulate.utils import get_default_propagator, set_logger_config

EPOCHS = 3
out, kind = Path(sys.argv[1]), sys.argv[2]
comm = MPI.COMM_WORLD
calls: Counter[str] = Counter()
made: list[Any] = []
base = LogSurrogate if kind == "log" else MockSurrogate


class Counted(base):  # type: ignore[valid-type, misc]
    """The tutorial's surrogate, counting the calls it gets."""

    def start_run(self, ind: Any) -> None:
        calls["start_run"] += 1
        super().start_run(ind)

    def cancel(self, loss: float) -> bool:
        calls["cancel"] += 1
        return super().cancel(loss)

    def update(self, loss: float) -> None:
        calls["update"] += 1
        super().update(loss)


def make() -> Counted:
    made.append(Counted())
    return made[-1]


def training(params: dict[str, float]) -> Iterator[float]:
    """Validation loss per epoch: the sphere, approached from above."""
    final = params["lr"] ** 2 + params["momentum"] ** 2
    for epoch in range(1, EPOCHS + 1):
        yield final + 1.0 / epoch - 1.0 / EPOCHS


set_logger_config(log_file=out / "surrogate.log")
rng = random.Random(11 + comm.rank)
limits = {"lr": (-1.0, 1.0), "momentum": (-1.0, 1.0)}
islands = Islands(
    loss_fn=training,
    propagator=get_default_propagator(pop_size=4, limits=limits, rng=rng),
    rng=rng,
    generations=8,
    num_islands=1,
    checkpoint_path=out,
    surrogate_factory=make,
)
islands.propulate()
islands.summarize()
report: dict[str, Any] = {"calls": dict(calls), "surrogates": len(made)}
if kind == "log":
    report["best_loss"] = made[0].best_loss
(out / f"surrogate-{comm.rank}.json").write_text(json.dumps(report))
