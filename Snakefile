# The propulate campaign pipeline: tasks -> evolutionary runs -> LCM -> transfer -> report.
#
#     snakemake --cores 2                              # default campaign (config/config.yaml)
#     snakemake --cores 2 --configfile config/demo.yaml
#
# Each campaign writes under results/<name>/ (its config's `name`), so campaigns never share files.
#     snakemake --profile slurm                        # on a cluster (profiles/slurm/README.md)


# The default campaign, unless the command line names its own config file(s): Snakemake would
# otherwise merge those into the default one, mixing two campaigns' tasks and spaces.
if not workflow.overwrite_configfiles:

    configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/sample.smk"
include: "workflow/rules/evolve.smk"
include: "workflow/rules/model.smk"
include: "workflow/rules/transfer.smk"
include: "workflow/rules/baselines.smk"
include: "workflow/rules/tuningdb.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/lock.smk"


rule all:
    default_target: True
    input:
        summary=SUMMARY,
        report=REPORT,
        tasks=TASK_FILES,
        runs=EVOLVE_SUMMARIES,
        model=[] if C.taskless else [MODEL],
        transfer=TRANSFER_FLAGS,
        baselines=C.baseline_runs,
        tuningdb=[] if C.taskless else [TUNING_UPDATE],
    localrule: True
