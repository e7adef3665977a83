"""The campaign's config, checked and resolved by propulate.campaign, and the rules' inputs.

The schema is checked here (unknown keys, types, ranges: one line naming the key path, with a
"did you mean" for an unknown key); everything else (objective imports,
spaces, task ids, suite functions, settings) is propulate.campaign.Campaign.from_config, which
stops the workflow before any job with a message naming the config key.
"""

import copy
import os
import re
import shlex
import sys
from pathlib import Path

from snakemake.utils import validate

from propulate.campaign import Campaign, CampaignError
from propulate.campaign import options as opts
from propulate.campaign.owned import DONE
from propulate.campaign.schema import check_schema, load_schema
from propulate.engine.threads import restore_user_variables
from propulate.runs.summary import SUMMARY_FILE

# The `python` and `mpiexec` of the environment running Snakemake (the venv) come first on the
# PATH of every shell job, also when it is started as .venv/bin/snakemake without activating it.
# Inside a Slurm job step the executor plugin leaves PMI_* variables whose file descriptor the
# job's shell no longer has; an MPI program started from it (mla, transfer tla2) would then abort
# in PMI_Init. Launchers (mpiexec, srun) hand their ranks fresh ones.
shell.prefix(
    f"set -euo pipefail; export PATH={shlex.quote(str(Path(sys.executable).parent))}:$PATH; "
    "unset ${{!PMI_*}} ${{!PMIX_*}}; "
)

# An objective or constraint "module:function" is looked up in the directory Snakemake runs in,
# as the jobs (python -m propulate) look it up, wherever the Snakefile is: the installed workflow
# run from a campaign directory, or by a scheduled run.
if os.getcwd() not in sys.path:
    sys.path.insert(0, os.getcwd())

#: The software environment of every rule under --software-deployment-method conda.
ENV = "../envs/propulate.yaml"

# The campaign reads the config as given (keys set explicitly), the schema fills in defaults.
# Every config error is one line naming the key path (exit status 2, before any job):
# check_schema runs the schema first, as Snakemake's validate would print the whole schema.
_GIVEN = copy.deepcopy(config)
# The schema beside this file, as validate finds it: workflow.basedir is the directory of the
# campaign's own Snakefile when this workflow is a module of it (propulate init), not this one's.
SCHEMA = Path(str(workflow.current_basedir), "..", "schemas", "config.schema.yaml")
try:
    check_schema(
        _GIVEN,
        load_schema(SCHEMA),
    )
    validate(config, "../schemas/config.schema.yaml")  # fills in the schema's defaults
    C = Campaign.from_config(_GIVEN)
except CampaignError as err:
    print(f"error: {err}", file=sys.stderr)
    sys.exit(2)


def _alternatives(names):
    return "|".join(re.escape(n) for n in names) if names else "(?!x)x"


wildcard_constraints:
    task=_alternatives(C.training_ids + C.new_ids + C.file_ids),
    method=_alternatives(C.methods),
    seed=r"\d+",
    tla=r"tla1|tla2",


# ------------------------------------------------------------------------ paths
CAMPAIGN = C.path("campaign.yaml")
MODEL = C.path("model", "lcm.json")
MLA_DIR = C.path("mla")
# MLA's and each transfer job's output is a flag in its folder (propulate.campaign.owned).
MLA_DONE = f"{MLA_DIR}/{DONE}"
TRANSFER_FLAGS = [f"{d}/{DONE}" for d in C.transfer_runs]
SUMMARY = C.path("summary.csv")
REPORT = C.path("report.html")
FIGURES = C.path("figures")
LOGS = C.path("logs")
BENCHMARKS = C.path("benchmarks")
RUN = C.path("runs", "{task}", "{method}-s{seed}")
# An evolve run's output is its summary file: Snakemake deletes only that file of a failed job.
EVOLVE_SUMMARIES = [f"{run}/{SUMMARY_FILE}" for run in C.evolve_runs]
TASK_FILES = [C.task_file(t) for t in C.task_ids]
ALL_INPUTS = (
    EVOLVE_SUMMARIES
    + ([MLA_DONE] if C.mla_on else [])
    + TRANSFER_FLAGS
    + C.baseline_runs
)
# The resources of a job that measures: on a cluster one node with a task per core of an
# evaluation, so that a command objective's launcher (e.g. "srun -n {nproc} --exact") can start
# its ranks as a job step inside the allocation (locally only the rule's threads count).
MEASURING = {"tasks": C.evaluation_cores, "cpus_per_task": 1, "nodes": 1}
# The thread variables the user set, read where Snakemake reads the workflow (evolve.smk).
USER_THREADS = restore_user_variables(os.environ)
# A command objective's mapping, in a file of its own for the jobs' --objective.
OBJECTIVE_FILES = [C.objective_file] if C.is_command else []


# ------------------------------------------------------------------------ input functions
def space_input(wildcards):
    return C.space_file(wildcards.task)


def task_input(wildcards):
    return [] if C.taskless else [C.task_file(wildcards.task)]


def task_option(wildcards, input):
    return f"--task {input.task}" if input.task else f"--task-id {wildcards.task}"


def evolve_options(wildcards):
    return opts.evolve_options(C, wildcards.method)


def evolve_settings(wildcards):
    return f"{C.objective_of(wildcards.task)} {wildcards.method} {wildcards.seed} {evolve_options(wildcards)}"


def run_dirs(wildcards, input):
    """The run directories of a rule's inputs: an evolve run's summary file, or the flag of an
    MLA or transfer job, names its folder."""
    return [
        str(Path(p).parent) if Path(p).name in (SUMMARY_FILE, DONE) else p
        for p in input.runs
    ]


def campaign_root(wildcards, output):
    """The campaign's results folder (holding tuning.sqlite), from a tuningdb rule's output."""
    return str(Path(output[0]).parents[1])


def transfer_options(wildcards):
    return opts.transfer_options(C, wildcards.tla)


def tuned_inputs(wildcards):
    """A task's tuning runs as job inputs: an evolve run's summary file, the flag of the MLA
    or transfer job."""
    evolve, transfer = set(C.evolve_runs), set(C.transfer_runs)
    return [
        (
            f"{d}/{SUMMARY_FILE}"
            if d in evolve
            else (
                MLA_DONE
                if d.startswith(MLA_DIR)
                else f"{d}/{DONE}" if d in transfer else d
            )
        )
        for d in C.tuned_runs(wildcards.task)
    ]
