"""Individuals and a worker's view of the population.

An :class:`Individual` is a configuration (a ``dict`` of parameter name to value, as in
Propulate 1.2) with its bookkeeping: loss, origin, island, whether it is active for breeding.

A :class:`Population` is what one worker knows: every individual it evaluated or received, per
island an ordered index of the *active, successfully evaluated* individuals (by loss), and the
deactivations that arrived before their individual. Every operation the engine performs per
generation costs ``O(log n)`` or ``O(pop_size)``, never ``O(n)``: the breeding pool, the
emigrants and the individuals to replace are read off the ordered index.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, overload

import numpy as np
from sortedcontainers import SortedList

from propulate.runs.status import FAILURE_STATUSES, LOSS_STATUSES

#: An individual's bookkeeping fields, in order (its slots, but for a population's own ``_lid``).
FIELDS = (
    "generation",
    "rank",
    "loss",
    "active",
    "island",
    "current",
    "migration_steps",
    "evaltime",
    "evalperiod",
    "uid",
    "status",
    "error",
    "state",
    "curve",
    "objectives",
)


class Individual(dict):
    """A configuration with its evolutionary bookkeeping.

    The parameters are the dict items (``ind["x"]``), so a loss function receives the individual
    itself as its ``params`` mapping.

    Parameters
    ----------
    position : mapping, optional
        Parameter name to value.
    limits : mapping, optional
        Accepted for Propulate 1.2 compatibility; unused.
    generation : int
        Generation of the worker that bred it (``-1`` before it is assigned).
    rank : int
        MPI rank of the worker that bred and evaluated it.

    Attributes
    ----------
    loss : float or None
        The loss, ``None`` until evaluated; ``inf`` for a failed evaluation.
    active : bool
        Whether it may be selected for breeding on its island.
    island : int
        The island it currently lives on.
    current : int
        The worker (rank in the island) responsible for it, used when choosing emigrants.
    migration_steps : int
        How often it migrated.
    evaltime : float or None
        Unix time at which its evaluation started.
    evalperiod : float or None
        Seconds its evaluation took.
    uid : str or None
        Global identity, ``"<session>:<rank>:<seq>"``.
    status : str
        A status of :data:`propulate.runs.status.STATUSES`; only individuals with a loss
        (``"ok"``) are bred from.
    error : str or None
        The error text of a failed evaluation.
    state : dict or None
        The propagator's per-individual state (JSON-ready, e.g. a particle's velocity), set
        by the propagator that bred it; carried to the peers, written into the record and
        restored on resume.
    curve : list or None
        The intermediate values its evaluation reported, ``[[step, value], ...]`` (``None``
        when the objective reported none); pruners compare curves across ranks.
    objectives : dict or None
        With declared objectives, each objective's value (natural units); ``None`` without.
    """

    __slots__ = (*FIELDS, "_lid")  # _lid: its place in the Population that took it in last

    def __init__(
        self,
        position: Mapping[str, Any] | None = None,
        limits: Mapping[str, Any] | None = None,
        generation: int = -1,
        rank: int = -1,
    ) -> None:
        super().__init__(position or {})
        self.generation = generation
        self.rank = rank
        self.loss: float | None = None
        self.active = True
        self.island = -1
        self.current = -1
        self.migration_steps = 0
        self.evaltime: float | None = None
        self.evalperiod: float | None = None
        self.uid: str | None = None
        self.status = "ok"
        self.error: str | None = None
        self.state: dict[str, Any] | None = None
        self.curve: list[list[float]] | None = None
        self.objectives: dict[str, float] | None = None

    @property
    def position(self) -> np.ndarray:
        """The numeric parameter values as an array (categoricals are left out)."""
        return np.array([v for v in self.values() if not isinstance(v, str)], dtype=float)

    @property
    def failed(self) -> bool:
        """Whether the evaluation gave no loss (it failed, was interrupted or pruned): such an
        individual is never bred from."""
        return self.status not in LOSS_STATUSES

    def copy(self) -> Individual:  # type: ignore[override]
        """A fresh, unevaluated individual with the same parameters (and no state)."""
        return Individual(self)

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.items())
        return (
            f"Individual({params}; loss={self.loss}, island={self.island}, rank={self.rank}, "
            f"generation={self.generation}, active={self.active})"
        )

    def __eq__(self, other: object) -> bool:
        # Identity of an evaluation, not equality of parameters, as the population tracks it.
        return self is other

    def __ne__(self, other: object) -> bool:
        # dict defines its own __ne__ (by parameters); keep it consistent with __eq__.
        return self is not other

    def __hash__(self) -> int:
        return id(self)


class _Losses(SortedList):
    """Losses in order, in sublists of 200 (sortedcontainers' 1,000 moved more pointers per
    insertion)."""

    DEFAULT_LOAD_FACTOR = 200


class LossIndex:
    """An island's active individuals (their local ids) ordered by loss, ties by arrival.

    The order is kept on the losses alone, plain floats, and a dictionary gives the local ids
    of each loss (one, or a list in arrival order when several share it): inserting compares
    floats, not ``(loss, id)`` pairs, which on a large population costs half the memory reads.

    Breeding asks for the same head (the best ``k``, its pool) before every child, and an
    arrival rarely changes it: the head is kept between arrivals and an arrival better than
    its last member is put into it. The full order is only needed to read past the head
    (emigrants, a summary), so arrivals wait unsorted until such a read (``_pending``): an
    arrival costs a comparison and an append, not a sorted insertion (2 microseconds at
    100,000 individuals, a sixth of what a worker spends per child it breeds at zero cost).
    """

    def __init__(self) -> None:
        self.losses = _Losses()  # sorted: every indexed loss but those in _pending
        self._pending: list[float] = []  # indexed losses not sorted in yet
        self._n = 0  # how many are indexed (asked before every child: kept, not summed)
        self.holders: dict[float, int | list[int]] = {}
        # The head last asked for: the best ``_want`` ids (all, when fewer are indexed), their
        # losses, and the loss below which an arrival enters it (any loss while not full).
        self._head: list[int] | None = None
        self._head_losses: list[float] = []
        self._want = 0
        self._bound = math.inf

    def __len__(self) -> int:
        return self._n

    def _sorted(self) -> _Losses:
        """Every indexed loss in order (the arrivals since the last full read sorted in)."""
        if self._pending:
            self.losses.update(self._pending)
            self._pending = []
        return self.losses

    def add(self, loss: float, lid: int) -> None:
        """Index ``lid`` at ``loss`` (after the ids already there: ids grow with arrival)."""
        holders = self.holders
        held = holders.get(loss)
        if held is None:
            holders[loss] = lid
        elif type(held) is int:
            holders[loss] = [held, lid]
        else:
            held.append(lid)  # type: ignore[union-attr]
        self._pending.append(loss)
        self._n += 1
        if loss < self._bound and self._head is not None:
            self._enter(loss, lid)

    def _enter(self, loss: float, lid: int) -> None:
        """Put an arrival better than the head's last member into the head (a new list: a
        head handed out is never changed)."""
        head, losses = self._head, self._head_losses
        at = bisect.bisect_right(losses, loss)  # after equal losses: they arrived earlier
        end = len(head) if len(head) < self._want else -1  # type: ignore[arg-type]
        self._head = [*head[:at], lid, *head[at:end]]  # type: ignore[index]
        self._head_losses = losses = [*losses[:at], loss, *losses[at:end]]
        if len(losses) == self._want:
            self._bound = losses[-1]

    def discard(self, loss: float, lid: int) -> None:
        """Take ``lid`` out (nothing when it is not indexed at ``loss``)."""
        held = self.holders.get(loss)
        if held is None:
            return
        if type(held) is int:
            if held != lid:
                return
            del self.holders[loss]
        else:
            if lid not in held:  # type: ignore[operator]
                return
            held.remove(lid)  # type: ignore[union-attr]
            if len(held) == 1:  # type: ignore[arg-type]
                self.holders[loss] = held[0]  # type: ignore[index]
        if loss <= self._bound:
            self._head = None
        self._sorted().discard(loss)
        self._n -= 1

    def __iter__(self) -> Iterator[int]:
        """The local ids in order."""
        holders = self.holders
        losses = iter(self._sorted())
        for loss in losses:
            held = holders[loss]
            if type(held) is int:
                yield held
            else:
                yield from held  # type: ignore[misc]
                for _ in range(len(held) - 1):  # type: ignore[arg-type]
                    next(losses)  # the group's other entries

    def at(self, i: int) -> int:
        """The local id at position ``i`` (negative from the end)."""
        losses = self._sorted()
        loss = losses[i]
        held = self.holders[loss]
        if type(held) is int:
            return held
        if i < 0:
            i += len(losses)
        return held[i - losses.bisect_left(loss)]  # type: ignore[index]

    def span(self, start: int, stop: int) -> list[int]:
        """The local ids at positions ``start`` to ``stop`` (``0 <= start <= stop <= len``)."""
        if start == 0 and stop:  # the head (a breeding pool): kept between arrivals
            if self._head is not None and self._want == stop:
                return self._head
            losses = self._sorted()
            head = list(itertools.islice(self, stop))
            self._head, self._want = head, stop
            self._head_losses = list(losses.islice(0, len(head)))
            self._bound = self._head_losses[-1] if len(head) == stop and head else math.inf
            return head
        losses, holders = self._sorted(), self.holders
        picked = losses[start:stop]
        out: list[int] = []
        j = 0
        while j < len(picked):
            loss = picked[j]
            held = holders[loss]
            if type(held) is int:
                out.append(held)
                j += 1
                continue
            first = start + j - losses.bisect_left(loss)  # where in its group position j is
            take = held[first : first + len(picked) - j]  # type: ignore[index]
            out.extend(take)
            j += len(take)
        return out


class SortedView(Sequence[Individual]):
    """A read-only sequence of an island's active individuals, ordered by ascending loss.

    Selection propagators recognise it and take their picks without sorting; any other
    propagator sees an ordinary sequence.
    """

    def __init__(self, index: LossIndex, by_lid: Sequence[Individual]) -> None:
        self._index = index
        self._by_lid = by_lid

    def __len__(self) -> int:
        return self._index._n

    def head(self, k: int) -> list[Individual]:
        """The ``k`` individuals of lowest loss (all, when fewer): ``view[:k]``, as a
        selection asks before every child."""
        by_lid = self._by_lid
        return [by_lid[lid] for lid in self._index.span(0, min(k, self._index._n))]

    @overload
    def __getitem__(self, i: int) -> Individual: ...

    @overload
    def __getitem__(self, i: slice) -> list[Individual]: ...

    def __getitem__(self, i: int | slice) -> Individual | list[Individual]:
        by_lid = self._by_lid
        if isinstance(i, slice):
            start, stop, step = i.indices(len(self._index))
            if step == 1:
                return [by_lid[lid] for lid in self._index.span(start, max(start, stop))]
            lids = self._index.span(0, len(self._index))
            return [by_lid[lids[k]] for k in range(start, stop, step)]
        return by_lid[self._index.at(i)]

    def __iter__(self) -> Iterator[Individual]:
        by_lid = self._by_lid
        return (by_lid[lid] for lid in self._index)


class Population:
    """One worker's view of all islands' individuals.

    Parameters
    ----------
    num_islands : int
        Number of islands; individuals are indexed per island.
    """

    def __init__(self, num_islands: int = 1) -> None:
        self.num_islands = num_islands
        self._by_uid: dict[str, Individual] = {}
        self._by_lid: list[Individual] = []  # local id -> individual, in order of arrival
        self._active = [LossIndex() for _ in range(num_islands)]
        self._views = [SortedView(s, self._by_lid) for s in self._active]
        self._pending_deactivations: set[str] = set()
        self.failures = 0
        self.best: Individual | None = None

    def __len__(self) -> int:
        return len(self._by_lid)

    def __iter__(self) -> Iterator[Individual]:
        return iter(self._by_lid)

    def __contains__(self, uid: object) -> bool:
        return uid in self._by_uid

    def get(self, uid: str) -> Individual | None:
        """The individual with that uid, if known."""
        return self._by_uid.get(uid)

    def add(self, ind: Individual) -> bool:
        """Add an evaluated individual; returns False when its uid is already known.

        It is indexed as active on ``ind.island`` unless it failed, is inactive, or a
        deactivation for it arrived earlier.
        """
        uid = ind.uid
        if uid is not None:
            if uid in self._by_uid:
                return False
            self._by_uid[uid] = ind
        lid = ind._lid = len(self._by_lid)
        self._by_lid.append(ind)
        if uid is not None and self._pending_deactivations and uid in self._pending_deactivations:
            self._pending_deactivations.discard(uid)
            ind.active = False
        loss = ind.loss
        if ind.failed or loss is None or not math.isfinite(loss):
            self.failures += ind.status in FAILURE_STATUSES
            ind.active = False
            return True
        best = self.best
        if best is None or loss < best.loss:  # type: ignore[operator]
            self.best = ind
        if ind.active:
            self._active[ind.island].add(loss, lid)
        return True

    def deactivate(self, uid: str) -> None:
        """Take an individual out of breeding; remembered if it has not arrived yet."""
        ind = self._by_uid.get(uid)
        if ind is None:
            self._pending_deactivations.add(uid)
            return
        self.deactivate_individual(ind)

    def deactivate_individual(self, ind: Individual) -> None:
        """Take a known individual out of breeding (no-op if already inactive)."""
        if ind.active and not ind.failed and ind.loss is not None and math.isfinite(ind.loss):
            self._active[ind.island].discard(ind.loss, self._local_id(ind))
        ind.active = False

    def _local_id(self, ind: Individual) -> int:
        """Where ``ind`` is in :attr:`_by_lid` (-1: not here). Its ``_lid`` says where it is
        in the population that took it in last: another one, if two hold the same object."""
        lid = getattr(ind, "_lid", -1)
        by_lid = self._by_lid
        if 0 <= lid < len(by_lid) and by_lid[lid] is ind:
            return lid
        for lid, held in enumerate(by_lid):
            if held is ind:
                return lid
        return -1

    def active(self, island: int) -> SortedView:
        """The island's active individuals, ascending by loss (an ``O(1)`` view)."""
        return self._views[island]

    def n_active(self, island: int) -> int:
        """Number of active individuals on ``island``."""
        return len(self._active[island])

    def best_of(self, island: int | None = None, top_n: int = 1) -> list[Individual]:
        """The ``top_n`` best successful individuals, active or not (``O(n log top_n)``)."""
        import heapq

        pool = (
            ind
            for ind in self._by_lid
            if not ind.failed
            and ind.loss is not None
            and math.isfinite(ind.loss)
            and (island is None or ind.island == island)
        )
        return heapq.nsmallest(top_n, pool, key=lambda i: i.loss)  # type: ignore[arg-type, return-value]
