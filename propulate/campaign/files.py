"""The files a campaign writes for its stages: the campaign (space) file and task specs.

One writer and one reader each (format: ``docs/contracts.md``):

- the campaign file ``results/<name>/campaign.yaml``, and a suite function's space file
  ``results/<name>/spaces/<function>.yaml`` in the same format:
  ``{name, objective, parameters, constraint?, task_space?}``;
- a task spec ``results/<name>/tasks/<id>.json``: ``{"id": ..., "task": {...}}`` (read by
  :func:`propulate.user_objective.read_task`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from propulate.runs.declared_objectives import Objectives
from propulate.space import SearchSpace

#: The module of the benchmark functions a suite draws from.
SUITE_MODULE = "propulate.problems.benchmark"


def canonical_space(space: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """A space with each dimension's keys sorted.

    The campaign file is compared as text by Snakemake's re-run triggers: writing
    ``{low, high, type}`` instead of ``{type, low, high}`` must not re-run the campaign. The order
    of the parameters themselves is kept (it is the order of encoded vectors).
    """
    return {name: dict(sorted(dict(dim).items())) for name, dim in space.items()}


def campaign_spec(
    name: str,
    objective: str | Mapping[str, Any],
    parameters: Mapping[str, Mapping[str, Any]],
    constraint: str | None = None,
    task_space: Mapping[str, Mapping[str, Any]] | None = None,
    forbidden: list[str] | None = None,
    objectives: str | None = None,
) -> dict[str, Any]:
    """The content of a campaign (or suite space) file.

    Parameters
    ----------
    name : str
        Campaign name, or a suite function's name.
    objective : str or mapping
        The loss, ``"module:function"``, or a command objective's mapping.
    parameters : mapping
        The parameter space (name to dimension specification).
    constraint : str, optional
        Feasibility test, ``"module:function"``.
    task_space : mapping, optional
        The task space; absent for an objective without tasks.
    forbidden : list of str, optional
        Forbidden clauses of the parameter space (absent when there are none).
    objectives : str, optional
        The declared objectives' canonical form (with their weights), ``"a:min:1,b:max:2"``:
        what the stages that evaluate (MLA, TLA, the measurements) read the objective's
        return value as (absent: it returns one loss).
    """
    spec: dict[str, Any] = {
        "name": name,
        "objective": objective if isinstance(objective, str) else dict(objective),
        "parameters": canonical_space(parameters),
    }
    if constraint:
        spec["constraint"] = constraint
    if forbidden:
        spec["forbidden"] = list(forbidden)
    if task_space:
        spec["task_space"] = canonical_space(task_space)
    if objectives:
        spec["objectives"] = objectives
    return spec


def suite_objective(function: str) -> str:
    """The ``"module:attribute"`` reference of a registered benchmark function.

    The registry's name (``bukin``) need not be the module attribute (``bukin_n6``): the
    attribute is found by identity, preferring one spelled like the registry name.

    Raises
    ------
    KeyError
        When ``function`` is not in :data:`propulate.problems.benchmark.FUNCTIONS`.
    """
    from propulate.problems import benchmark

    target = benchmark.FUNCTIONS[function].function
    if getattr(benchmark, function, None) is target:
        return f"{SUITE_MODULE}:{function}"
    for attr, value in vars(benchmark).items():
        if value is target and not attr.startswith("_"):
            return f"{SUITE_MODULE}:{attr}"
    raise KeyError(f"benchmark function {function!r} has no module attribute")


def suite_spec(function: str) -> dict[str, Any]:
    """The space file of a suite function: its objective and the registry's limits."""
    from propulate.problems.benchmark import FUNCTIONS

    limits = FUNCTIONS[function].limits
    parameters = {
        k: {"type": "float", "low": float(lo), "high": float(hi)} for k, (lo, hi) in limits.items()
    }
    return campaign_spec(function, suite_objective(function), parameters)


def write_campaign_file(path: str | Path, spec: Mapping[str, Any]) -> Path:
    """Write a campaign (or suite space) file; ``spec`` from :func:`campaign_spec`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(dict(spec), sort_keys=False))
    return path


def read_campaign_file(path: str | Path) -> tuple[SearchSpace, SearchSpace | None]:
    """The parameter space (``parameters`` + ``constraint``) and task space of a campaign file.

    Raises
    ------
    ValueError
        When the file does not hold a mapping.
    """
    spec = yaml.safe_load(Path(path).read_text())
    if not isinstance(spec, Mapping):
        raise ValueError(f"{path}: expected a mapping")
    space = SearchSpace.from_dict(spec)
    task_space = SearchSpace(spec["task_space"]) if spec.get("task_space") else None
    return space, task_space


def read_objectives(path: str | Path) -> Objectives | None:
    """The declared objectives of a campaign file (``None``: its objective returns one loss).

    Raises
    ------
    ValueError
        When the file's ``objectives`` is not a valid declaration.
    """
    spec = yaml.safe_load(Path(path).read_text())
    declared = spec.get("objectives") if isinstance(spec, Mapping) else None
    if declared is None:
        return None
    try:
        return Objectives.parse(declared)
    except ValueError as err:
        raise ValueError(f"{path}: objectives: {err}") from None


def write_task_file(path: str | Path, task_id: str, values: Mapping[str, Any]) -> Path:
    """Write the spec ``{"id": task_id, "task": values}`` of one task."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"id": task_id, "task": dict(values)}, indent=1) + "\n")
    return path
