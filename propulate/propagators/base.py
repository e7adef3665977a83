"""Propagator base classes and composition.

A propagator maps a list of individuals (parents) to one or a list of new individuals
(offspring): ``propagator(inds) -> Individual | list[Individual]``. Propagators compose with
:class:`Compose`, apply with a probability with :class:`Stochastic`, and branch on the pool size
with :class:`Conditional`, as in Propulate 1.2.

What the engine offers a propagator besides the parents (the seam search methods with state,
such as CMA-ES or particle swarms, are built on):

* a declared search space, :attr:`Propagator.space` (composites declare their stages' space);
* the outcome hook :meth:`Propagator.observe`, called once for every evaluated individual the
  worker learns about: its own, its island peers', immigrants, and on a resume every record of
  the run, in the order they were written;
* where it runs: :meth:`Propagator.bind` tells it the worker's island and rank before the
  run (a portfolio of islands picks its island's method there); and
* per-individual state: a propagator may set ``child.state`` (a JSON-ready dict, e.g. a
  particle's velocity or the sampling generation of a CMA-ES child) on the individuals it
  breeds. The engine carries it to the peers with the individual, writes it into the record and
  restores it on resume, so :meth:`observe` sees it again after a restart.

:func:`propulate.testing.check_propagator` checks that a propagator keeps these contracts.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from propulate.population import Individual

if TYPE_CHECKING:
    from propulate.space import SearchSpace

Offspring = Individual | list[Individual]


def _as_list(out: Offspring | Sequence[Individual]) -> list[Individual]:
    if isinstance(out, Individual):
        return [out]
    return list(out)


class Propagator:
    """Base class: turns ``parents`` individuals into ``offspring`` individuals.

    Parameters
    ----------
    parents : int
        Number of input individuals it uses; ``-1`` for any number.
    offspring : int
        Number of individuals it returns; ``-1`` for any number.
    rng : random.Random, optional
        Random number generator (a fresh unseeded one by default).
    """

    #: The search space it breeds in (``None``: it does not say).
    space: SearchSpace | None = None
    #: Whether what it returns is always a new individual that nobody else holds (the
    #: operators of :mod:`propulate.propagators.ga`): :class:`Compose` then lets the next stage
    #: change it in place (:attr:`in_place`) instead of copying it.
    fresh: bool = False
    #: The same operation as calling it with one individual, applied to that individual in
    #: place and returning it (or a new one), with the same random draws; ``None`` where there
    #: is none. :class:`Compose` uses it on a stage's input that the previous stage made fresh.
    in_place: Callable[[Individual], Individual] | None = None

    def __init__(self, parents: int = 0, offspring: int = 0, rng: random.Random | None = None):
        if offspring == 0:
            raise ValueError("a propagator must produce offspring (offspring != 0)")
        self.parents = parents
        self.offspring = offspring
        self.rng = rng if rng is not None else random.Random()

    def __call__(self, inds: Sequence[Individual]) -> Offspring:
        raise NotImplementedError

    def observe(self, individual: Individual) -> None:
        """Learn from one evaluated individual (own or received, failed ones included; a
        failed, interrupted or pruned one has ``individual.failed`` set and an infinite loss).

        Called once per individual the worker learns about, resumed records included, in the
        order they arrive. The default learns nothing.
        """

    @property
    def observes(self) -> bool:
        """Whether :meth:`observe` does anything (the engine skips the call otherwise)."""
        return type(self).observe is not Propagator.observe

    @property
    def shares_design(self) -> bool:
        """Whether its next child comes from a design the workers of its island share and
        split between them (``auto``'s landscape probe): a point is then evaluated twice if its
        result is still on its way to the worker that would propose it next. While it is true
        the engine sends each evaluated individual to the island's peers at once and looks for
        theirs before every child, instead of in batches of a millisecond. The default: no."""
        return False

    def bind(self, island: int, rank: int) -> None:
        """Learn where it runs: the worker's island and MPI rank, told once by the engine
        before the run (and before a resume's :meth:`observe` calls). A portfolio picks its
        island's propagator here; a swarm learns which individuals are its own. The default
        ignores it.
        """

    def stages(self) -> list[Propagator]:
        """The propagators this one is made of (none for a single operator)."""
        return []


def _declared_space(stages: Sequence[Any]) -> SearchSpace | None:
    for stage in stages:
        space = getattr(stage, "space", None)
        if space is not None:
            return space
    return None


class _Composite(Propagator):
    """A propagator made of others: it declares their space and forwards :meth:`observe`."""

    @property  # type: ignore[override]
    def space(self) -> SearchSpace | None:
        """The first declared space of its stages."""
        return _declared_space(self.stages())

    def bind(self, island: int, rank: int) -> None:
        """Forward to every stage."""
        for stage in self.stages():
            bind = getattr(stage, "bind", None)
            if bind is not None:
                bind(island, rank)

    def observe(self, individual: Individual) -> None:
        """Forward the individual to every stage that observes."""
        for stage in self.stages():
            if getattr(stage, "observes", False):
                stage.observe(individual)

    @property
    def observes(self) -> bool:
        """Whether any stage observes."""
        return any(getattr(stage, "observes", False) for stage in self.stages())


class Stochastic(Propagator):
    """A propagator applied with a probability; otherwise its first parents pass through.

    Parameters
    ----------
    parents, offspring : int
        As for :class:`Propagator`.
    probability : float
        Probability of applying the operation, in ``[0, 1]``.
    rng : random.Random, optional
        Random number generator.
    """

    def __init__(
        self,
        parents: int = 0,
        offspring: int = 0,
        probability: float = 1.0,
        rng: random.Random | None = None,
    ) -> None:
        super().__init__(parents, offspring, rng)
        if not 0.0 <= probability <= 1.0:
            raise ValueError(f"probability must be in [0, 1], got {probability}")
        self.probability = probability


class Conditional(_Composite):
    """Apply ``true_prop`` once the pool holds at least ``pop_size`` individuals, else ``false_prop``.

    Parameters
    ----------
    pop_size : int
        Breeding population size needed before breeding starts.
    true_prop, false_prop : Propagator
        What to apply with a full / not yet full pool (typically breeding / random init).
    parents : int
        Accepted for Propulate 1.2 compatibility.
    """

    def __init__(
        self,
        pop_size: int,
        true_prop: Propagator,
        false_prop: Propagator,
        parents: int = -1,
        offspring: int = -1,
        rng: random.Random | None = None,
    ) -> None:
        super().__init__(parents, offspring, rng)
        self.pop_size = pop_size
        self.true_prop = true_prop
        self.false_prop = false_prop

    def stages(self) -> list[Propagator]:
        """The two branches."""
        return [self.true_prop, self.false_prop]

    def __call__(self, inds: Sequence[Individual]) -> Offspring:
        if len(inds) >= self.pop_size:
            return self.true_prop(inds)
        return self.false_prop(inds)


@functools.cache
def _kind(cls: type) -> tuple[bool, bool]:
    """Whether instances of ``cls`` return fresh individuals (:attr:`Propagator.fresh`) and
    have a usable :attr:`Propagator.in_place`: only where the class that says so is the class
    whose ``__call__`` runs, or a subclass of it (a subclass that overrides ``__call__`` alone
    copies as before)."""

    def owner(name: str) -> type:
        return next(c for c in cls.__mro__ if name in c.__dict__)

    call = owner("__call__")
    fresh = bool(cls.fresh) and issubclass(owner("fresh"), call)
    in_place = cls.in_place is not None and issubclass(owner("in_place"), call)
    return fresh, in_place


class Compose(_Composite):
    """Apply propagators in sequence, each to the output of the previous.

    Parameters
    ----------
    propagators : list of Propagator
        The stages; each stage's ``offspring`` must match the next one's ``parents`` (``-1``
        matches anything).
    """

    def __init__(self, propagators: Sequence[Propagator], rng: random.Random | None = None):
        if not propagators:
            raise ValueError("Compose needs at least one propagator")
        for a, b in zip(propagators, propagators[1:], strict=False):
            if a.offspring != -1 and b.parents != -1 and a.offspring != b.parents:
                raise ValueError(
                    f"{type(a).__name__} produces {a.offspring} offspring but "
                    f"{type(b).__name__} takes {b.parents} parents"
                )
        super().__init__(propagators[0].parents, propagators[-1].offspring, rng)
        self.propagators = list(propagators)
        self._plan: list[tuple[Propagator, bool, Callable[[Individual], Individual] | None]] = []
        self._planned: list[Propagator] = []  # the stages the plan was made for

    def stages(self) -> list[Propagator]:
        """The stages, in order."""
        return list(self.propagators)

    def _make_plan(
        self,
    ) -> list[tuple[Propagator, bool, Callable[[Individual], Individual] | None]]:
        """Per stage: itself, whether it makes fresh children, its usable ``in_place``."""
        self._planned = list(self.propagators)
        self._plan = []
        for prop in self._planned:
            fresh, in_place = _kind(type(prop))
            self._plan.append((prop, fresh, prop.in_place if in_place else None))
        return self._plan

    def __call__(self, inds: Sequence[Individual]) -> Offspring:
        # made once (again when the list of stages was changed): a child is bred per call
        plan = self._plan if self._planned == self.propagators else self._make_plan()
        out: Any = inds
        fresh = False
        for prop, makes_fresh, in_place in plan:
            # A child the previous stage made is nobody else's: change it, do not copy it.
            if fresh and in_place is not None and type(out) is Individual:
                out = in_place(out)
            else:
                out = prop(out)
            fresh = makes_fresh
        return out


class FunctionPropagator(Propagator):
    """Wrap a plain function ``fn(inds) -> offspring`` as a propagator."""

    def __init__(
        self, fn: Callable[[Sequence[Individual]], Offspring], parents: int = -1, offspring: int = 1
    ) -> None:
        super().__init__(parents, offspring)
        self.fn = fn

    def __call__(self, inds: Sequence[Individual]) -> Offspring:
        return self.fn(inds)
