# Baselines (config `baselines`): the untuned default on every task, random search on the new
# tasks with TLA2's budget, a landscape grid on one task. Each is a `measure` run directory.
# Threads: the config's evaluation_cores, so that no two measurements share a core.


rule baseline:
    input:
        space=CAMPAIGN,
        task=C.task_file("{task}"),
        objective=OBJECTIVE_FILES,
    output:
        directory(C.baseline_dir("{task}", "{kind}")),
    log:
        f"{LOGS}/baselines/{{task}}/{{kind}}.log",
    benchmark:
        f"{BENCHMARKS}/baselines/{{task}}/{{kind}}.tsv"
    wildcard_constraints:
        kind="default|random|landscape",
    conda:
        ENV
    threads: C.evaluation_cores
    resources:
        **MEASURING,
    params:
        options=lambda wildcards: C.baselines.options(
            wildcards.kind, C.transfer.tla2_budget, C.transfer.seed
        ),
    shell:
        "python -m propulate measure --space {input.space} --task {input.task} "
        "--out {output} {params.options} > {log} 2>&1"


# The default and each tuning run's best configuration measured again, interleaved in rounds,
# so that the report's speedups do not depend on when each was first measured (the machine's
# speed drifts): propulate.remeasure.paired.
rule paired:
    input:
        space=CAMPAIGN,
        task=C.task_file("{task}"),
        objective=OBJECTIVE_FILES,
        default=C.baseline_dir("{task}", "default"),
        runs=tuned_inputs,
    output:
        C.paired_file("{task}"),
    log:
        f"{LOGS}/paired/{{task}}.log",
    benchmark:
        f"{BENCHMARKS}/paired/{{task}}.tsv"
    conda:
        ENV
    threads: C.evaluation_cores
    resources:
        **MEASURING,
    params:
        options=C.baselines.paired_options(),
        runs=lambda wildcards: C.tuned_runs(wildcards.task),
    shell:
        "python -m propulate paired --space {input.space} --task {input.task} "
        "--runs {params.runs} {params.options} --out {output} > {log} 2>&1"
