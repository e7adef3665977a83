"""Search spaces to and from ConfigSpace (the format of SMAC, DeepHyper and ytopt) and its JSON.

Needs the optional extra ``configspace`` (``pip install "propulate[configspace]"``).

What maps, both ways (a round trip keeps it exactly, parameter order included):

* float and integer parameters (uniform, optionally log-scaled) and categorical parameters with
  string choices;
* conditions: ``==`` (``EqualsCondition``), ``!=`` (``NotEqualsCondition``), a list
  (``InCondition``), ``>`` and ``<`` (``GreaterThanCondition``, ``LessThanCondition``), ``>=`` and
  ``<=`` (an ``OrConjunction`` of the strict comparison and ``EqualsCondition``); several
  parents (``AndConjunction``);
* forbidden clauses ``name == value``, ``name in [...]``, their ``and`` (``ForbiddenEqualsClause``,
  ``ForbiddenInClause``, ``ForbiddenAndConjunction``) and ``a == b``, ``a < b``, ``a > b`` between
  two parameters (``ForbiddenEqualsRelation``, ``ForbiddenLessThanRelation``,
  ``ForbiddenGreaterThanRelation``).

What is refused with a one-line :class:`SpaceError` naming it: ConfigSpace's normal and beta
priors, ordinal parameters, categorical parameters with weights or non-string choices, numeric
constants, other ``OrConjunction`` s and two tests on one parent; and, writing, a forbidden
expression ConfigSpace cannot state (arithmetic such as ``tx * ty >= 1024``) or a Python
constraint function. A string constant reads as a categorical parameter of one choice. Default
values are not kept (propulate's spaces have none; ConfigSpace picks its own on writing).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from propulate.space.conditions import Check, Condition
from propulate.space.dimensions import Categorical, Float, Integer, SpaceError
from propulate.space.search import SearchSpace

#: The key of a hyperparameter's ``meta`` holding its position in the propulate space.
ORDER_KEY = "propulate_order"


def _cs() -> Any:
    try:
        import ConfigSpace
    except ImportError:
        raise SpaceError(
            "ConfigSpace is not installed: pip install 'propulate[configspace]'"
        ) from None
    return ConfigSpace


# ------------------------------------------------------------------------------ ours -> CS
def _test_condition(cs: Any, child: Any, parent: Any, t: Check) -> Any:
    if t.op == "in":
        return cs.InCondition(child, parent, list(t.value))
    simple = {
        "==": cs.EqualsCondition,
        "!=": cs.NotEqualsCondition,
        ">": cs.GreaterThanCondition,
        "<": cs.LessThanCondition,
    }
    if t.op in simple:
        return simple[t.op](child, parent, t.value)
    strict = cs.GreaterThanCondition if t.op == ">=" else cs.LessThanCondition
    return cs.OrConjunction(
        strict(child, parent, t.value), cs.EqualsCondition(child, parent, t.value)
    )


def _forbidden(cs: Any, node: ast.AST, hps: dict[str, Any], text: str) -> Any:
    """The ConfigSpace forbidden clause of a parsed expression (SpaceError when none)."""

    def value(n: ast.AST) -> Any:
        if isinstance(n, ast.Constant):
            return n.value
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            return -value(n.operand)
        raise KeyError

    try:
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
            return cs.ForbiddenAndConjunction(*(_forbidden(cs, v, hps, text) for v in node.values))
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            left, op, right = node.left, node.ops[0], node.comparators[0]
            if isinstance(left, ast.Name) and isinstance(right, ast.Name):
                rel = {
                    ast.Eq: cs.ForbiddenEqualsRelation,
                    ast.Lt: cs.ForbiddenLessThanRelation,
                    ast.Gt: cs.ForbiddenGreaterThanRelation,
                }
                return rel[type(op)](hps[left.id], hps[right.id])
            if isinstance(left, ast.Name) and isinstance(op, ast.Eq):
                return cs.ForbiddenEqualsClause(hps[left.id], value(right))
            if isinstance(left, ast.Name) and isinstance(op, ast.In):
                assert isinstance(right, ast.List | ast.Tuple)
                return cs.ForbiddenInClause(hps[left.id], [value(e) for e in right.elts])
    except (KeyError, AssertionError):
        pass
    raise SpaceError(
        f"forbidden {text!r} has no ConfigSpace equivalent (ConfigSpace forbids 'name == value', "
        "'name in [...]', their 'and', and ==, <, > between two parameters)"
    )


def to_configspace(space: SearchSpace) -> Any:
    """The space as a ``ConfigSpace.ConfigurationSpace`` (see the module docstring)."""
    cs = _cs()
    if space.constraint is not None:
        name = space.constraint_ref or getattr(space.constraint, "__name__", "?")
        raise SpaceError(f"the constraint function {name!r} has no ConfigSpace equivalent")
    out = cs.ConfigurationSpace()
    hps: dict[str, Any] = {}
    for i, (name, d) in enumerate(space.dimensions.items()):
        meta = {ORDER_KEY: i}
        if isinstance(d, Categorical):
            hps[name] = cs.Categorical(name, list(d.choices), meta=meta)
        elif isinstance(d, Integer):
            hps[name] = cs.Integer(name, (int(d.low), int(d.high)), log=d.log, meta=meta)
        else:
            hps[name] = cs.Float(name, (float(d.low), float(d.high)), log=d.log, meta=meta)
    out.add(list(hps.values()))
    conds = []
    for name, cond in space.conditions.items():
        parts = [_test_condition(cs, hps[name], hps[t.parent], t) for t in cond.tests]
        conds.append(parts[0] if len(parts) == 1 else cs.AndConjunction(*parts))
    if conds:
        out.add(conds)
    forbidden = [_forbidden(cs, f.tree, hps, f.expression) for f in space.forbidden]
    if forbidden:
        out.add(forbidden)
    return out


# ------------------------------------------------------------------------------ CS -> ours
def _dimension(cs: Any, hp: Any) -> Float | Integer | Categorical:
    h = cs.hyperparameters
    if isinstance(hp, h.UniformFloatHyperparameter):
        return Float(float(hp.lower), float(hp.upper), bool(hp.log))
    if isinstance(hp, h.UniformIntegerHyperparameter):
        return Integer(int(hp.lower), int(hp.upper), bool(hp.log))
    if isinstance(hp, h.CategoricalHyperparameter):
        weights = getattr(hp, "weights", None)
        if weights is not None and len(set(weights)) > 1:
            raise SpaceError(
                f"categorical {hp.name!r} has weights: not expressible in propulate (uniform choices)"
            )
        if not all(isinstance(c, str) for c in hp.choices):
            raise SpaceError(
                f"categorical {hp.name!r} has non-string choices {list(hp.choices)}: not "
                "expressible in propulate (choices are strings)"
            )
        return Categorical(tuple(hp.choices))
    if isinstance(hp, h.Constant) and isinstance(hp.value, str):
        return Categorical((hp.value,))
    raise SpaceError(
        f"parameter {hp.name!r} is a {type(hp).__name__}: not expressible in propulate "
        "(uniform floats and integers, categorical strings only)"
    )


def _tests(cs: Any, cond: Any) -> list[Check]:
    c = cs.conditions
    if isinstance(cond, c.AndConjunction):
        return [t for part in cond.components for t in _tests(cs, part)]
    if isinstance(cond, c.OrConjunction):
        parts = list(cond.components)
        if len(parts) == 2 and isinstance(parts[1], c.EqualsCondition):
            strict, eq = parts
            same = strict.parent.name == eq.parent.name and strict.value == eq.value
            if same and isinstance(strict, c.GreaterThanCondition | c.LessThanCondition):
                op = ">=" if isinstance(strict, c.GreaterThanCondition) else "<="
                return [Check(eq.parent.name, op, eq.value)]
        raise SpaceError(f"the condition {cond} (an OrConjunction) is not expressible in propulate")
    ops = {
        c.EqualsCondition: "==",
        c.NotEqualsCondition: "!=",
        c.GreaterThanCondition: ">",
        c.LessThanCondition: "<",
    }
    if isinstance(cond, c.InCondition):
        return [Check(cond.parent.name, "in", tuple(cond.values))]
    if type(cond) in ops:
        return [Check(cond.parent.name, ops[type(cond)], cond.value)]
    raise SpaceError(
        f"the condition {cond} ({type(cond).__name__}) is not expressible in propulate"
    )


def _expression(cs: Any, f: Any) -> str:
    fb = cs.forbidden
    if isinstance(f, fb.ForbiddenAndConjunction):
        return " and ".join(_expression(cs, part) for part in f.components)
    if isinstance(f, fb.ForbiddenEqualsClause):
        return f"{f.hyperparameter.name} == {f.value!r}"
    if isinstance(f, fb.ForbiddenInClause):
        return f"{f.hyperparameter.name} in {sorted(f.values, key=str)!r}"
    rel = {
        fb.ForbiddenEqualsRelation: "==",
        fb.ForbiddenLessThanRelation: "<",
        fb.ForbiddenGreaterThanRelation: ">",
    }
    if type(f) in rel:
        return f"{f.left.name} {rel[type(f)]} {f.right.name}"
    raise SpaceError(f"the forbidden clause {f} is not expressible in propulate")


def from_configspace(space: Any) -> SearchSpace:
    """A :class:`SearchSpace` of a ``ConfigSpace.ConfigurationSpace`` (module docstring)."""
    cs = _cs()
    hps = list(space.values())
    order = [(hp.meta or {}).get(ORDER_KEY) for hp in hps]
    if all(isinstance(i, int) for i in order) and len(set(order)) == len(hps):
        hps = [hp for _, hp in sorted(zip(order, hps, strict=True), key=lambda t: t[0])]
    dims = {hp.name: _dimension(cs, hp) for hp in hps}
    conditions: dict[str, Condition] = {}
    for cond in space.conditions:
        tests = _tests(cs, cond)
        parents = [t.parent for t in tests]
        if len(set(parents)) != len(parents):
            raise SpaceError(f"the condition {cond} tests one parent twice: not expressible")
        child = cond.child if hasattr(cond, "child") else cond.get_children()[0]
        conditions[child.name] = Condition(tuple(tests))
    forbidden = [_expression(cs, f) for f in space.forbidden_clauses]
    return SearchSpace(dims, conditions=conditions, forbidden=forbidden)


def is_configspace(spec: Any) -> bool:
    """Whether a loaded file is ConfigSpace JSON (its ``hyperparameters`` list, no
    ``parameters``)."""
    return (
        isinstance(spec, dict)
        and isinstance(spec.get("hyperparameters"), list)
        and "parameters" not in spec
    )


def read_space_file(path: str | Path) -> SearchSpace:
    """A space file of this package (YAML or JSON, :meth:`SearchSpace.from_yaml`) or
    ConfigSpace JSON (:func:`read_configspace_json`), told apart by their keys."""
    import yaml

    try:
        spec = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except yaml.YAMLError:
        spec = None  # from_yaml says what is wrong
    if is_configspace(spec):
        return read_configspace_json(path)
    return SearchSpace.from_yaml(path)


def read_configspace_json(path: str | Path) -> SearchSpace:
    """Read a ConfigSpace JSON file into a :class:`SearchSpace`."""
    cs = _cs()
    try:
        space = cs.ConfigurationSpace.from_json(Path(path))
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise SpaceError(f"{path}: not a ConfigSpace JSON file ({err})") from None
    return from_configspace(space)


def write_configspace_json(space: SearchSpace, path: str | Path) -> None:
    """Write ``space`` as a ConfigSpace JSON file."""
    to_configspace(space).to_json(Path(path), indent=1)
