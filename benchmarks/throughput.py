"""Evaluations per second of the engine on a zero-cost 20-dimensional sphere.

Run on 2 ranks (the figures the optimizer issue asks for):

    mpiexec -n 2 python benchmarks/throughput.py            # 2,000 / 20,000 / 100,000
    mpiexec -n 2 python benchmarks/throughput.py 5000 50000
    mpiexec -n 2 python benchmarks/throughput.py --no-budget     # generations, no global budget
    mpiexec -n 2 python benchmarks/throughput.py --bare          # no space, no record fields
    mpiexec -n 2 python benchmarks/throughput.py --propagator cma  # another propagator

By default the engine gets what ``python -m propulate evolve`` gives it: the search space (so
the no-repeat rule keys every configuration on its typed values) and the records' ``task``,
``run`` and ``method`` fields; ``--bare`` runs the Propulate-1.2 style call without them.

For every total budget it runs one fresh optimization (``--propagator``: a name of
:data:`propulate.propagators.registry.PROPAGATORS`, default ``ga``: the default propagator with
pop_size 8; one island, or for ``portfolio`` one per entry of its plan; logs written to a temporary directory as in a real run) and prints the total evaluations per second
over all ranks, measured from the start of ``propulate()`` to the end of the final drain, plus
the time of ``summarize()`` and how many evaluations each rank ran (with a global budget a rank
slowed by the budget's progress thread leaves more to the others). Target: >= 10,000 evaluations/s at every size, and the rate at
the largest size at least 0.8 x the rate at the smallest.

Absolute rates differ twofold between machines of the same kind, so every size also runs the
*floor* of any asynchronous engine in the same command, and the engine's rate is printed as a
ratio to it (target: >= 0.5). The floor is a bare mpi4py loop that per evaluation draws a point
(the same named parameters), evaluates the zero-cost sphere (the same Python function the
engine evaluates, :func:`sphere`), writes one JSON line to its own
log (flushed every 1,000 lines), sends the point and its loss to every other rank with
``isend`` and takes in what its peers sent with ``Iprobe``/``recv``, and does nothing else; the
ranks split the evaluations evenly, and a run ends when every rank has received all of its
peers' evaluations. The floor encodes its lines with the standard library's ``json``;
``--floor-encoder orjson`` gives it the engine's encoder (orjson), to show how much of the ratio
is the encoder. ``--no-floor`` skips it. Each size runs ``--repeats`` pairs (default 3),
the floor and then the engine: the machine's speed drifts by up to a factor of two over
minutes, so each ratio compares two runs made one right after the other, and the table prints
the medians and the range of the ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

from mpi4py import MPI

from propulate import Islands, get_default_propagator
from propulate.problems.benchmark import sphere_nd
from propulate.space import SearchSpace


def sphere(params: dict[str, float]) -> float:
    """The zero-cost objective of the engine and of the floor alike (one function for both,
    so that the ratio compares what is around it)."""
    return sum(v * v for v in params.values())


def one_run(
    total: int, directory: str, budget: bool = True, bare: bool = False, propagator: str = "ga"
) -> tuple[float, float, list[int]]:
    """Seconds for ``total`` evaluations and for ``summarize()``, and each rank's evaluations
    (how evenly the ranks shared the work; on rank 0, empty elsewhere).

    With ``budget`` the run stops on a global budget of ``total`` evaluations (claimed from
    rank 0's counter); without, every rank runs ``total / ranks`` generations. Unless ``bare``,
    the engine gets the space and record fields the evolve command gives it.
    """
    comm = MPI.COMM_WORLD
    bench = sphere_nd(20)
    rng = random.Random(7 + comm.rank)
    islands = 1
    if propagator == "ga":
        prop = get_default_propagator(8, bench.limits, 0.7, 0.4, 0.1, rng=rng)
    else:
        from propulate.propagators.portfolio import portfolio_islands
        from propulate.propagators.registry import make_propagator
        from propulate.settings import EvolveSettings

        islands = portfolio_islands(propagator, comm.Get_size())
        settings = EvolveSettings(islands=islands, propagator=propagator)
        space = SearchSpace.from_limits(bench.limits)
        prop = make_propagator(propagator, space, settings, rng)
    stop = {"max_evaluations": total} if budget else {"generations": total // comm.Get_size()}
    if not bare:
        stop["space"] = SearchSpace.from_limits(bench.limits)
        stop["meta"] = {"task": "sphere", "run": "seed0", "method": "propulate"}
    opt = Islands(
        sphere,
        prop,
        rng,
        num_islands=islands,
        checkpoint_path=directory,
        progress_interval=1e9,
        **stop,
    )
    comm.Barrier()
    t = time.perf_counter()
    opt.propulate()
    elapsed = comm.allreduce(time.perf_counter() - t, op=MPI.MAX)
    counts = comm.gather(opt.worker.evaluations, root=0) or []
    t = time.perf_counter()
    opt.summarize(top_n=1)
    return elapsed, time.perf_counter() - t, counts


def floor_run(total: int, directory: str, encoder: str = "json") -> float:
    """Seconds of the bare asynchronous loop (module docstring) for ``total`` evaluations; its
    lines are encoded with ``encoder``: ``json`` (the standard library, the floor's definition)
    or ``orjson`` (the engine's encoder)."""
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    limits = sphere_nd(20).limits
    names = list(limits)
    bounds = [limits[k] for k in names]
    rng = random.Random(7 + rank)
    others = [r for r in range(size) if r != rank]
    mine = total // size + (rank < total % size)
    expected = total - mine
    received = 0
    status = MPI.Status()
    sends: list[MPI.Request] = []
    path = os.path.join(directory, f"floor-{rank}.jsonl")
    if encoder == "orjson":
        import orjson

        log: Any = open(path, "wb")  # noqa: SIM115
        dumps: Callable[[Any], Any] = orjson.dumps
        newline: Any = b"\n"
    else:
        log = open(path, "w", encoding="utf-8")  # noqa: SIM115
        dumps, newline = json.dumps, "\n"
    comm.Barrier()
    t = time.perf_counter()
    for i in range(mine):
        point = {k: rng.uniform(lo, hi) for k, (lo, hi) in zip(names, bounds, strict=True)}
        loss = sphere(point)
        log.write(dumps({"params": point, "loss": loss}) + newline)
        if i % 1000 == 999:
            log.flush()
        for dest in others:
            sends.append(comm.isend((point, loss), dest=dest, tag=11))
        while comm.Iprobe(source=MPI.ANY_SOURCE, tag=11, status=status):
            comm.recv(source=status.Get_source(), tag=11)
            received += 1
        if len(sends) >= 1000:
            sends = [r for r in sends if not r.Test()]
    while received < expected:
        if comm.Iprobe(source=MPI.ANY_SOURCE, tag=11, status=status):
            comm.recv(source=status.Get_source(), tag=11)
            received += 1
        else:
            time.sleep(1e-4)
    MPI.Request.Waitall(sends)
    log.close()
    return comm.allreduce(time.perf_counter() - t, op=MPI.MAX)


def _remove(directory: str) -> None:
    """Delete a run's scratch directory once every rank is done with it (a run of 100,000
    writes 70 MB of records)."""
    comm = MPI.COMM_WORLD
    comm.Barrier()
    if comm.rank == 0:
        shutil.rmtree(directory, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "sizes",
        nargs="*",
        type=int,
        default=[2_000, 20_000, 100_000],
        help="total evaluations of each run (default: 2000 20000 100000)",
    )
    parser.add_argument(
        "--no-budget",
        action="store_true",
        help="stop on generations per rank instead of a global budget",
    )
    parser.add_argument(
        "--bare",
        action="store_true",
        help="no search space and no record fields (Propulate 1.2's call)",
    )
    parser.add_argument(
        "--propagator",
        default="ga",
        help="a registered propagator: ga (default), cma, pso, nm, portfolio, random",
    )
    parser.add_argument(
        "--no-floor", action="store_true", help="skip the bare mpi4py loop (the floor)"
    )
    parser.add_argument(
        "--floor-encoder",
        choices=("json", "orjson"),
        default="json",
        help="the floor's JSON encoder: the standard library's (default, the floor as defined)"
        " or orjson (the engine's)",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=3,
        help="floor-then-engine pairs per size; the medians are printed (default 3)",
    )
    args = parser.parse_args()
    comm = MPI.COMM_WORLD
    budget = not args.no_budget
    sizes = args.sizes
    rates = []
    if comm.rank == 0:
        how = "global budget" if budget else "generations (no budget)"
        what = "bare" if args.bare else "as the evolve command (space, record fields)"
        print(
            f"zero-cost 20-D sphere, {comm.Get_size()} ranks, propagator {args.propagator}, "
            f"{how}, {what}"
        )
        print(
            f"{'evaluations':>12} {'seconds':>9} {'evals/s':>10} {'summarize s':>12}"
            f" {'floor evals/s':>14} {'engine/floor':>13} {'(min-max)':>11}"
            "  evaluations per rank (last run)"
        )
    for n in sizes:
        engine_rates, floor_rates, ratios, summs, counts = [], [], [], [], []
        for _ in range(args.repeats):
            # floor and engine one after the other, then again: a ratio compares two runs of
            # the same minute (the machine's speed drifts by a factor of two over minutes)
            floor = None
            if not args.no_floor:
                floor_dir = comm.bcast(
                    tempfile.mkdtemp(prefix="propulate-floor-") if comm.rank == 0 else None
                )
                floor = n / floor_run(n, floor_dir, args.floor_encoder)
                floor_rates.append(floor)
                _remove(floor_dir)
            directory = comm.bcast(
                tempfile.mkdtemp(prefix="propulate-bench-") if comm.rank == 0 else None
            )
            elapsed, summ, counts = one_run(n, directory, budget, args.bare, args.propagator)
            _remove(directory)
            engine_rates.append(n / elapsed)
            summs.append(summ)
            if floor is not None:
                ratios.append(n / elapsed / floor)
        rate = statistics.median(engine_rates)
        rates.append(rate)
        if comm.rank == 0:
            tail = ""
            if ratios:
                spread = f"{min(ratios):.2f}-{max(ratios):.2f}"
                tail = (
                    f" {statistics.median(floor_rates):>14,.0f}"
                    f" {statistics.median(ratios):>13.2f} {spread:>11}"
                )
            share = " / ".join(f"{c:,}" for c in counts)
            print(
                f"{n:>12,} {n / rate:>9.2f} {rate:>10,.0f} {statistics.median(summs):>12.3f}"
                f"{tail}  {share}",
                flush=True,
            )
    if comm.rank == 0 and len(rates) > 1:
        print(f"rate at {sizes[-1]:,} / rate at {sizes[0]:,} = {rates[-1] / rates[0]:.2f}")


if __name__ == "__main__":
    main()
