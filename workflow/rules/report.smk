# Aggregation and the report (with the methods' comparison for a benchmark suite).


rule aggregate:
    input:
        ALL_RUNS,
    output:
        report(
            SUMMARY,
            caption="../report/summary.rst",
            category="Results",
        ),
    log:
        "results/logs/aggregate.log",
    localrule: True
    conda:
        ENV
    shell:
        "python -m propulate aggregate --runs {input} --out {output} > {log} 2>&1"


rule report:
    input:
        summary=SUMMARY,
        runs=ALL_RUNS,
        model=[MODEL] if not TASKLESS else [],
    output:
        html=report(
            REPORT,
            caption="../report/report.rst",
            category="Report",
        ),
        figures=report(
            directory(FIGURES),
            patterns=["{name}.png"],
            caption="../report/figure.rst",
            category="Figures",
        ),
    log:
        "results/logs/report.log",
    localrule: True
    conda:
        ENV
    params:
        title=config["name"],
        model=lambda wildcards, input: f"--model {input.model}" if input.model else "",
        suite=f"--suite {' '.join(SUITE)}" if SUITE else "",
    shell:
        "python -m propulate report --summary {input.summary} --runs {input.runs} "
        "{params.model} {params.suite} --figures {output.figures} --title {params.title} "
        "--out {output.html} > {log} 2>&1"
