"""Write the spec file of one listed task, checked against the campaign's task space."""

from propulate.campaign.files import read_campaign_file, write_task_file

snakemake = globals()["snakemake"]

task_id = snakemake.wildcards.task
_, task_space = read_campaign_file(snakemake.input[0])
if task_space is None:
    raise ValueError(f"task {task_id!r}: the campaign file has no task space")
values = task_space.canonical(dict(snakemake.params["values"]))
if not task_space.in_bounds(values):
    raise ValueError(f"task {task_id!r}: {values} is outside the task space")
with open(snakemake.log[0], "w") as log:
    path = write_task_file(snakemake.output[0], task_id, values)
    print(f"wrote {path}", file=log)
