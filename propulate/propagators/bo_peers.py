"""What the other workers are evaluating: the ``bo`` propagator's pending points.

The engine tells a propagator about evaluations once they are *finished*
(:meth:`~propulate.propagators.base.Propagator.observe`); the ``bo`` propagator also needs the
ones still *running*, so that two workers do not propose the same point. :class:`Peers` sends
each proposal, before it is evaluated, to the other workers' propagators and keeps the latest
proposal of each of them as pending until its evaluation is observed or the worker proposes
again (a worker evaluates one configuration at a time).

The messages travel on a communicator of the workers' leading ranks (the ranks that breed:
every ``group``-th rank with ``group`` ranks per worker), made by
``MPI.COMM_WORLD.Create_group`` when the engine tells the propagator its rank
(:meth:`~propulate.propagators.base.Propagator.bind`, which the engine calls on every leading
rank while it sets up its workers, collectively): not on ``COMM_WORLD`` itself, whose
finalization MPICH refuses while messages are unmatched, and a worker's last announcements are
never received. The communicator is never freed, for the same reason; each run makes its own,
so a later run in the same processes never sees an earlier run's points. Sends are ``isend``
of a few hundred bytes, kept until complete; receives poll with ``iprobe`` and never block.
Outside MPI (one process, or a rank that does not match ``COMM_WORLD``'s, as in
:func:`propulate.testing.check_propagator` or a run on a sub-communicator) it does nothing.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: The tag of the pending-point messages (and of the communicator's creation).
TAG = 7919


class Peers:
    """Announces this worker's proposals and collects the other workers' pending ones.

    Parameters
    ----------
    group : int
        Ranks per worker (the leaders, every ``group``-th rank, breed).
    """

    def __init__(self, group: int = 1) -> None:
        self.group = max(1, int(group))
        self.rank: int | None = None
        self.targets: list[int] = []
        self.pending: dict[int, np.ndarray] = {}
        self.received = 0  # announcements taken in
        self.most = 0  # the most points pending at once
        self._comm: Any = None
        self._any = -1
        self._sends: list[Any] = []

    def __deepcopy__(self, memo: dict[int, Any]) -> Peers:
        """A copy that is not connected (MPI requests are not copied)."""
        out = Peers(self.group)
        out.pending = {r: x.copy() for r, x in self.pending.items()}
        return out

    def connect(self, rank: int) -> None:
        """Join the other workers when this process is leading rank ``rank`` of a multi-worker
        ``MPI.COMM_WORLD`` (called from the propagator's ``bind``; collective over the leading
        ranks)."""
        try:
            from mpi4py import MPI
        except ImportError:  # pragma: no cover - mpi4py is a dependency
            return
        world = MPI.COMM_WORLD
        leaders = list(range(0, world.Get_size(), self.group))
        if len(leaders) < 2 or world.Get_rank() != rank or rank not in leaders:
            return
        group = world.Get_group().Incl(leaders)
        comm = world.Create_group(group, tag=TAG)  # collective over the leaders only
        group.Free()
        self._comm, self.rank, self._any = comm, rank, MPI.ANY_SOURCE
        self.targets = [r for r in range(comm.Get_size()) if r != comm.Get_rank()]

    @property
    def connected(self) -> bool:
        """Whether proposals are exchanged."""
        return self._comm is not None

    def announce(self, x: np.ndarray) -> None:
        """Tell the other workers this worker is about to evaluate the encoded point ``x``."""
        if self._comm is None:
            return
        self._sends = [req for req in self._sends if not req.Test()]
        message = (self.rank, np.asarray(x, dtype=float).tolist())
        for target in self.targets:
            self._sends.append(self._comm.isend(message, dest=target, tag=TAG))

    def receive(self) -> None:
        """Take in every announcement that has arrived (the latest per worker is kept)."""
        comm = self._comm
        if comm is None:
            return
        while comm.iprobe(source=self._any, tag=TAG):
            rank, x = comm.recv(source=self._any, tag=TAG)
            self.pending[int(rank)] = np.asarray(x, dtype=float)
            self.received += 1
        self.most = max(self.most, len(self.pending))

    def resolve(self, x: np.ndarray) -> None:
        """An evaluation of ``x`` was observed: it is pending no more."""
        for rank, p in list(self.pending.items()):
            if p.shape == x.shape and np.allclose(p, x, rtol=0.0, atol=1e-12):
                del self.pending[rank]

    def points(self) -> np.ndarray:
        """The pending points, one row each (in rank order)."""
        if not self.pending:
            return np.empty((0, 0))
        return np.array([self.pending[r] for r in sorted(self.pending)])
