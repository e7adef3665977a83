# Evolutionary runs: one MPI job per training task (or suite function), method and seed.
#
# Ranks are the rule's threads, so locally they count against --cores (and are capped by it);
# `--set-threads evolve=N` changes them. On SLURM the profile sets mpi="srun --mpi=pmi2",
# tasks=N ranks and cpus_per_task=1 (profiles/slurm/config.yaml).
#
# The output is the run's summary file, not its directory: Snakemake deletes only that file of a
# failed or killed job, the evaluation logs stay and the next attempt resumes the run.
# prepare-run clears the directory first when the job's settings changed since that attempt.
# The job's log (logs/evolve/<task>/<method>-s<seed>.log) keeps every attempt: Snakemake
# deletes a job's declared log before each attempt, so the declared one (.attempt.log) holds
# this attempt and the job appends the same lines to the log it keeps (each attempt begins with
# prepare-run's line: new, resume or restart, on a line of its own even when the last attempt's
# log was cut mid-line). A run evolve stopped on a signal (SIGTERM to a
# rank) fails the job (check-run), so that Snakemake does not take the short run as done.
#
# Snakemake sets OMP_NUM_THREADS and the BLAS variables of a job to its threads (the ranks):
# USER_THREADS puts back only the user's own (none: each rank takes its share of the cores,
# propulate.engine.threads, and the run's run.json says how many).


rule evolve:
    input:
        space=space_input,
        task=task_input,
        objective=OBJECTIVE_FILES,
    output:
        f"{RUN}/{SUMMARY_FILE}",
    log:
        f"{LOGS}/evolve/{{task}}/{{method}}-s{{seed}}.attempt.log",
    benchmark:
        f"{BENCHMARKS}/evolve/{{task}}/{{method}}-s{{seed}}.tsv"
    conda:
        ENV
    threads: 2
    resources:
        mpi="mpiexec",
        tasks=lambda wildcards, threads: C.evolve_ranks or threads,
        runtime=opts.evolve_runtime(C),
    params:
        run=lambda wildcards, output: str(Path(output[0]).parent),
        objective=lambda wildcards: C.objective_of(wildcards.task),
        task=task_option,
        options=evolve_options,
        settings=evolve_settings,
        kept=lambda wildcards: f"{LOGS}/evolve/{wildcards.task}/{wildcards.method}-s{wildcards.seed}.log",
    shell:
        # an attempt cut mid-line (a full disk, a kill) must not glue the next one's first line
        'if [ -n "$(tail -c 1 {params.kept:q} 2>/dev/null)" ]; then echo >> {params.kept:q}; fi; '
        "{{ python -m propulate.campaign prepare-run --out {params.run} "
        "--settings {params.settings:q} --files {input}; "
        f"{USER_THREADS}{{resources.mpi}} -n {{resources.tasks}} python -m propulate evolve "
        "--objective {params.objective} --space {input.space} {params.task} "
        "--out {params.run} --method {wildcards.method} --seed {wildcards.seed} "
        "{params.options}; python -m propulate.campaign check-run --out {params.run}; "
        "}} 2>&1 | tee -a {params.kept:q} > {log}"
