"""A registered propagator run by the engine on a slow sphere; reports its state after the
resume (the records replayed through ``observe``) and at the end.

    mpiexec -n 2 python search_resume.py OUT PROPAGATOR BUDGET [ISLANDS]

Rank r writes ``OUT/state-<r>-<session>.json``: ``{"resumed": ..., "final": ...}``, each a
summary of the propagator's state (see :func:`summary`).
"""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path
from typing import Any

from mpi4py import MPI

from propulate.engine.config import EngineConfig
from propulate.engine.worker import Worker
from propulate.propagators.registry import make_propagator
from propulate.settings import EvolveSettings
from propulate.space import Float, Integer, SearchSpace

SPACE = SearchSpace({"a": Float(-5.0, 5.0), "b": Float(-5.0, 5.0), "c": Integer(-8, 8)})


def loss(params: dict[str, Any]) -> float:
    time.sleep(0.003)
    return (params["a"] - 1.0) ** 2 + (params["b"] + 2.0) ** 2 + 0.1 * params["c"] ** 2


def summary(prop: Any) -> dict[str, Any]:
    """What the propagator has learned (its kind's own terms)."""
    member = getattr(prop, "active", prop)  # a portfolio: its worker's member
    out: dict[str, Any] = {"kind": type(member).__name__}
    if hasattr(member, "restart"):  # CMA-ES
        st = member.state
        out.update(
            restart=member.restart,
            seed=member.seed,
            generation=None if st is None else st.generation,
            sigma=None if st is None else st.sigma,
        )
    elif hasattr(member, "simplex"):  # Nelder-Mead
        out.update(own=len(member._own), phase=member._phase)
    elif hasattr(member, "known"):  # TPE: the evaluations it models
        out.update(known=len(member.known))
    elif hasattr(member, "_latest"):  # a swarm
        out.update(
            particles=sorted(member._latest),
            velocities=[member._latest[k].state["v"] for k in sorted(member._latest)],
        )
    return out


def main() -> None:
    out, name, budget = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    islands = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    comm = MPI.COMM_WORLD
    rng = random.Random(5 + comm.rank)
    settings = EvolveSettings(islands=islands, pop_size=4, propagator=name)
    prop = make_propagator(name, SPACE, settings, rng)
    config = EngineConfig(
        checkpoint_path=out,
        max_evaluations=budget,
        num_islands=islands,
        space=SPACE,
        progress_interval=1e9,
    )
    worker = Worker(loss, prop, rng, config, comm)
    resumed = summary(prop)
    worker.run()
    (out / f"state-{comm.rank}-{worker.session}.json").write_text(
        json.dumps({"resumed": resumed, "final": summary(prop)})
    )


if __name__ == "__main__":
    main()
