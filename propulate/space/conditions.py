"""Conditional parameters and forbidden combinations of a search space.

A parameter may be *active* only under a condition on other parameters (``when`` in a space
file); an inactive parameter is absent from a configuration. A *forbidden clause* is a boolean
expression over parameter names that no configuration may satisfy.

* :class:`Condition` -- a conjunction of :class:`Check` s, one per parent parameter: membership
  (``optimizer in [sgd, rmsprop]``), equality or a numeric comparison (``layers >= 3``). A
  condition on a parent that is itself inactive is false (the child is inactive too).
* :class:`Forbidden` -- an expression such as ``"tx * ty >= 1024"``, parsed with :mod:`ast` and
  evaluated by a small interpreter that knows only numbers, strings, parameter names,
  arithmetic, comparisons, ``in`` over literal lists and ``and``/``or``/``not``: no Python code
  runs. A clause that names an inactive parameter forbids nothing (as in ConfigSpace).
* :func:`activate` and :func:`complete` turn any mapping into a condition-consistent
  configuration: inactive parameters dropped, missing active ones filled.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from propulate.space.dimensions import Categorical, Dimension, SpaceError, Value

#: Comparison operators of a numeric ``when`` test, longest first (for parsing).
COMPARISONS: dict[str, Callable[[Any, Any], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    "==": operator.eq,
    "!=": operator.ne,
    ">": operator.gt,
    "<": operator.lt,
}


@dataclass(frozen=True)
class Check:
    """``parent <op> value``; ``op`` is ``"in"`` (``value`` a tuple) or a comparison."""

    parent: str
    op: str
    value: Any

    def holds(self, v: Any) -> bool:
        """Whether the parent's value ``v`` passes the test."""
        if self.op == "in":
            return v in self.value
        return bool(COMPARISONS[self.op](v, self.value))

    def to_spec(self) -> Any:
        """The ``when`` entry of the test (a list, a scalar, or ``"<op> <number>"``)."""
        if self.op == "in":
            return list(self.value)
        if self.op == "==" and isinstance(self.value, str):
            return self.value
        return f"{self.op} {self.value}"


@dataclass(frozen=True)
class Condition:
    """A parameter is active when every test holds (and every parent is active)."""

    tests: tuple[Check, ...]

    @property
    def parents(self) -> tuple[str, ...]:
        """The parameters the condition reads."""
        return tuple(t.parent for t in self.tests)

    def holds(self, params: Mapping[str, Any]) -> bool:
        """Whether the condition holds in ``params`` (an absent parent fails it)."""
        for t in self.tests:
            if t.parent not in params or not t.holds(params[t.parent]):
                return False
        return True

    def to_spec(self) -> dict[str, Any]:
        """The ``when`` mapping of a space file."""
        return {t.parent: t.to_spec() for t in self.tests}


def _test(name: str, parent: str, spec: Any, dim: Dimension) -> Check:
    """One ``when`` entry: a list (membership), ``"<op> number"`` or a scalar (equality)."""
    categorical = isinstance(dim, Categorical)

    def value(v: Any) -> Value:
        if categorical:
            if not dim.contains(str(v)):
                raise SpaceError(f"{name}.when: {v!r} is not a choice of {parent!r} {dim.choices}")
            return str(v)
        if isinstance(v, bool) or not isinstance(v, int | float):
            try:
                v = float(v)
            except (TypeError, ValueError):
                raise SpaceError(f"{name}.when: {parent!r} is numeric, got {v!r}") from None
        return float(v) if not float(v).is_integer() else int(v)

    if isinstance(spec, list | tuple):
        if not spec:
            raise SpaceError(f"{name}.when: empty list of values for {parent!r}")
        return Check(parent, "in", tuple(value(v) for v in spec))
    if isinstance(spec, str) and not categorical:
        text = spec.strip()
        for op in COMPARISONS:
            if text.startswith(op):
                return Check(parent, op, value(text[len(op) :].strip()))
    return Check(parent, "==", value(spec))


def parse_conditions(
    when: Mapping[str, Any], dimensions: Mapping[str, Dimension]
) -> dict[str, Condition]:
    """Read ``{name: {parent: spec, ...}}`` into conditions, checking parents exist."""
    out: dict[str, Condition] = {}
    for name, spec in when.items():
        if isinstance(spec, Condition):
            unknown = [p for p in spec.parents if p not in dimensions or p == name]
            if unknown:
                raise SpaceError(f"{name}.when: unknown or own parameter {unknown[0]!r}")
            out[name] = spec
            continue
        if not isinstance(spec, Mapping) or not spec:
            raise SpaceError(
                f"{name}.when: expected a mapping of parameter to values, got {spec!r}"
            )
        tests = []
        for parent, test in spec.items():
            if parent not in dimensions:
                raise SpaceError(f"{name}.when: unknown parameter {parent!r}")
            if parent == name:
                raise SpaceError(f"{name}.when: a parameter cannot depend on itself")
            tests.append(_test(name, str(parent), test, dimensions[parent]))
        out[name] = Condition(tuple(tests))
    return out


def topological_order(names: Sequence[str], conditions: Mapping[str, Condition]) -> list[str]:
    """The names with every parent before its children (declaration order otherwise)."""
    order: list[str] = []
    state: dict[str, int] = {}

    def visit(n: str, path: tuple[str, ...]) -> None:
        if state.get(n) == 2:
            return
        if state.get(n) == 1:
            cycle = " -> ".join((*path[path.index(n) :], n))
            raise SpaceError(f"conditions form a cycle: {cycle}")
        state[n] = 1
        cond = conditions.get(n)
        for p in cond.parents if cond else ():
            visit(p, (*path, n))
        state[n] = 2
        order.append(n)

    for n in names:
        visit(n, ())
    return order


def activate(
    params: Mapping[str, Any], order: Sequence[str], conditions: Mapping[str, Condition]
) -> dict[str, Any]:
    """The active parameters of ``params`` (in ``order``): inactive and unknown ones dropped."""
    out: dict[str, Any] = {}
    for n in order:
        cond = conditions.get(n)
        if n in params and (cond is None or cond.holds(out)):
            out[n] = params[n]
    return out


def complete(
    params: Mapping[str, Any],
    order: Sequence[str],
    dimensions: Mapping[str, Dimension],
    conditions: Mapping[str, Condition],
    fill: Callable[[str, Dimension], Any],
) -> dict[str, Any]:
    """A condition-consistent configuration from ``params``: each active parameter keeps its
    value when ``params`` holds a valid one, else gets ``fill(name, dimension)``; inactive ones
    are dropped. Returned in ``order``."""
    out: dict[str, Any] = {}
    for n in order:
        cond = conditions.get(n)
        if cond is not None and not cond.holds(out):
            continue
        v = params.get(n, _MISSING)
        out[n] = v if v is not _MISSING and dimensions[n].contains(v) else fill(n, dimensions[n])
    return out


_MISSING = object()


def consistent(
    params: Mapping[str, Any],
    order: Sequence[str],
    dimensions: Mapping[str, Dimension],
    conditions: Mapping[str, Condition],
) -> bool:
    """Whether ``params`` holds every active parameter within its dimension and no inactive
    one."""
    seen: dict[str, Any] = {}
    for n in order:
        cond = conditions.get(n)
        if cond is None or cond.holds(seen):
            if n not in params or not dimensions[n].contains(params[n]):
                return False
            seen[n] = params[n]
        elif n in params:
            return False
    return True


# ---------------------------------------------------------------------- forbidden clauses
_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: lambda a, b: math.pow(a, b),  # a float power: overflows raise instead of hanging
}
_COMPARE: dict[type, Callable[[Any, Any], bool]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
Node = Callable[[Mapping[str, Any]], Any]


class Forbidden:
    """A forbidden combination: a configuration is infeasible when ``expression`` is true.

    Parameters
    ----------
    expression : str
        E.g. ``"tx * ty >= 1024"`` or ``"optimizer == 'adam' and lr > 0.01"``.
    names : sequence of str
        The space's parameter names (the only names the expression may use).
    """

    def __init__(self, expression: str, names: Sequence[str]) -> None:
        self.expression = str(expression)
        try:
            tree = ast.parse(self.expression.strip(), mode="eval")
        except SyntaxError as err:
            raise SpaceError(
                f"forbidden {self.expression!r}: not an expression ({err.msg})"
            ) from None
        self.names: set[str] = set()
        self._known = set(names)
        self._fn = self._compile(tree.body)
        #: The parsed expression (for the ConfigSpace export).
        self.tree = tree.body

    def _fail(self, what: str) -> SpaceError:
        return SpaceError(f"forbidden {self.expression!r}: {what} is not allowed")

    def _compile(self, node: ast.AST) -> Node:  # noqa: C901 - one case per node type
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float | str):
            value = node.value
            return lambda p: value
        if isinstance(node, ast.Name):
            if node.id not in self._known:
                raise SpaceError(f"forbidden {self.expression!r}: unknown parameter {node.id!r}")
            self.names.add(node.id)
            name = node.id
            return lambda p: p[name]
        if isinstance(node, ast.List | ast.Tuple):
            items = [self._compile(e) for e in node.elts]
            return lambda p: tuple(f(p) for f in items)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            fn, a, b = _BINARY[type(node.op)], self._compile(node.left), self._compile(node.right)
            return lambda p: fn(a(p), b(p))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd | ast.Not):
            f = self._compile(node.operand)
            if isinstance(node.op, ast.Not):
                return lambda p: not f(p)
            sign = -1 if isinstance(node.op, ast.USub) else 1
            return lambda p: sign * f(p)
        if isinstance(node, ast.BoolOp):
            parts = [self._compile(v) for v in node.values]
            if isinstance(node.op, ast.And):
                return lambda p: all(f(p) for f in parts)
            return lambda p: any(f(p) for f in parts)
        if isinstance(node, ast.Compare) and all(type(o) in _COMPARE for o in node.ops):
            first = self._compile(node.left)
            rest = [
                (_COMPARE[type(o)], self._compile(c))
                for o, c in zip(node.ops, node.comparators, strict=True)
            ]

            def compare(p: Mapping[str, Any]) -> bool:
                left = first(p)
                for fn, right in rest:
                    r = right(p)
                    if not fn(left, r):
                        return False
                    left = r
                return True

            return compare
        raise self._fail(type(node).__name__)

    def __getstate__(self) -> dict[str, Any]:  # the compiled closures do not pickle
        return {"expression": self.expression, "names": sorted(self._known)}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["expression"], state["names"])  # type: ignore[misc]

    def forbids(self, params: Mapping[str, Any]) -> bool:
        """Whether ``params`` is forbidden (never when a named parameter is inactive)."""
        for n in self.names:
            if n not in params:
                return False
        try:
            return bool(self._fn(params))
        except (ArithmeticError, TypeError, ValueError):
            return False

    def __repr__(self) -> str:
        return f"Forbidden({self.expression!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Forbidden) and other.expression == self.expression

    def __hash__(self) -> int:
        return hash(self.expression)
