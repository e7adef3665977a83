# Search-space generation: the campaign file (or a suite's space files) and one spec file per
# task.


if SUITE:

    # A suite function's space file, from the benchmark registry (same format as the campaign
    # file): its loss and limits.
    rule suite_space:
        output:
            suite_space_file("{task}"),
        log:
            "results/logs/suite_space/{task}.log",
        localrule: True
        conda:
            ENV
        params:
            spec=lambda wildcards: suite_spec(wildcards.task),
        script:
            "../scripts/write_campaign.py"

else:

    rule campaign:
        output:
            CAMPAIGN,
        log:
            "results/logs/campaign.log",
        localrule: True
        conda:
            ENV
        params:
            spec=campaign_spec(),
        script:
            "../scripts/write_campaign.py"


if LHS_IDS:

    rule sample_tasks:
        input:
            CAMPAIGN,
        output:
            [task_file(t) for t in LHS_IDS],
        log:
            "results/logs/sample_tasks.log",
        localrule: True
        conda:
            ENV
        params:
            n=len(LHS_IDS),
            seed=config["training_tasks"]["latin_hypercube"]["seed"],
            prefix=LHS_PREFIX,
            outdir=lambda wildcards, output: os.path.dirname(output[0]),
        shell:
            "python -m propulate sample-tasks --space {input} --n {params.n} "
            "--seed {params.seed} --prefix {params.prefix} --out {params.outdir} "
            "> {log} 2>&1"


if LISTED:

    rule listed_task:
        input:
            CAMPAIGN,
        output:
            task_file("{task}"),
        log:
            "results/logs/listed_task/{task}.log",
        wildcard_constraints:
            task=_alternatives(LISTED),
        localrule: True
        conda:
            ENV
        params:
            values=lambda wildcards: LISTED[wildcards.task],
        script:
            "../scripts/write_task.py"
