"""Helpers of the campaign pipeline: config validation, task ids, command-line options.

Everything the DAG needs is derived from the config here, before any job starts: a config that
breaks the schema, names an objective that does not import, or defines an empty or inverted space
stops the workflow with a message naming the config key.
"""

import os
import re
import shlex
import sys
from pathlib import Path

from snakemake.utils import validate

from propulate.space import SearchSpace, SpaceError, load_callable

# The `python` and `mpiexec` of the environment running Snakemake (the venv) come first on the
# PATH of every shell job, also when it is started as .venv/bin/snakemake without activating it.
# Inside a Slurm job step the executor plugin leaves PMI_* variables whose file descriptor the
# job's shell no longer has; an MPI program started from it (mla, transfer tla2) would then abort
# in PMI_Init. Launchers (mpiexec, srun) hand their ranks fresh ones.
shell.prefix(
    f"set -euo pipefail; export PATH={shlex.quote(str(Path(sys.executable).parent))}:$PATH; "
    "unset ${{!PMI_*}} ${{!PMIX_*}}; "
)

#: The software environment of every rule under --software-deployment-method conda.
ENV = "../envs/propulate.yaml"


class ConfigError(Exception):
    """A config value that cannot be used; the message names its key."""


validate(config, "../schemas/config.schema.yaml")


def _check_callable(key):
    ref = config.get(key)
    if ref is None:
        return
    try:
        load_callable(ref)
    except ImportError as err:
        raise ConfigError(f"config key '{key}': {err}") from None


def _check_space(key, constraint=None):
    try:
        return SearchSpace(config[key], constraint)
    except SpaceError as err:
        raise ConfigError(f"config key '{key}': {err}") from None


# ------------------------------------------------------------------------ benchmark suite
#: Where the benchmark functions of a suite live (their losses, limits and known minima).
SUITE_MODULE = "propulate.objectives.benchmark"
SUITE = list(config.get("suite") or [])


def _check_suite():
    """A suite replaces `objective` and `parameters`: every name is a benchmark function
    importable as `propulate.objectives.benchmark:<name>`, and the campaign has no tasks.
    """
    if "suite" not in config:
        if "objective" not in config or "parameters" not in config:
            raise ConfigError(
                "config keys 'objective' and 'parameters' (or 'suite'): give an objective "
                "with its parameter space, or a suite of benchmark functions"
            )
        return
    from propulate.objectives.benchmark import FUNCTIONS, ND_FUNCTIONS

    clash = [
        k
        for k in ("objective", "parameters", "constraint", "task_space")
        if config.get(k) is not None
    ]
    if clash:
        raise ConfigError(
            f"config key 'suite': a suite of benchmark functions brings its own objectives "
            f"and spaces; remove {clash}"
        )
    training = config["training_tasks"]
    tasks = {
        "training_tasks": training.get("latin_hypercube") or training.get("listed"),
        "new_tasks": config["new_tasks"],
    }
    for key, given in tasks.items():
        if given:
            raise ConfigError(
                f"config key 'suite': a suite has no tasks; remove '{key}'"
            )
    for name in SUITE:
        if name not in FUNCTIONS:
            raise ConfigError(
                f"config key 'suite': unknown benchmark function {name!r}; "
                f"valid names: {', '.join(ND_FUNCTIONS)}"
            )
        try:
            load_callable(f"{SUITE_MODULE}:{name}")
        except ImportError as err:
            raise ConfigError(f"config key 'suite': {err}") from None


def suite_spec(function):
    """The space file of a suite function: its objective and the registry's limits."""
    from propulate.objectives.benchmark import FUNCTIONS

    return {
        "name": function,
        "objective": f"{SUITE_MODULE}:{function}",
        "parameters": {
            k: {"high": float(hi), "low": float(lo), "type": "float"}
            for k, (lo, hi) in FUNCTIONS[function].limits.items()
        },
    }


_check_suite()
_check_callable("objective")
_check_callable("constraint")
PARAMETER_SPACE = None if SUITE else _check_space("parameters")
TASKLESS = "task_space" not in config
TASK_SPACE = None if TASKLESS else _check_space("task_space")


def _check_tasks(key, tasks):
    for name, values in tasks.items():
        if TASK_SPACE is None:
            raise ConfigError(f"config key '{key}.{name}': tasks need a 'task_space'")
        missing = set(TASK_SPACE.names) - set(values)
        extra = set(values) - set(TASK_SPACE.names)
        if missing or extra:
            raise ConfigError(
                f"config key '{key}.{name}': task values must name exactly "
                f"{list(TASK_SPACE.names)} (missing {sorted(missing)}, unknown {sorted(extra)})"
            )
        if not TASK_SPACE.in_bounds(values):
            raise ConfigError(
                f"config key '{key}.{name}': {values} is outside the task space"
            )


# ------------------------------------------------------------------------ task ids
_training = config["training_tasks"]
_lhs = _training.get("latin_hypercube")
LHS_PREFIX = _lhs["prefix"] if _lhs else "train"
LHS_IDS = [f"{LHS_PREFIX}{i:02d}" for i in range(_lhs["n"])] if _lhs else []
LISTED_TRAINING = dict(_training.get("listed", {}))
NEW_TASKS = dict(config["new_tasks"])
_check_tasks("training_tasks.listed", LISTED_TRAINING)
_check_tasks("new_tasks", NEW_TASKS)

if TASKLESS:
    if _lhs:
        raise ConfigError(
            "config key 'training_tasks.latin_hypercube': sampling needs a 'task_space'"
        )
    # A suite's "tasks" are its functions, one run directory per function, method and seed.
    TRAINING_IDS = SUITE or [config["name"]]
else:
    TRAINING_IDS = LHS_IDS + list(LISTED_TRAINING)
    if not TRAINING_IDS:
        raise ConfigError(
            "config key 'training_tasks': give 'latin_hypercube' or 'listed' tasks"
        )
NEW_IDS = list(NEW_TASKS)
LISTED = {
    name: dict(sorted(values.items()))
    for name, values in {**LISTED_TRAINING, **NEW_TASKS}.items()
}
_clash = (set(LHS_IDS) & set(LISTED)) | (set(LISTED_TRAINING) & set(NEW_TASKS))
if _clash:
    raise ConfigError(
        f"config keys 'training_tasks' and 'new_tasks': task ids {sorted(_clash)} are used twice"
    )

METHODS = config["evolve"]["methods"]
SEEDS = config["evolve"]["seeds"]
MLA = config["mla"]["budget"] > 0 and not TASKLESS
TRANSFER = bool(NEW_IDS) and not TASKLESS


def _alternatives(names):
    return "|".join(re.escape(n) for n in names) if names else "(?!x)x"


wildcard_constraints:
    task=_alternatives(TRAINING_IDS + NEW_IDS),
    method=_alternatives(METHODS),
    seed=r"\d+",
    tla=r"tla1|tla2",


# ------------------------------------------------------------------------ paths
CAMPAIGN = "results/campaign.yaml"
MODEL = "results/model/lcm.json"
MLA_DIR = "results/mla"
SUMMARY = "results/summary.csv"
REPORT = "results/report.html"
FIGURES = "results/figures"


def task_file(task):
    """The spec file of a task id."""
    return f"results/tasks/{task}.json"


EVOLVE_RUNS = expand(
    "results/runs/{task}/{method}-s{seed}",
    task=TRAINING_IDS,
    method=METHODS,
    seed=SEEDS,
)
TRANSFER_RUNS = (
    expand("results/transfer/{task}/{tla}", task=NEW_IDS, tla=["tla1", "tla2"])
    if TRANSFER
    else []
)
ALL_RUNS = EVOLVE_RUNS + ([MLA_DIR] if MLA else []) + TRANSFER_RUNS


# ------------------------------------------------------------------------ input functions
def _canonical_space(space):
    """A space with each dimension's keys sorted: params are compared as text, and writing
    `{low, high, type}` instead of `{type, low, high}` must not re-run the campaign. The order
    of the parameters themselves is kept (it is the order of encoded vectors)."""
    return {name: dict(sorted(dim.items())) for name, dim in space.items()}


def campaign_spec():
    """The campaign file's content (contract: docs/contracts.md)."""
    spec = {
        "name": config["name"],
        "objective": config["objective"],
        "parameters": _canonical_space(config["parameters"]),
    }
    if config.get("constraint"):
        spec["constraint"] = config["constraint"]
    if not TASKLESS:
        spec["task_space"] = _canonical_space(config["task_space"])
    return spec


def suite_space_file(function):
    """The space file of a suite function."""
    return f"results/spaces/{function}.yaml"


def space_input(wildcards):
    """The space of an evolve job: the campaign file, or a suite function's own space."""
    return suite_space_file(wildcards.task) if SUITE else CAMPAIGN


def objective_of(wildcards):
    """The loss of an evolve job: the config's objective, or a suite function's loss."""
    return f"{SUITE_MODULE}:{wildcards.task}" if SUITE else config["objective"]


def task_input(wildcards):
    """The task spec of an evolve job (none for an objective without tasks)."""
    return [] if TASKLESS else [task_file(wildcards.task)]


def task_option(wildcards, input):
    return f"--task {input.task}" if input.task else ""


_EVOLVE_FLAGS = (
    "max_evaluations",
    "generations",
    "time_limit",
    "islands",
    "pop_size",
    "migration_probability",
    "ranks_per_worker",
)
# Settings of the island model's breeding (get_default_propagator): given to propulate runs only,
# so changing them does not re-run the random and Optuna baselines.
_PROPAGATOR_FLAGS = ("crossover_prob", "mutation_prob", "random_init_prob", "sigma_factor")


def evolve_options(wildcards):
    """The evolve settings of a run as command-line options (a params: value, so a change re-runs)."""
    settings = config["evolve"]
    keys = _EVOLVE_FLAGS + (_PROPAGATOR_FLAGS if wildcards.method == "propulate" else ())
    opts = [
        f"--{key.replace('_', '-')} {settings[key]}"
        for key in keys
        if settings.get(key) is not None
    ]
    if not settings["pollination"]:
        opts.append("--migration")
    return " ".join(opts)


def evolve_runtime():
    """Minutes an evolve job may take on a cluster: the time limit plus start-up and slack."""
    return int(config["evolve"]["time_limit"] * 1.5 / 60) + 10


def model_options():
    """The LCM settings shared by fit_lcm and mla, as command-line options."""
    lcm = config["lcm"]
    opts = (
        f"--latent {lcm['latent']} --restarts {lcm['restarts']} "
        f"--max-points {lcm['max_points']}"
    )
    return opts + (" --log-output" if lcm["log_output"] else "")


def lcm_options():
    """The fit_lcm settings as command-line options."""
    return f"{model_options()} --seed {config['lcm']['seed']}"


def transfer_options(wildcards):
    """TLA1 measures its prediction once (optional); TLA2 tunes with a small budget."""
    settings = config["transfer"]
    if wildcards.tla == "tla1":
        if settings["measure_tla1"]:
            return f"--objective {config['objective']}"
        return ""
    return (
        f"--objective {config['objective']} --budget {settings['tla2_budget']} "
        f"--seed {settings['seed']}"
    )
