"""A config's ``parameters`` given as a space file: ``parameters: space.yaml``.

The file is a space file as ``propulate evolve --space`` reads it (``parameters`` and an optional
``constraint``; README "A space file"), so one file serves a campaign and single runs alike. Its
path is relative to the directory Snakemake runs in. The campaign takes its parameters in the
config's form (each dimension as ``{type, low, high, log}`` or ``{type, choices}``), so the
campaign file, and Snakemake's re-run triggers, see the space itself, not the file name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from propulate.campaign.checks import CampaignError
from propulate.space import SearchSpace, SpaceError


def read_space_file(path: str, constraint: str | None) -> tuple[dict[str, Any], str | None]:
    """The parameters and the constraint of a config whose ``parameters`` names a space file.

    Parameters
    ----------
    path : str
        The space file (YAML), relative to the working directory.
    constraint : str or None
        The config's own ``constraint`` key; the file may give one instead, not both.

    Returns
    -------
    tuple of dict and str or None
        The parameter space in the config's form, and the constraint (the config's or the
        file's).

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
    if space.forbidden:
        raise CampaignError(
            "parameters",
            f"space file {path}: forbidden clauses are not carried into a campaign yet; "
            "express them as a constraint function",
        )
    own = spec.get("constraint")
    if own is not None and constraint is not None:
        raise CampaignError(
            "constraint", f"given here and in the space file {path}: give it in one place"
        )
    return spec["parameters"], constraint if own is None else own
