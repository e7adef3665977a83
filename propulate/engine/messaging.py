"""Non-blocking message passing between workers, and polling that does not spin.

All traffic between workers goes through one :class:`Messenger` on a private duplicate of the
workers' communicator, with a single tag. MPI keeps messages between a pair of processes with
the same tag and communicator in order, which the termination protocol of
:mod:`propulate.engine.worker` relies on: once a peer's final message has arrived, everything
that peer sent before it has arrived too.

Sends are ``isend`` with the request kept until it completes (so nothing is ever dropped and
large messages past the eager limit cannot deadlock); receives are matched with ``improbe`` and
completed with ``irecv``, so a worker never blocks inside MPI. :class:`~propulate.polling.Backoff` sleeps with a
growing interval while there is nothing to do, so idle ranks on an oversubscribed machine leave
the CPU to the ranks that compute (MPICH spins at full speed inside blocking calls).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import Any

from mpi4py import MPI

from propulate.polling import Backoff

TAG = 7341

# Message kinds (first element of every message).
IND = 0  # evaluated individuals (a list), to the other workers of its island
MIG = 1  # emigrants, to the workers of a target island
DEACT = 2  # uids to take out of breeding, to the workers of an island
STOP = 3  # the sender will breed no more (payload: abort flag)
DONE = 4  # the sender will send nothing more
SEEN = 5  # a configuration the sender is about to evaluate (finite spaces: avoids repeats)


class Messenger:
    """Tracked non-blocking sends and non-blocking receives over a private communicator.

    Parameters
    ----------
    comm : MPI.Comm
        The workers' communicator; it is duplicated, so traffic never mixes with the caller's.
    """

    def __init__(self, comm: MPI.Comm) -> None:
        self.comm = comm.Dup()
        self.rank = self.comm.Get_rank()
        self.size = self.comm.Get_size()
        self._sent: deque[MPI.Request] = deque()
        self._receiving: list[tuple[int, MPI.Request]] = []
        self.messages_sent = 0
        self.messages_received = 0

    def send(self, dest: int, message: Any) -> None:
        """Send ``message`` (any picklable object) to ``dest`` without blocking."""
        self._sent.append(self.comm.isend(message, dest=dest, tag=TAG))
        self.messages_sent += 1
        self._reap()

    def send_many(self, dests: Iterable[int], message: Any) -> None:
        """Send the same message to several workers, pickling it once.

        The bytes go out as a plain ``Isend`` of ``MPI.BYTE``, which is what mpi4py's pickling
        ``isend`` sends, so receivers read them with :meth:`poll` like any other message. The
        request keeps the buffer alive until the send completes.
        """
        targets = list(dests)
        if len(targets) == 1:
            self.send(targets[0], message)
            return
        data = MPI.pickle.dumps(message)
        for dest in targets:
            self._sent.append(self.comm.Isend([data, MPI.BYTE], dest=dest, tag=TAG))
            self.messages_sent += 1
        self._reap()

    def _reap(self) -> None:
        """Forget the oldest sends that have completed (cheap: stops at the first pending)."""
        sent = self._sent
        while sent and sent[0].Test():
            sent.popleft()

    def poll(self) -> list[tuple[int, Any]]:
        """Every message that can be received now, as ``(source, message)``, in arrival order.

        Messages from one source come out in the order they were sent.
        """
        # Start a receive for every message that has arrived (matched in order per source),
        # then deliver the completed ones; a receive still in flight holds back only the later
        # messages of its own source. Some transports complete a matched receive only on a
        # later test: stopping at the first such message would deliver one message per poll.
        status = MPI.Status()
        misses = 0
        out: list[tuple[int, Any]] = []
        receiving = self._receiving
        while misses < 2:
            msg = self.comm.improbe(source=MPI.ANY_SOURCE, tag=TAG, status=status)
            if msg is None:
                misses += 1
                continue
            misses = 0
            src, req = status.Get_source(), msg.irecv()
            if not receiving:  # nothing of any source in flight: deliver it now if it is done
                done, obj = req.test()
                if done:
                    out.append((src, obj))
                    continue
            receiving.append((src, req))
        if receiving:
            still = []
            blocked: set[int] = set()
            for src, req in self._receiving:
                if src in blocked:
                    still.append((src, req))
                    continue
                done, obj = req.test()
                if done:
                    out.append((src, obj))
                else:
                    blocked.add(src)
                    still.append((src, req))
            self._receiving = still
        self.messages_received += len(out)
        self._reap()
        return out

    @property
    def pending_sends(self) -> int:
        """Sends not known to be complete."""
        self._reap()
        return len(self._sent)

    def flush(self, backoff: Backoff | None = None) -> None:
        """Wait, without spinning, until every send has completed."""
        backoff = backoff or Backoff()
        while self._sent:
            if self._sent[0].Test():
                self._sent.popleft()
                backoff.reset()
            else:
                backoff.sleep()

    def free(self) -> None:
        """Release the private communicator (after :meth:`flush`)."""
        self.comm.Free()
