"""A config's ``parameters`` given as a space file: ``parameters: space.yaml``.

The file is a space file as ``propulate evolve --space`` reads it (``parameters``, optional
``constraint`` and ``forbidden``; README "A space file"), so one file serves a campaign and single
runs alike. Its path is relative to the directory Snakemake runs in. The campaign takes its
parameters in the config's form (each dimension as ``{type, low, high, log}`` or ``{type, choices}``), so the
campaign file, and Snakemake's re-run triggers, see the space itself, not the file name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from propulate.campaign.checks import CampaignError
from propulate.space import SearchSpace, SpaceError


def read_space_file(
    path: str, constraint: str | None, forbidden: list[str] | None = None
) -> tuple[dict[str, Any], str | None, list[str] | None]:
    """The parameters, the constraint and the forbidden clauses of a config whose ``parameters``
    names a space file.

    Parameters
    ----------
    path : str
        The space file (YAML), relative to the working directory.
    constraint : str or None
        The config's own ``constraint`` key; the file may give one instead, not both.
    forbidden : list of str or None
        The config's own ``forbidden`` key; likewise.

    Returns
    -------
    tuple
        The parameter space in the config's form, the constraint and the forbidden clauses
        (the config's or the file's).

    Raises
    ------
    CampaignError
        When the file is missing or not a space, or when both give a constraint.
    """
    if not Path(path).is_file():
        raise CampaignError("parameters", f"space file {path} not found (relative to {Path.cwd()})")
    try:
        space = SearchSpace.from_yaml(path)
    except SpaceError as err:
        raise CampaignError("parameters", f"space file {path}: {err}") from None
    except ImportError as err:
        raise CampaignError("constraint", f"space file {path}: {err}") from None
    spec = space.to_dict()
    own = spec.get("constraint")
    if own is not None and constraint is not None:
        raise CampaignError(
            "constraint", f"given here and in the space file {path}: give it in one place"
        )
    if spec.get("forbidden") and forbidden:
        raise CampaignError(
            "forbidden", f"given here and in the space file {path}: give them in one place"
        )
    return (
        spec["parameters"],
        constraint if own is None else own,
        spec.get("forbidden") or forbidden,
    )
