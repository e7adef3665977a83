"""Named contract checks: how a check fails, and how a set of checks runs.

A check is a function ``check_<contract>(obj, ...)`` that returns ``None`` when ``obj`` keeps
the contract and raises ``AssertionError`` whose message starts with ``"check_<contract>: "``
otherwise. :func:`contract` gives a check that behaviour: a failed requirement, or the checked
object raising (every call of it goes through :func:`~propulate.contracts.island.call`, which
turns ``IndexError`` on an empty island into an ``AssertionError`` saying what was done),
leaves the check as an ``AssertionError`` naming it, so a report always says which contract
broke. Any other exception is a fault of the check itself and propagates as it is.
:func:`run_checks` runs a sequence of checks and skips the ones listed as expected failures.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., None])


def require(condition: object, message: str) -> None:
    """Raise ``AssertionError(message)`` unless ``condition`` holds (an ``assert`` that
    ``python -O`` keeps)."""
    if not condition:
        raise AssertionError(message)


def contract(fn: F) -> F:
    """Make ``fn`` a named check: an ``AssertionError`` inside it leaves it with a message
    that starts with ``fn.__name__`` and a colon."""
    name = fn.__name__

    @functools.wraps(fn)
    def check(*args: Any, **kwargs: Any) -> None:
        try:
            fn(*args, **kwargs)
        except AssertionError as err:
            text = str(err)
            if text.startswith(f"{name}: "):
                raise
            raise AssertionError(f"{name}: {text}") from err

    check.contract = name  # type: ignore[attr-defined]
    return check  # type: ignore[return-value]


def run_checks(
    checks: Iterable[Callable[..., None]],
    obj: Any,
    expected_failures: Mapping[str, str] | None,
    **kwargs: Any,
) -> None:
    """Run every check on ``obj`` (with ``kwargs``) except those in ``expected_failures``.

    Parameters
    ----------
    checks : iterable of callables
        The checks, in order; the first failure is raised.
    obj : object
        What is checked (a propagator, a pruner).
    expected_failures : mapping of str to str, optional
        Check name to the reason it is expected to fail; those checks are skipped.
    **kwargs
        Handed to every check.

    Raises
    ------
    ValueError
        ``expected_failures`` names a check that does not exist, or gives no reason.
    AssertionError
        The first check that fails, its message starting with the check's name.
    """
    checks = list(checks)
    skip = dict(expected_failures or {})
    known = {c.__name__ for c in checks}
    unknown = sorted(set(skip) - known)
    if unknown:
        raise ValueError(
            f"expected_failures names unknown checks {unknown}; known: {sorted(known)}"
        )
    blank = sorted(name for name, reason in skip.items() if not str(reason).strip())
    if blank:
        raise ValueError(f"expected_failures must give a reason for {blank}")
    for check in checks:
        if check.__name__ not in skip:
            check(obj, **kwargs)
