"""The BLAS and OpenMP threads of each MPI rank of an ``evolve`` job.

Every rank inherits its launcher's environment; without a limit each one's BLAS starts a
thread per core, so ``n`` ranks on ``c`` cores run ``n * c`` threads, and a numpy objective
runs several times slower than with one thread per core. Unless the user set a thread
variable (:data:`USER_VARIABLES`), each rank gets its share of the cores its node's ranks
were given: the union of their CPU affinities divided by their number, at least 1, and at
most Slurm's ``SLURM_CPUS_PER_TASK`` where that is set. The choice is exported to the
rank's environment (for the programs an objective starts) and applied to the thread pools
already loaded (``threadpoolctl``); :func:`rank_threads` restores both when the run ends.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

#: Variables that, set by the user, leave every thread count as the user chose.
USER_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
#: Variables set to the rank's share when the user set none of :data:`USER_VARIABLES`.
SET_VARIABLES = (
    *USER_VARIABLES,
    "GOTO_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
)


@dataclass(frozen=True)
class ThreadChoice:
    """The threads a rank runs and why.

    Attributes
    ----------
    per_rank : int or None
        Threads per rank (``None``: left to the user's variables).
    source : str
        ``"environment"`` (the user's variables), ``"slurm"`` (capped by
        ``SLURM_CPUS_PER_TASK``) or ``"cores"`` (the node's cores over its ranks).
    detail : dict
        The figures the choice was made from: the user's variables, or ``cores`` and
        ``ranks`` of the node (and ``cpus_per_task`` under Slurm).
    """

    per_rank: int | None
    source: str
    detail: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The choice as JSON-ready data (``run.json``'s ``threads``)."""
        return {"per_rank": self.per_rank, "source": self.source, **self.detail}

    def describe(self) -> str:
        """The choice in words, e.g. ``"1 per rank (2 cores, 2 ranks on this node)"``."""
        if self.per_rank is None:
            given = ", ".join(f"{k}={v}" for k, v in self.detail["variables"].items())
            return f"as set ({given})"
        why = f"{self.detail['cores']} cores, {self.detail['ranks']} ranks on this node"
        if "cpus_per_task" in self.detail:
            why += f", SLURM_CPUS_PER_TASK={self.detail['cpus_per_task']}"
        return f"{self.per_rank} per rank ({why})"


def choose_threads(environ: Mapping[str, str], cores: int, ranks: int) -> ThreadChoice:
    """The threads of one rank whose node gave ``cores`` cores to ``ranks`` ranks.

    Parameters
    ----------
    environ : mapping
        The rank's environment.
    cores : int
        Cores given to the node's ranks of the job (the union of their affinities).
    ranks : int
        The job's ranks on the node.
    """
    user = {k: environ[k] for k in USER_VARIABLES if environ.get(k, "").strip()}
    if user:
        return ThreadChoice(None, "environment", {"variables": user})
    share = max(1, cores // max(1, ranks))
    detail: dict[str, Any] = {"cores": cores, "ranks": ranks}
    slurm = _positive_int(environ.get("SLURM_CPUS_PER_TASK"))
    if slurm is None:
        return ThreadChoice(share, "cores", detail)
    return ThreadChoice(min(share, slurm), "slurm", {**detail, "cpus_per_task": slurm})


def _positive_int(text: str | None) -> int | None:
    try:
        value = int(str(text).strip())
    except ValueError:
        return None
    return value if value > 0 else None


def own_cpus() -> set[int]:
    """The CPUs this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return set(os.sched_getaffinity(0))
    return set(range(os.cpu_count() or 1))


def node_share(comm: Any) -> tuple[int, int]:
    """The cores given to the ranks of ``comm`` on this node and their number (collective).

    The cores are the union of the ranks' CPU affinities: all the node's cores when the
    launcher binds nothing, the ranks' own cores when it binds each to some.
    """
    from mpi4py import MPI

    local = comm.Split_type(MPI.COMM_TYPE_SHARED)
    try:
        cpus: set[int] = set().union(*local.allgather(sorted(own_cpus())))
        return len(cpus), local.Get_size()
    finally:
        local.Free()


@contextmanager
def rank_threads(
    comm: Any, environ: MutableMapping[str, str] | None = None
) -> Iterator[ThreadChoice]:
    """Limit this rank's threads to its share for the body (collective over ``comm``).

    Yields the :class:`ThreadChoice`; the environment and the thread pools' limits are
    restored afterwards.
    """
    env = os.environ if environ is None else environ
    cores, ranks = node_share(comm)
    choice = choose_threads(env, cores, ranks)
    if choice.per_rank is None:
        yield choice
        return
    from threadpoolctl import threadpool_limits

    before = {k: env.get(k) for k in SET_VARIABLES}
    env.update({k: str(choice.per_rank) for k in SET_VARIABLES})
    limits = threadpool_limits(limits=choice.per_rank)
    try:
        yield choice
    finally:
        limits.restore_original_limits()
        for k, v in before.items():
            if v is None:
                env.pop(k, None)
            else:
                env[k] = v


def restore_user_variables(environ: Mapping[str, str]) -> str:
    """A shell prefix giving a job the thread variables of ``environ`` and no others.

    Snakemake sets every thread variable of a rule's job to the rule's threads (the ranks of
    an ``evolve`` job), which :func:`choose_threads` would take for the user's. Computed
    where Snakemake reads the workflow (its environment is the user's), the prefix unsets
    them and exports back only those the user set.
    """
    import shlex

    exports = "".join(
        f"export {k}={shlex.quote(environ[k])}; " for k in SET_VARIABLES if k in environ
    )
    return f"unset {' '.join(SET_VARIABLES)}; {exports}"
