# Transfer to the new tasks: TLA1 (predicted optimum, zero tuning) and TLA2 (small budget).


rule transfer:
    input:
        space=CAMPAIGN,
        model=MODEL,
        task=C.task_file("{task}"),
        objective=OBJECTIVE_FILES,
    output:
        directory(C.path("transfer", "{task}", "{tla}")),
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
        options=transfer_options,
    shell:
        "python -m propulate transfer {wildcards.tla} --model {input.model} "
        "--space {input.space} --task {input.task} --out {output} {params.options} "
        "> {log} 2>&1"
