# Aggregation and the report (with the methods' comparison for a benchmark suite).


rule aggregate:
    input:
        runs=ALL_INPUTS,
    output:
        report(
            SUMMARY,
            caption="../report/summary.rst",
            category="Results",
        ),
    log:
        f"{LOGS}/aggregate.log",
    localrule: True
    conda:
        ENV
    params:
        runs=run_dirs,
    shell:
        "python -m propulate aggregate --runs {params.runs} --out {output} > {log} 2>&1"


rule report:
    input:
        summary=SUMMARY,
        runs=ALL_INPUTS,
        model=[] if C.taskless else [MODEL],
        tuningdb=[] if C.taskless else [TUNING_UPDATE],
        benchmarks=list(C.report_benchmarks),
        paired=C.paired_files,
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
        f"{LOGS}/report.log",
    localrule: True
    conda:
        ENV
    params:
        runs=run_dirs,
        title=C.name,
        model=lambda wildcards, input: f"--model {input.model}" if input.model else "",
        suite=f"--suite {' '.join(C.suite)}" if C.suite else "",
        tuningdb=lambda wildcards, input: (
            f"--tuning-db {C.path('tuning.sqlite')}" if input.tuningdb else ""
        ),
        benchmarks=lambda wildcards, input: (
            f"--benchmarks {' '.join(input.benchmarks)}" if input.benchmarks else ""
        ),
        paired=lambda wildcards, input: (
            f"--paired {' '.join(input.paired)}" if input.paired else ""
        ),
    shell:
        "python -m propulate report --summary {input.summary} --runs {params.runs} "
        "{params.model} {params.suite} {params.tuningdb} {params.benchmarks} {params.paired} "
        "--figures {output.figures} --title {params.title} --out {output.html} > {log} 2>&1"
