"""Write the spec file of one listed task (``results/tasks/<id>.json``), checked against the
campaign's task space."""

import json

import yaml

from propulate.space import SearchSpace

snakemake = globals()["snakemake"]

task_id = snakemake.wildcards.task
with open(snakemake.input[0]) as fh:
    task_space = SearchSpace(yaml.safe_load(fh)["task_space"])
values = task_space.canonical(dict(snakemake.params["values"]))
if not task_space.in_bounds(values):
    raise ValueError(f"task {task_id!r}: {values} is outside the task space")
with open(snakemake.log[0], "w") as log, open(snakemake.output[0], "w") as fh:
    json.dump({"id": task_id, "task": values}, fh, indent=1)
    print(f"wrote {snakemake.output[0]}", file=log)
