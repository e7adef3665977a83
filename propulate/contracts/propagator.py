"""The contracts of a propagator, one named check each.

Every check takes ``(propagator, space=None, *, steps=None, seed=0)``: the propagator (it is
deep-copied, the original is not used), its search space when it does not declare one,
how many children to breed (``None``: the check's own default,
:data:`~propulate.contracts.island.STEPS`, or :data:`LONG_STEPS` for
:func:`check_stays_in_space`; a slow propagator may be given fewer) and the seed of the
check's own draws. It returns ``None`` or raises
``AssertionError`` whose message starts with its name, e.g. ``"check_integer_types: offspring
parameter n=3.0 is a float, Integer parameters must be int"``. The checks drive the propagator
as a worker of the engine does (:class:`~propulate.contracts.island.Island`).

The empty island. The engine breeds from an empty island at the start of every run (the first
call of :class:`~propulate.engine.breeder.Breeder` gets the island's empty view, unless initial
configurations were given), and again whenever migration took every individual away; so a
propagator must cope with an empty island and return a valid child then (e.g. a random one).
:func:`check_empty_island` says so when breeding from an empty island raises or returns
nothing; the checks of the children (their parameters, bounds, types, state) breed from an
empty island first too, then from an island seeded with one individual of another rank, and
skip a crash on the empty island, so a propagator that breaks only this contract fails only
this check.

:func:`check_propagator` runs every check (:func:`propagator_checks`), skipping those given in
``expected_failures``. The checks of what it breeds are here; those of what it learns and keeps
(:meth:`observe`, determinism, state on the wire and in the records, resume) are in
:mod:`propulate.contracts.learning`, and importable from here too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from propulate.contracts.drive import (
    drive,
    from_empty,
    new_island,
    resolve_space,
)
from propulate.contracts.island import STEPS, call, describe
from propulate.contracts.learning import (
    check_deterministic,
    check_observe_accepts_any_outcome,
    check_observe_does_not_modify,
    check_observes_flag,
    check_resume,
    check_state_on_wire_and_records,
)
from propulate.contracts.offspring import (
    require_consistent,
    require_inside,
    require_names,
    require_state,
    require_types,
    require_valid,
)
from propulate.contracts.runner import contract, require, run_checks
from propulate.population import Individual
from propulate.space import SearchSpace

#: Children :func:`check_stays_in_space` breeds unless told otherwise: a propagator that
#: leaves the space only once its model or its step size has grown must be run that long.
LONG_STEPS = 150

__all__ = [
    "LONG_STEPS",
    "check_accepts_plain_list",
    "check_conditional_consistency",
    "check_declares_space",
    "check_deterministic",
    "check_does_not_modify_inputs",
    "check_empty_island",
    "check_integer_types",
    "check_observe_accepts_any_outcome",
    "check_observe_does_not_modify",
    "check_observes_flag",
    "check_offspring_fresh",
    "check_parameter_names",
    "check_propagator",
    "check_resume",
    "check_returns_individuals",
    "check_state_json_ready",
    "check_state_on_wire_and_records",
    "check_stays_in_space",
    "propagator_checks",
]


@contract
def check_declares_space(
    propagator: Any, space: SearchSpace | None = None, *, steps: int | None = None, seed: int = 0
) -> None:
    """The propagator declares its search space (``.space``), or one is given."""
    resolve_space(propagator, space)


@contract
def check_empty_island(
    propagator: Any, space: SearchSpace | None = None, *, steps: int | None = None, seed: int = 0
) -> None:
    """Bred from an empty island (the island's empty view, and a plain empty list) before
    anything was evaluated and again after a short run, it returns a child instead of
    raising: the engine breeds from an empty island at the start of every run. (That the
    child is valid is what the other checks check; they breed from an empty island too.)"""
    space = resolve_space(propagator, space)
    hint = (
        "; the engine breeds from an empty island at the start of every run (and when "
        "migration took every individual away): a propagator must return a valid child then "
        "(e.g. a random one)"
    )
    island = new_island(propagator, space, seed)

    def breed(when: str, view: Sequence[Individual]) -> None:
        try:
            out = call("breeding from an island of 0 individuals", island.propagator, view)
        except AssertionError as err:
            raise AssertionError(f"{when}: {err}{hint}") from err
        require(
            out is not None and not (isinstance(out, list) and not out),
            f"{when}: breeding from an island of 0 individuals returned {out!r}{hint}",
        )

    breed("before anything was evaluated", island.population.active(0))
    breed("from a plain empty list", [])
    try:
        island.run(max((STEPS if steps is None else steps) // 4, 5))
    except AssertionError:
        pass  # what goes wrong on a growing island is for the other checks to say
    breed(f"after {island.count} evaluations", [])


@contract
def check_returns_individuals(
    propagator: Any, space: SearchSpace | None = None, *, steps: int | None = None, seed: int = 0
) -> None:
    """It returns an :class:`~propulate.population.Individual` or a non-empty list of them
    (not a dict, a tuple or ``None``)."""
    island = drive(propagator, space, steps, seed)
    for size, out in island.outputs:
        items = out if isinstance(out, list) else [out]
        require(items, f"bred from {size} individuals it returned an empty list")
        for item in items:
            require(
                isinstance(item, Individual),
                f"a propagator must return Individual(s), got {type(item).__name__} "
                f"(bred from {size} individuals)",
            )


@contract
def check_offspring_fresh(
    propagator: Any, space: SearchSpace | None = None, *, steps: int | None = None, seed: int = 0
) -> None:
    """Each child is a fresh individual: no uid, no loss, not one of its parents or of the
    island's individuals, and its ``state`` is its own (not a parent's object)."""
    space = resolve_space(propagator, space)
    island = new_island(propagator, space, seed)

    def inspect(view: list[Individual], out: Any) -> None:
        members = {id(i) for i in island.population} | {id(i) for i in view}
        states = {id(i.state) for i in view if i.state is not None}
        for child in out if isinstance(out, list) else [out]:
            if not isinstance(child, Individual):
                continue  # check_returns_individuals says so
            require(
                id(child) not in members and child.uid is None,
                "offspring must be fresh individuals (uid None), not population members: "
                f"got {describe(child)}",
            )
            require(
                child.loss is None,
                f"offspring must be fresh individuals, not evaluated: loss {child.loss!r}",
            )
            require(
                child.state is None or id(child.state) not in states,
                "offspring must have their own state, not a parent's state object",
            )

    island.inspect = inspect
    from_empty(island)
    island.run(STEPS if steps is None else steps)


@contract
def check_parameter_names(
    propagator: Any, space: SearchSpace | None = None, *, steps: int | None = None, seed: int = 0
) -> None:
    """Each child sets exactly the space's parameters (in a conditional space: none it does
    not have)."""
    space = resolve_space(propagator, space)
    drive(propagator, space, steps, seed, lambda c: require_names(space, c))


@contract
def check_stays_in_space(
    propagator: Any, space: SearchSpace | None = None, *, steps: int | None = None, seed: int = 0
) -> None:
    """Every parameter of every child lies within its dimension (finite), over a long run
    (:data:`LONG_STEPS` children by default)."""
    space = resolve_space(propagator, space)
    drive(
        propagator,
        space,
        LONG_STEPS if steps is None else steps,
        seed,
        lambda c: require_inside(space, c),
    )


@contract
def check_integer_types(
    propagator: Any, space: SearchSpace | None = None, *, steps: int | None = None, seed: int = 0
) -> None:
    """Integer parameters are Python ``int`` (not ``3.0``, not ``np.int64``, not ``bool``),
    Float parameters Python ``float``, categorical ones one of their choices."""
    space = resolve_space(propagator, space)
    drive(propagator, space, steps, seed, lambda c: require_types(space, c))


@contract
def check_conditional_consistency(
    propagator: Any, space: SearchSpace | None = None, *, steps: int | None = None, seed: int = 0
) -> None:
    """In a conditional space each child is condition-consistent: every active parameter set
    and no inactive one (nothing to check in a space without conditions)."""
    space = resolve_space(propagator, space)
    if space.conditions:
        drive(propagator, space, steps, seed, lambda c: require_consistent(space, c))


@contract
def check_does_not_modify_inputs(
    propagator: Any, space: SearchSpace | None = None, *, steps: int | None = None, seed: int = 0
) -> None:
    """Breeding changes no individual of the island, parents or not (parameters, loss, status,
    uid, state, active, curve, generation, rank, island, objectives, error, times, ...), and
    not the list it is given."""
    space = resolve_space(propagator, space)
    island = new_island(propagator, space, seed, watch="breed")
    island.run(STEPS if steps is None else steps)
    shuffled = list(island.population.active(0))
    island.rng.shuffle(shuffled)
    island.breed(shuffled)


@contract
def check_accepts_plain_list(
    propagator: Any, space: SearchSpace | None = None, *, steps: int | None = None, seed: int = 0
) -> None:
    """Given a plain list in random order (as a third-party caller passes it) instead of the
    island's ordered view, it returns valid children."""
    space = resolve_space(propagator, space)
    island = new_island(propagator, space, seed)
    island.run(STEPS if steps is None else steps)
    shuffled = list(island.population.active(0))
    for _ in range(3):
        island.rng.shuffle(shuffled)
        for child in island.breed(list(shuffled)):
            require_valid(space, child)


@contract
def check_state_json_ready(
    propagator: Any, space: SearchSpace | None = None, *, steps: int | None = None, seed: int = 0
) -> None:
    """``Individual.state`` of each child is ``None`` or a dict that JSON encodes (no NaN,
    no sets, no numpy values) and decodes to itself (string keys, lists not tuples)."""
    drive(propagator, space, steps, seed, require_state)


# ---------------------------------------------------------------------- all of them
_CHECKS = (
    check_declares_space,
    check_empty_island,
    check_returns_individuals,
    check_offspring_fresh,
    check_parameter_names,
    check_stays_in_space,
    check_integer_types,
    check_conditional_consistency,
    check_state_json_ready,
    check_does_not_modify_inputs,
    check_accepts_plain_list,
    check_observe_accepts_any_outcome,
    check_observe_does_not_modify,
    check_deterministic,
    check_observes_flag,
    check_state_on_wire_and_records,
    check_resume,
)


def propagator_checks() -> Iterator[Callable[..., None]]:
    """Every propagator check, in the order :func:`check_propagator` runs them (to
    parametrize a test per check)."""
    yield from _CHECKS


def check_propagator(
    propagator: Any,
    space: SearchSpace | None = None,
    *,
    steps: int | None = None,
    seed: int = 0,
    expected_failures: Mapping[str, str] | None = None,
) -> None:
    """Check that ``propagator`` keeps every contract of the engine; ``AssertionError``
    naming the first broken one if not.

    The checks (:func:`propagator_checks`, one function each, documented in
    ``docs/contracts.md``): it declares a search space; copes with an empty island; returns
    fresh :class:`~propulate.population.Individual` s that set exactly the space's
    parameters, inside their dimensions over a long run, with ``int`` for integer and
    ``float`` for float parameters, condition-consistent in a conditional space; modifies no
    individual it is given, in breeding or in :meth:`observe`; accepts a plain list, and
    failed, pruned and other ranks' individuals in :meth:`observe`; two copies breed alike;
    ``observes`` is true when it learns; its ``Individual.state`` is JSON-ready and survives
    the wire and the records; a copy resumed from the records breeds valid children.

    Parameters
    ----------
    propagator : Propagator
        The propagator, freshly built (it is copied; the original is not used).
    space : SearchSpace, optional
        Its search space, when it does not declare one (:attr:`Propagator.space`).
    steps : int, optional
        Children bred per check (``None``: each check's default, 60, or 150 for
        :func:`check_stays_in_space`); fewer for a slow propagator.
    seed : int
        Seed of the checks' own draws.
    expected_failures : mapping of str to str, optional
        Check name to the reason it is known to fail; those checks are skipped.
    """
    run_checks(_CHECKS, propagator, expected_failures, space=space, steps=steps, seed=seed)
