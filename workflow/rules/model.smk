# Model fitting: one multitask GP (LCM) over all training histories; optional MLA rounds.


rule fit_lcm:
    input:
        space=CAMPAIGN,
        runs=EVOLVE_SUMMARIES,
    output:
        report(
            MODEL,
            caption="../report/model.rst",
            category="Model",
        ),
    log:
        f"{LOGS}/fit_lcm.log",
    benchmark:
        f"{BENCHMARKS}/fit_lcm.tsv"
    conda:
        ENV
    threads: 1
    params:
        runs=run_dirs,
        options=opts.lcm_options(C),
    shell:
        "python -m propulate fit-lcm --space {input.space} --runs {params.runs} "
        "--out {output} {params.options} > {log} 2>&1"


# MLA's output is a flag in its folder (propulate.campaign.owned): Snakemake deletes only the
# flag of a failed or killed job, so the next attempt resumes MLA from its records, after an
# orphaned attempt (Snakemake killed) has ended.
if C.mla_on:

    rule mla:
        input:
            space=CAMPAIGN,
            tasks=[C.task_file(t) for t in C.training_ids],
            objective=OBJECTIVE_FILES,
        output:
            touch(MLA_DONE),
        log:
            f"{LOGS}/mla.log",
        benchmark:
            f"{BENCHMARKS}/mla.tsv"
        conda:
            ENV
        threads: C.evaluation_cores
        resources:
            **MEASURING,
        params:
            out=lambda wildcards, output: str(Path(output[0]).parent),
            objective=lambda wildcards: C.objective_of(""),
            options=opts.mla_options(C),
            settings=lambda wildcards: f"{C.objective_of('')} {opts.mla_options(C)}",
        shell:
            "python -m propulate.campaign run-owned --out {params.out} "
            "--settings {params.settings:q} --files {input} -- "
            "python -m propulate mla --space {input.space} --objective {params.objective} "
            "--tasks {input.tasks} --out {params.out} {params.options} > {log} 2>&1"
