"""The command-line options of a campaign's jobs, built from the settings dataclasses.

Each string is a rule's ``params`` value: Snakemake re-runs a job exactly when its options change.
"""

from __future__ import annotations

from propulate.campaign.config import Campaign
from propulate.settings import EVOLVE_USED_BY

#: ``evolve`` settings given to every method's run (flag ``--max-evaluations`` etc.), in order.
EVOLVE_FLAGS = (
    "max_evaluations",
    "generations",
    "time_limit",
    "eval_timeout",
    "islands",
    "pop_size",
    "migration_probability",
    "ranks_per_worker",
)
#: Settings of the island model's breeding. Each run gets only the settings its method uses
#: (``EVOLVE_USED_BY``), so changing these does not re-run the random and Optuna baselines.
PROPAGATOR_FLAGS = ("crossover_prob", "mutation_prob", "random_init_prob", "sigma_factor")
#: Settings passed only when the config gives them (their flags are newer than the others).
EXPLICIT_FLAGS = ("failure_limit",)

#: Minutes an evolve job may take on a cluster when the campaign sets no time limit.
DEFAULT_RUNTIME = 60


def _flag(key: str, value: object) -> str:
    return f"--{key.replace('_', '-')} {value}"


def evolve_options(campaign: Campaign, method: str) -> str:
    """The ``evolve`` options of a run with ``method`` (stopping, islands, breeding)."""
    settings = campaign.evolve
    used = EVOLVE_USED_BY[method]
    keys = [k for k in EVOLVE_FLAGS + PROPAGATOR_FLAGS if k in used]
    opts = [_flag(k, getattr(settings, k)) for k in keys if getattr(settings, k) is not None]
    opts += [
        _flag(k, getattr(settings, k))
        for k in EXPLICIT_FLAGS
        if k in campaign.evolve_given and k in used
    ]
    if not settings.pollination and "pollination" in used:
        opts.append("--migration")
    if campaign.baselines.default is not None and method == "propulate":
        # tuning starts from what users would run anyway: never worse than it during tuning
        opts.append(f"--initial {campaign.baselines.quoted_default}")
    return " ".join(opts)


def evolve_runtime(campaign: Campaign) -> int:
    """Minutes an evolve job may take on a cluster: the time limit plus start-up and slack."""
    limit = campaign.evolve.time_limit
    return DEFAULT_RUNTIME if limit is None else int(limit * 1.5 / 60) + 10


def model_options(campaign: Campaign) -> str:
    """The LCM settings shared by ``fit-lcm`` and ``mla``."""
    lcm = campaign.lcm
    opts = f"--latent {lcm.latent} --restarts {lcm.restarts} --max-points {lcm.max_points}"
    return opts + (" --log-output" if lcm.log_output else "")


def lcm_options(campaign: Campaign) -> str:
    """The ``fit-lcm`` options."""
    return f"{model_options(campaign)} --seed {campaign.lcm.seed}"


def mla_options(campaign: Campaign) -> str:
    """The ``mla`` options (budget, initial design, seed and the model's settings)."""
    mla = campaign.mla
    if mla is None:
        raise ValueError("the campaign has no mla stage")
    return (
        f"--budget {mla.budget} --initial {mla.initial} {model_options(campaign)} "
        f"--share {mla.share} --local-every {mla.local_every} "
        f"--local-radius {mla.local_radius} --seed {mla.seed}"
    )


def transfer_options(campaign: Campaign, tla: str) -> str:
    """TLA1 measures its prediction once (optional); TLA2 tunes with a small budget."""
    settings = campaign.transfer
    objective = campaign.objective_of("")  # a command objective: the file holding it
    if tla == "tla1":
        basin = f"--basin {settings.tla1_basin}"
        return f"--objective {objective} {basin}" if settings.measure_tla1 else basin
    return (
        f"--objective {objective} --budget {settings.tla2_budget} "
        f"--share {settings.tla2_share} --basin {settings.tla2_basin} --seed {settings.seed}"
    )
