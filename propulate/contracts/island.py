"""An island as the engine keeps it, to drive a propagator in the contract checks.

:class:`Island` holds a population and breeds from it the way a worker does
(:mod:`propulate.engine.worker`): the propagator is told where it runs
(:meth:`~propulate.propagators.base.Propagator.bind`), bred from the island's ordered view of
its active individuals, each child is evaluated (some fail, time out or are pruned), added and
handed to :meth:`~propulate.propagators.base.Propagator.observe`; between its own children,
individuals of other ranks arrive (random configurations, some carrying another method's
state). Every individual carries every field an evaluated one has (loss, status, error, curve,
objectives, times, ...), so a propagator that changes any of them is seen.

What the propagator returns is taken as the engine's breeder takes it (one individual or a
list, a mapping made an individual); the checks that judge the raw return value read
:attr:`Island.outputs`.
"""

from __future__ import annotations

import pickle
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from propulate.engine.wire import from_wire, to_wire
from propulate.population import FIELDS, Individual, Population
from propulate.runs.status import FAILED, OK, PRUNED, TIMEOUT
from propulate.space import SearchSpace

#: Children bred per run unless a check is told otherwise.
STEPS = 60
#: Individuals from other ranks carry this state now and then (another method's, as after a
#: migration in a portfolio).
FOREIGN_STATE = {"foreign": [1, 2.5], "method": "other"}


def loss_of(space: SearchSpace, params: Mapping[str, Any]) -> float:
    """A smooth test loss over the encoded space (minimum at its centre)."""
    return float(sum((u - 0.5) ** 2 for u in space.encode(params)))


def snapshot(ind: Individual) -> str:
    """Everything an individual holds, parameters (with their types) and every field, as text
    that changes when anything in it changes."""
    params = [(k, type(v).__name__, v) for k, v in ind.items()]
    fields = [(name, getattr(ind, name)) for name in FIELDS]
    return repr((params, fields))


def describe(ind: Individual) -> str:
    """A short name of an individual for messages."""
    return f"{ind.uid or 'a new individual'} ({ind.status}, rank {ind.rank})"


def changed_field(before: str, ind: Individual, reference: Individual) -> str:
    """Which parameter or field of ``ind`` differs from ``reference`` (a copy taken before)."""
    for name in ("params", *FIELDS):
        old = dict(reference) if name == "params" else getattr(reference, name)
        new = dict(ind) if name == "params" else getattr(ind, name)
        if repr(old) != repr(new):
            return f"{name}: {old!r} -> {new!r}"
    return f"{before} -> {snapshot(ind)}"


def frozen_copy(ind: Individual) -> Individual:
    """A deep copy of an individual with every field (for messages naming what changed)."""
    import copy

    twin = Individual(copy.deepcopy(dict(ind)))
    for name in FIELDS:
        setattr(twin, name, copy.deepcopy(getattr(ind, name)))
    return twin


def call(what: str, fn: Callable[..., Any], *args: Any) -> Any:
    """Call ``fn``; an exception it raises becomes an ``AssertionError`` saying what was done."""
    try:
        return fn(*args)
    except AssertionError as err:
        raise AssertionError(f"{what} failed: {err}") from err
    except Exception as err:
        raise AssertionError(f"{what} raised {type(err).__name__}: {err}") from err


def as_children(out: Any) -> list[Individual]:
    """The children the engine's breeder takes from a propagator's return value: one
    individual or a list of them; a mapping (or a population member) becomes a fresh
    individual."""
    items = list(out) if isinstance(out, list) else [out]
    if not items:
        raise AssertionError("the propagator returned an empty list: no child to evaluate")
    children = []
    for item in items:
        if isinstance(item, Individual) and item.uid is None:
            children.append(item)
        elif isinstance(item, Mapping):
            children.append(Individual(dict(item)))
        else:
            raise AssertionError(
                f"the propagator returned {type(item).__name__}, not an Individual (a mapping "
                "of the space's parameters)"
            )
    return children


class Island:
    """One island of one worker (rank 0), breeding with ``propagator`` (module docstring).

    Parameters
    ----------
    space : SearchSpace
        The search space.
    propagator : Propagator
        The propagator (used as is: pass a copy).
    seed : int
        Seed of the island's own draws (losses, the other ranks' individuals).
    observe_always : bool
        Call :meth:`observe` even when the propagator's ``observes`` is false (the engine
        does not).
    watch : str, optional
        ``"breed"`` or ``"observe"``: compare every individual of the island before and after
        each such call and fail naming the first one changed.
    observe_errors : bool
        Fail when :meth:`observe` raises; otherwise go on as if it had not been called (for
        the checks whose contract is another).
    """

    def __init__(
        self,
        space: SearchSpace,
        propagator: Any,
        seed: int = 0,
        *,
        observe_always: bool = False,
        watch: str | None = None,
        observe_errors: bool = False,
    ) -> None:
        self.space, self.propagator = space, propagator
        self.observe_errors = observe_errors
        self.rng = random.Random(seed)
        self.population = Population(1)
        self.observe_always, self.watch = observe_always, watch
        self.count = 0
        self.visitors = 0
        #: (pool size, what the propagator returned) per breeding call.
        self.outputs: list[tuple[int, Any]] = []
        #: Every individual evaluated on the island, own and other ranks', in order.
        self.evaluated: list[Individual] = []
        #: This worker's children, in the order bred.
        self.own: list[Individual] = []
        #: Called with (the view as a list, what the propagator returned) after each breeding.
        self.inspect: Callable[[list[Individual], Any], None] | None = None
        bind = getattr(propagator, "bind", None)
        if bind is not None:
            call("bind(island=0, rank=0)", bind, 0, 0)

    # ------------------------------------------------------------------ watching
    def _guard(self, what: str, fn: Callable[[], Any], extra: Sequence[Individual] = ()) -> Any:
        """Run ``fn``; with watching on for ``what``, fail if it changed an individual."""
        if self.watch != what:
            return fn()
        members = set(self.population)
        pool = list(members) + [i for i in extra if i not in members]
        before = [(ind, snapshot(ind), frozen_copy(ind)) for ind in pool]
        out = fn()
        for ind, text, copy_ in before:
            if snapshot(ind) != text:
                raise AssertionError(
                    f"{'a propagator' if what == 'breed' else 'observe'} must not modify "
                    f"its inputs: it changed {describe(ind)}, {changed_field(text, ind, copy_)}"
                )
        return out

    # ------------------------------------------------------------------ breeding
    def breed(self, view: Sequence[Individual] | None = None) -> list[Individual]:
        """Breed from ``view`` (default: the island's ordered view of its active
        individuals); the children as the engine takes them."""
        view = self.population.active(0) if view is None else view
        size = len(view)
        listed = list(view) if isinstance(view, list) else None
        out = self._guard(
            "breed",
            lambda: call(f"breeding from an island of {size} individuals", self.propagator, view),
            list(view),
        )
        if listed is not None and (
            len(view) != len(listed) or any(a is not b for a, b in zip(view, listed, strict=False))
        ):
            raise AssertionError(
                "a propagator must not modify its inputs: it changed the list it was given "
                f"({len(listed)} individuals before, {len(view)} after, or their order)"
            )
        self.outputs.append((size, out))
        if self.inspect is not None:
            self.inspect(listed if listed is not None else list(view), out)
        return as_children(out)

    # ------------------------------------------------------------------ evaluation
    def _fill(self, ind: Individual, rank: int, status: str) -> None:
        """Give ``ind`` the fields an evaluation of ``rank`` with ``status`` gives."""
        n = self.count
        self.count += 1
        ind.uid = f"check:{rank}:{n}"
        ind.island, ind.rank, ind.generation, ind.current = 0, rank, n, 0
        ind.evaltime, ind.evalperiod, ind.migration_steps = 1.7e9 + n, 0.25 + n % 3, n % 2
        if status == OK and not self.space.in_bounds(ind):
            status = FAILED  # the objective cannot take it
        if status == OK:
            ind.loss, ind.status, ind.error = loss_of(self.space, ind), OK, None
            ind.objectives = {"loss": ind.loss, "size": float(n % 5)}
            ind.curve = [[0, ind.loss + 1.0], [1, ind.loss]] if n % 2 else None
        else:
            ind.loss, ind.status, ind.objectives = float("inf"), status, None
            ind.error = None if status == PRUNED else f"evaluation {status}"
            ind.curve = [[0, 1.5], [1, 1.25]] if status == PRUNED or n % 2 else None

    def _add(self, ind: Individual) -> Individual:
        self.population.add(ind)
        self.evaluated.append(ind)
        self.tell(ind)
        return ind

    def evaluate(self, ind: Individual, status: str) -> Individual:
        """Evaluate this worker's child ``ind``: give it the fields an evaluation gives, add
        it and let the propagator observe it."""
        self._fill(ind, 0, status)
        return self._add(ind)

    def tell(self, ind: Individual) -> None:
        """Hand ``ind`` to :meth:`observe`, as the engine does (when the propagator observes)."""
        if not (
            self.observe_always
            or call("reading .observes", getattr, self.propagator, "observes", False)
        ):
            return
        try:
            self._guard(
                "observe",
                lambda: call(f"observe({describe(ind)})", self.propagator.observe, ind),
                [ind],
            )
        except AssertionError as err:
            if self.observe_errors or str(err).startswith("observe must not modify"):
                raise

    def visitor(self, rank: int, status: str) -> Individual:
        """An individual evaluated by another rank arrives by the wire: a random
        configuration, now and then with another method's state."""
        ind = Individual(self.space.decode([self.rng.random() for _ in range(self.space.dim)]))
        self.visitors += 1
        ind.state = dict(FOREIGN_STATE) if self.visitors % 2 == 0 else None
        self._fill(ind, rank, status)
        return self._add(from_wire(pickle.loads(pickle.dumps(to_wire(ind)))))

    def run(self, steps: int = STEPS, initial: int = 1) -> list[Individual]:
        """Breed and evaluate ``steps`` children (after ``initial`` individuals of other ranks
        seeded the island, so its first breeding is not from an empty island); every third
        step an individual of another rank arrives. Returns the own children, evaluated."""
        for i in range(initial):
            self.visitor(1 + i % 3, OK)
        bred = []
        for step in range(steps):
            child = self.breed()[0]
            self.own.append(child)
            bred.append(self.evaluate(child, _status(step)))
            if step % 3 == 2:
                self.visitor(1 + (step // 3) % 3, _status(step + 1))
        return bred


def _status(step: int) -> str:
    """The outcome of evaluation ``step``: mostly ok, some failed, timed out or pruned."""
    if step % 7 == 3:
        return FAILED
    if step % 11 == 5:
        return PRUNED
    if step % 13 == 9:
        return TIMEOUT
    return OK
