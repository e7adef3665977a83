"""Never evaluate a configuration twice: the configurations a worker has seen, and breeding
that avoids them.

Every configuration a worker evaluated, received from an island peer, received as an immigrant
or resumed from the logs is *seen* (a hash set of keys, so a check costs ``O(1)``). When the
propagator breeds a seen configuration, it breeds again a few times; then a random unseen
configuration is drawn. A finite space (integer and categorical parameters only) whose feasible
configurations are all seen is *exhausted* and the run ends. Two workers may still breed the
same child at the same moment, before either has heard of the other's.

In a conditional space keys hold the active values only (two configurations that differ in an
inactive parameter are the same), and a bred child that is not condition-consistent (a custom
propagator's) is completed: inactive genes dropped, missing active ones drawn at random.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from propulate.population import Individual
from propulate.propagators.base import Propagator
from propulate.space import Categorical, Integer, SearchSpace, SpaceError

#: Finite spaces up to this size are enumerated once random draws stop finding unseen points.
ENUMERATION_LIMIT = 1_000_000


def space_size(space: SearchSpace) -> int | None:
    """Number of configurations of a space of integers and categoricals (None: infinite)."""
    size = 1
    for dim in space.dimensions.values():
        if isinstance(dim, Categorical):
            size *= len(dim.choices)
        elif isinstance(dim, Integer):
            size *= int(dim.high) - int(dim.low) + 1
        else:
            return None
    return size


class SeenConfigurations:
    """A hash set of configuration keys.

    Parameters
    ----------
    space : SearchSpace or None
        Gives the keys (:meth:`SearchSpace.key`: values cast to their types) and the random
        draws; without one, keys are the parameter items and no random draw is possible.
    """

    def __init__(self, space: SearchSpace | None) -> None:
        self.space = space
        self._space_key = space.key_function() if space is not None else None
        self._keys: set[Hashable] = set()
        self.size = space_size(space) if space is not None else None
        self._candidates: list[dict[str, Any]] | None = None
        self._checked: tuple[object, Hashable | None] = (None, None)  # the last asked, its key
        self._taken: object = None  # the last configuration :meth:`take` marked seen

    def key(self, params: Mapping[str, Any]) -> Hashable | None:
        """The configuration's key (None when it cannot be hashed or read)."""
        try:
            if self._space_key is not None:
                return self._space_key(params)
            key = tuple(params.items())
            hash(key)
            return key
        except (KeyError, TypeError, ValueError):
            return None

    def add(self, params: Mapping[str, Any]) -> None:
        """Mark a configuration seen."""
        if params is self._taken:  # marked when it was bred
            self._taken = None
            return
        last, key = self._checked
        if params is not last:
            key = self.key(params)
        self._checked = (None, None)
        if key is not None:
            self._keys.add(key)

    def take(self, params: Mapping[str, Any]) -> bool:
        """Whether ``params`` is unseen; if so it is seen from now on (one hash of its key for
        both, where a check and the :meth:`add` after its evaluation cost two: the breeder's
        question for every child of an infinite space, whose children peers do not announce)."""
        key = self.key(params)
        if key is None:
            return True
        keys = self._keys
        before = len(keys)
        keys.add(key)
        if len(keys) == before:
            return False
        self._taken = params
        return True

    def __contains__(self, params: object) -> bool:
        key = self.key(params)  # type: ignore[arg-type]
        # the breeder asks about a child, the worker adds it after its evaluation: keyed once
        self._checked = (params, key)
        return key is not None and key in self._keys

    def __len__(self) -> int:
        return len(self._keys)

    def draw_unseen(
        self, rng: np.random.Generator, task: Mapping[str, Any] | None, tries: int = 64
    ) -> dict[str, Any] | None:
        """A random feasible configuration not seen yet; None when there is none to be found
        (see :attr:`exhausted`)."""
        space = self.space
        if space is None:
            return None
        if self._candidates is None:
            for _ in range(tries):
                try:
                    params = space.sample(rng, task, max_tries=1000)
                except SpaceError:
                    break
                if params not in self:
                    return params
            if self.size is None or self.size > ENUMERATION_LIMIT:
                return None
            self._candidates = self._enumerate(task)
            random.Random(int(rng.integers(2**63))).shuffle(self._candidates)
        while self._candidates:
            params = self._candidates.pop()
            if params not in self:
                return params
        return None

    @property
    def exhausted(self) -> bool:
        """Whether every feasible configuration of a finite space has been seen."""
        return self._candidates is not None and not self._candidates

    def _enumerate(self, task: Mapping[str, Any] | None) -> list[dict[str, Any]]:
        assert self.space is not None
        names = self.space.names
        axes: list[Sequence[Any]] = []
        for dim in self.space.dimensions.values():
            if isinstance(dim, Categorical):
                axes.append(dim.choices)
            else:
                axes.append(range(int(dim.low), int(dim.high) + 1))  # type: ignore[union-attr]
        out, keys = [], set()
        for values in itertools.product(*axes):
            params = self.space.active(dict(zip(names, values, strict=True)))
            if params not in self and self.space.satisfies(params, task):
                key = self.space.key(params)
                if key not in keys:  # a conditional space's inactive values repeat
                    keys.add(key)
                    out.append(params)
        return out


class Breeder:
    """Breeds one new individual per call, feasible and unseen where possible.

    Parameters
    ----------
    propagator : Propagator
        The breeding operator.
    space : SearchSpace or None
        For constraints, keys and random draws.
    task : mapping or None
        Handed to a task-dependent constraint.
    rng : numpy Generator
        Randomness of the fallback draws.
    rebreed : int
        How many times a seen child is bred again before a random unseen one is drawn.
    """

    def __init__(
        self,
        propagator: Propagator,
        space: SearchSpace | None,
        task: Mapping[str, Any] | None,
        rng: np.random.Generator,
        rebreed: int = 4,
    ) -> None:
        self.propagator, self.space, self.task, self.rng = propagator, space, task, rng
        self.seen = SeenConfigurations(space)
        self.rebreed = rebreed
        self.duplicates_avoided = 0

    def _unseen(self, ind: Individual) -> bool:
        return ind not in self.seen

    def _feasible(self, view: Sequence[Individual]) -> Individual:
        space, task = self.space, self.task
        for _ in range(100):
            out = self.propagator(view)
            ind = out[0] if isinstance(out, list) else out
            if not isinstance(ind, Individual) or ind.uid is not None:
                ind = Individual(ind)  # never hand out a population member
            if space is not None and space.conditions and not space.in_bounds(ind):
                genes = space.complete(ind, lambda n, d: d.decode(float(self.rng.random())))
                ind.clear()
                ind.update(genes)
            if space is None or not space.constrained or space.satisfies(ind, task):
                return ind
        assert space is not None
        return Individual(space.sample(self.rng, task))

    def __call__(self, view: Sequence[Individual]) -> Individual | None:
        """A new individual; None when a finite space is exhausted. In an infinite space it
        is marked seen here, as it is bred (in a finite one when it has been evaluated: the
        worker looks again at what its peers announced meanwhile)."""
        unseen = self.seen.take if self.seen.size is None else self._unseen
        ind = self._feasible(view)
        for _ in range(self.rebreed):
            if unseen(ind):
                return ind
            self.duplicates_avoided += 1
            ind = self._feasible(view)
        if unseen(ind):
            return ind
        params = self.seen.draw_unseen(self.rng, self.task)
        if params is not None:
            return Individual(params)
        return None if self.seen.exhausted else ind
