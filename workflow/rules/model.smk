# Model fitting: one multitask GP (LCM) over all training histories; optional MLA rounds.


rule fit_lcm:
    input:
        space=CAMPAIGN,
        runs=EVOLVE_RUNS,
    output:
        report(
            MODEL,
            caption="../report/model.rst",
            category="Model",
        ),
    log:
        "results/logs/fit_lcm.log",
    benchmark:
        "results/benchmarks/fit_lcm.tsv"
    conda:
        ENV
    threads: 1
    params:
        options=lcm_options(),
    shell:
        "python -m propulate fit-lcm --space {input.space} --runs {input.runs} "
        "--out {output} {params.options} > {log} 2>&1"


if MLA:

    rule mla:
        input:
            space=CAMPAIGN,
            tasks=[task_file(t) for t in TRAINING_IDS],
        output:
            directory(MLA_DIR),
        log:
            "results/logs/mla.log",
        benchmark:
            "results/benchmarks/mla.tsv"
        conda:
            ENV
        threads: 1
        params:
            objective=config["objective"],
            budget=config["mla"]["budget"],
            initial=config["mla"]["initial"],
            seed=config["mla"]["seed"],
            model=model_options(),
        shell:
            "python -m propulate mla --space {input.space} --objective {params.objective} "
            "--tasks {input.tasks} --out {output} --budget {params.budget} "
            "--initial {params.initial} {params.model} --seed {params.seed} > {log} 2>&1"
