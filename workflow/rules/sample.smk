# Search-space generation: the campaign file (or a suite's space files) and one spec file per
# task.


if C.suite:

    # A suite function's space file, from the benchmark registry (same format as the campaign
    # file): its loss and limits.
    rule suite_space:
        output:
            C.space_file("{task}"),
        log:
            f"{LOGS}/suite_space/{{task}}.log",
        localrule: True
        conda:
            ENV
        params:
            spec=lambda wildcards: C.space_spec(wildcards.task),
        script:
            "../scripts/write_campaign.py"

else:

    rule campaign:
        output:
            CAMPAIGN,
        log:
            f"{LOGS}/campaign.log",
        localrule: True
        conda:
            ENV
        params:
            spec=C.spec(),
        script:
            "../scripts/write_campaign.py"


if C.is_command:

    rule objective_file:
        output:
            C.objective_file,
        log:
            f"{LOGS}/objective_file.log",
        localrule: True
        conda:
            ENV
        params:
            spec=C.objective,
        script:
            "../scripts/write_campaign.py"


if C.lhs_ids:

    rule sample_tasks:
        input:
            CAMPAIGN,
        output:
            [C.task_file(t) for t in C.lhs_ids],
        log:
            f"{LOGS}/sample_tasks.log",
        localrule: True
        conda:
            ENV
        params:
            n=len(C.lhs_ids),
            seed=C.lhs_seed,
            prefix=C.lhs_prefix,
            outdir=lambda wildcards, output: str(Path(output[0]).parent),
        shell:
            "python -m propulate sample-tasks --space {input} --n {params.n} "
            "--seed {params.seed} --prefix {params.prefix} --out {params.outdir} "
            "> {log} 2>&1"


if C.listed:

    rule listed_task:
        input:
            CAMPAIGN,
        output:
            C.task_file("{task}"),
        log:
            f"{LOGS}/listed_task/{{task}}.log",
        wildcard_constraints:
            task=_alternatives(C.listed),
        localrule: True
        conda:
            ENV
        params:
            values=lambda wildcards: C.listed[wildcards.task],
        script:
            "../scripts/write_task.py"
