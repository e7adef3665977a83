# Transfer to the new tasks: TLA1 (predicted optimum, zero tuning) and TLA2 (small budget).
# The output is a flag in the run directory, as for MLA (model.smk): a killed job's re-run
# resumes TLA2 from its records instead of spending its budget again.


rule transfer:
    input:
        space=CAMPAIGN,
        model=MODEL,
        task=C.task_file("{task}"),
        objective=OBJECTIVE_FILES,
    output:
        touch(C.path("transfer", "{task}", "{tla}", DONE)),
    log:
        f"{LOGS}/transfer/{{task}}/{{tla}}.log",
    benchmark:
        f"{BENCHMARKS}/transfer/{{task}}/{{tla}}.tsv"
    conda:
        ENV
    threads: C.evaluation_cores
    resources:
        **MEASURING,
    params:
        out=lambda wildcards, output: str(Path(output[0]).parent),
        options=transfer_options,
        settings=lambda wildcards: f"{wildcards.tla} {transfer_options(wildcards)}",
    shell:
        "python -m propulate.campaign run-owned --out {params.out} "
        "--settings {params.settings:q} --files {input} -- "
        "python -m propulate transfer {wildcards.tla} --model {input.model} "
        "--space {input.space} --task {input.task} --out {params.out} {params.options} "
        "> {log} 2>&1"
