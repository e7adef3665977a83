"""The config schema's verdict in one line naming the key path.

Snakemake's own ``validate`` reports a schema violation as a ``WorkflowError`` that prints the
whole JSON schema (hundreds of lines) around a one-line message. :func:`check_schema` runs the
same schema (``workflow/schemas/config.schema.yaml``) first and raises
:class:`~propulate.campaign.checks.CampaignError` for the most relevant violation: the key path
(``evolve.max_evaluations``), what is wrong with it, and for an unknown key the known key it
most likely stands for (``did you mean 'max_evaluations'?``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from propulate.campaign.checks import CampaignError
from propulate.pipeline import ROOT
from propulate.space.dimensions import did_you_mean

#: The schema of the workflow shipped with the package (:mod:`propulate.pipeline`: the
#: repository's ``workflow/`` in a clone, its copy in an installed wheel), which the workflow
#: validates against too.
SCHEMA_FILE = ROOT / "workflow" / "schemas" / "config.schema.yaml"


def load_schema(path: str | Path = SCHEMA_FILE) -> dict[str, Any] | None:
    """The config schema (``None`` when ``path`` cannot be read), with the names of the
    registered propagators and pruners (:func:`propulate.plugins.docs.add_to_schema`)."""
    import yaml

    from propulate.plugins.docs import add_to_schema

    try:
        return add_to_schema(yaml.safe_load(Path(path).read_text()))
    except OSError:
        return None


def key_path(parts: Sequence[Any]) -> str:
    """``["evolve", "seeds", 0]`` as ``evolve.seeds[0]``."""
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _short(value: Any, limit: int = 60) -> str:
    text = " ".join(repr(value).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _describe(error: Any) -> tuple[str, str]:
    """The key path and one-line message of a ``jsonschema`` error."""
    named = error
    while named is not None and "x-names" not in named.schema:
        named = named.parent
    if named is not None:  # a plug-in spec: its name is not registered
        instance = named.instance
        name = instance.get("type") if isinstance(instance, Mapping) else instance
        if isinstance(name, str):
            name = name.partition(":")[0]
        known = ", ".join(named.schema["x-names"])
        where = key_path(list(named.absolute_path))
        if isinstance(instance, Mapping) and "type" not in instance:
            return where, f"a mapping needs 'type', one of: {known}"
        return where, f"{_short(name)} is not one of: {known}"
    path = list(error.absolute_path)
    kind, schema, instance = error.validator, error.schema, error.instance
    if kind == "additionalProperties" and isinstance(instance, Mapping):
        known = list(schema.get("properties", {}))
        extra = [k for k in instance if k not in known]
        if extra:
            return key_path(
                [*path, extra[0]]
            ), f"unknown key ({did_you_mean(str(extra[0]), known)})"
    if kind == "required" and isinstance(instance, Mapping):
        missing = [k for k in error.validator_value if k not in instance]
        if missing:
            return key_path([*path, missing[0]]), "missing (required)"
    if kind in ("oneOf", "anyOf"):
        return key_path(path), f"{_short(instance)} matches none of the accepted forms"
    if kind == "enum":
        allowed = ", ".join(str(v) for v in error.validator_value)
        return key_path(path), f"{_short(instance)} is not one of: {allowed}"
    return key_path(path), " ".join(str(error.message).split())[:200]


def check_schema(config: Mapping[str, Any], schema: Mapping[str, Any] | None = None) -> None:
    """Raise :class:`CampaignError` for the config's most relevant schema violation.

    Parameters
    ----------
    config : mapping
        The campaign config as given (before defaults are filled in).
    schema : mapping, optional
        The schema (default: :func:`load_schema`; nothing is checked without one).
    """
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match

    schema = load_schema() if schema is None else schema
    if schema is None:
        return
    if not isinstance(config, Mapping):
        raise CampaignError("(top level)", "the config must be a mapping of keys to values")
    error = best_match(Draft202012Validator(schema).iter_errors(dict(config)))
    if error is not None:
        raise CampaignError(*_describe(error))
