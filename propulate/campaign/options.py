"""The command-line options of a campaign's jobs, built from the settings dataclasses.

Each string is a rule's ``params`` value: Snakemake re-runs a job exactly when its options change.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

from propulate.campaign.config import Campaign
from propulate.methods import METHODS
from propulate.settings import EvolveSettings, LCMSettings, MLASettings, TransferSettings, describe


def setting_options(
    settings: Any,
    names: Iterable[str] | None = None,
    *,
    given: Collection[str] = (),
    used: Collection[str] | None = None,
) -> list[str]:
    """The command-line options that pass ``settings`` to a job, in the settings' field order.

    Parameters
    ----------
    settings : settings dataclass instance
        The values (:mod:`propulate.settings.stages`).
    names : iterable of str, optional
        Only these settings (default: every one with a config key).
    given : collection of str
        The settings the config gives explicitly: a setting declared ``passed="given"`` is
        passed only then.
    used : collection of str, optional
        Only settings the job's method uses.

    Returns
    -------
    list of str
        ``"--flag value"`` items; a ``None`` value is left out, a switch is passed when it is
        not its default.
    """
    wanted = None if names is None else set(names)
    out = []
    for item in describe(type(settings)):
        if wanted is not None and item.name not in wanted:
            continue
        if wanted is None and not item.config:
            continue
        if used is not None and item.name not in used:
            continue
        if item.passed == "given" and item.name not in given:
            continue
        value = getattr(settings, item.name)
        if value is None:
            continue
        if item.kind is bool:
            if value != item.default:
                off = item.flag if item.negate else "--no-" + item.flag[2:]
                out.append(off if not value else item.flag)
            continue
        out.append(f"{item.flag} {value}")
    return out


def evolve_options(campaign: Campaign, method: str) -> str:
    """The ``evolve`` options of a run with ``method`` (stopping, islands, breeding): the
    settings the method uses (:data:`propulate.methods.METHODS`), so changing the breeding
    settings does not re-run the random and Optuna baselines."""
    opts = setting_options(
        campaign.evolve, given=campaign.evolve_given, used=METHODS[method].settings
    )
    if campaign.baselines.default is not None and METHODS[method].starts_from_default:
        # tuning starts from what users would run anyway: never worse than it during tuning
        opts.append(f"--initial {campaign.baselines.quoted_default}")
    return " ".join(opts)


#: Minutes an evolve job may take on a cluster when the campaign sets no time limit.
DEFAULT_RUNTIME = 60


def evolve_runtime(campaign: Campaign) -> int:
    """Minutes an evolve job may take on a cluster: the time limit plus start-up and slack."""
    limit = campaign.evolve.time_limit
    return DEFAULT_RUNTIME if limit is None else int(limit * 1.5 / 60) + 10


def model_options(campaign: Campaign) -> str:
    """The LCM settings shared by ``fit-lcm`` and ``mla``."""
    return " ".join(
        setting_options(campaign.lcm, ("latent", "restarts", "max_points", "log_output"))
    )


def lcm_options(campaign: Campaign) -> str:
    """The ``fit-lcm`` options."""
    return " ".join([model_options(campaign), *setting_options(campaign.lcm, ("seed",))])


def mla_options(campaign: Campaign) -> str:
    """The ``mla`` options (budget, initial design, the model's settings, the rest of MLA's)."""
    mla = campaign.mla
    if mla is None:
        raise ValueError("the campaign has no mla stage")
    given = campaign.mla_given
    first = setting_options(mla, ("budget", "initial"), given=given)
    rest = [n for n in (s.name for s in describe(MLASettings)) if n not in ("budget", "initial")]
    return " ".join([*first, model_options(campaign), *setting_options(mla, rest, given=given)])


def transfer_options(campaign: Campaign, tla: str) -> str:
    """TLA1 measures its prediction once (optional); TLA2 tunes with a small budget."""
    settings = campaign.transfer
    objective = campaign.objective_of("")  # a command objective: the file holding it
    if tla == "tla1":
        basin = " ".join(setting_options(settings, ("tla1_basin", "model", "seed")))
        return f"--objective {objective} {basin}" if settings.measure_tla1 else basin
    names = ("tla2_budget", "tla2_share", "tla2_basin", "model", "seed")
    return " ".join([f"--objective {objective}", *setting_options(settings, names)])


#: The settings classes whose options this module derives (a test checks every described
#: setting with a config key reaches its job).
DERIVED = (EvolveSettings, LCMSettings, MLASettings, TransferSettings)
