"""The files ``propulate init`` writes that are not copies of the package's: text templates.

``{name}`` and ``{version}`` are filled in with :meth:`str.format` (literal braces doubled).
"""

from __future__ import annotations

#: The campaign directory's Snakefile: the installed workflow as a Snakemake module.
SNAKEFILE = """\
# The campaign of this directory, written by `propulate init` (propulate {version}): the workflow
# installed with the propulate package, used as a Snakemake module. Run it from here:
#     snakemake --cores 2                                  # writes results/<name>/ here
#     snakemake --profile profiles/slurm                   # as Slurm jobs (profiles/slurm/README.md)
#     snakemake --cores 2 --configfile config/other.yaml   # another campaign of this directory
# The rules are those of the installed version (`propulate --version`); config/README.md
# documents every config key.
from propulate.pipeline import snakefile

# The default campaign, unless the command line names its own config file(s): Snakemake would
# otherwise merge those into this one.
if not workflow.overwrite_configfiles:

    configfile: "config/config.yaml"


module propulate:
    snakefile:
        snakefile()
    config:
        config


use rule * from propulate


# One Snakemake run of a campaign at a time: a module's handlers do not apply here
# (propulate.campaign.lock).
from propulate.campaign.lock import campaign_root, hold, let_go


onstart:
    hold(campaign_root(config))


onsuccess:
    let_go()


onerror:
    let_go()
"""

#: The starter campaign's config (no ``--example``).
CONFIG = """\
# Campaign `{name}`, written by `propulate init` (propulate {version}). Run it in this directory:
#     snakemake --cores 2                  # -> results/{name}/report.html
#     snakemake --profile profiles/slurm   # on a Slurm cluster (see profiles/slurm/README.md)
# Start by putting your own loss into objective.py and your parameters into space.yaml.
# Every key is documented in config/README.md.
name: {name}

# The loss to minimize, "module:function", called loss(params, task): objective.py in this
# directory (the directory Snakemake runs in is on the import path of the workflow and its jobs).
objective: objective:loss

# The parameter space, from a space file (the file `propulate evolve --space` reads too).
parameters: space.yaml

# What differs between the runs of your application (input sizes, ...). Leave out task_space,
# training_tasks and new_tasks to tune for one task only (no model, no transfer).
task_space:
  size: {{type: int, low: 100, high: 1000}}

# Tasks tuned by evolutionary runs: 3 drawn by a Latin hypercube over task_space (ids train00,
# train01, train02); `listed: {{id: {{size: 250}}}}` names tasks of your own.
training_tasks:
  latin_hypercube: {{n: 3, seed: 0}}

# Tasks the multitask model transfers to: TLA1 predicts their best configuration, TLA2 tunes
# them with a small budget. Add one and run again: only its jobs, the summary and report run.
new_tasks:
  medium: {{size: 550}}

evolve:
  seeds: [1]                # one run per training task and seed
  max_evaluations: 100      # per run, over all its MPI ranks
  time_limit: 60            # seconds per run (no evaluation starts after it; Slurm runtime)

lcm:                        # the multitask Gaussian process over all training runs
  latent: 1
  restarts: 2
  max_points: 40

transfer:
  tla2_budget: 4            # evaluations of TLA2 per new task
"""

#: The starter campaign's space file.
SPACE = """\
# The parameters to tune (propulate's space file; README "A space file"). Each is
#   name: {{type: int|float, low: ..., high: ..., log: true|false}}   or
#   name: {{type: categorical, choices: [a, b]}}
# An optional `constraint: module:function` rejects infeasible configurations.
parameters:
  block: {{type: int, low: 1, high: 256, log: true}}
  alpha: {{type: float, low: 0.0, high: 1.0}}
"""

#: The starter campaign's objective.
OBJECTIVE = '''\
"""The loss the campaign minimizes: replace `loss` with your own.

It is called with one configuration (`params`, the parameters of space.yaml) and the task
(`task`, the values of config/config.yaml's task_space) and returns a number, e.g. a runtime in
seconds; lower is better. An exception, NaN or inf records the evaluation as failed. To tune a
program instead of a Python function, see `propulate init --example command`.
"""

import math


def loss(params, task):
    """A stand-in with a known optimum: block = sqrt(size), alpha = 0.3."""
    miss = math.log2(params["block"]) - 0.5 * math.log2(task["size"])
    return miss**2 + (params["alpha"] - 0.3) ** 2
'''

#: Kept out of version control in a campaign directory.
GITIGNORE = """\
results/
.snakemake/
__pycache__/
"""

#: Put in front of an example's config.
EXAMPLE_HEADER = """\
# Campaign `{name}`, written by `propulate init --example {example}` (propulate {version}) from
# the package's {source}. Run it in this directory:
{setup}#     snakemake --cores 2                  # -> results/{name}/report.html
#     snakemake --profile profiles/slurm   # on a Slurm cluster (see profiles/slurm/README.md)
# Every key is documented in config/README.md. The example's own notes follow.
#
"""

#: The setup line of :data:`EXAMPLE_HEADER` for an example with ``setup`` commands.
SETUP_LINE = """\
#     python -m propulate.campaign setup config/config.yaml   # first: build what it needs
"""
