# Evolutionary runs: one MPI job per training task (or suite function), method and seed.
#
# Ranks are the rule's threads, so locally they count against --cores (and are capped by it);
# `--set-threads evolve=N` changes them. On SLURM the profile sets mpi="srun --mpi=pmi2",
# tasks=N ranks and cpus_per_task=1 (profiles/slurm/profile.yaml).


rule evolve:
    input:
        space=space_input,
        task=task_input,
    output:
        directory("results/runs/{task}/{method}-s{seed}"),
    log:
        "results/logs/evolve/{task}/{method}-s{seed}.log",
    benchmark:
        "results/benchmarks/evolve/{task}/{method}-s{seed}.tsv"
    conda:
        ENV
    threads: 2
    resources:
        mpi="mpiexec",
        tasks=lambda wildcards, threads: threads,
        runtime=evolve_runtime(),
    params:
        objective=objective_of,
        task=task_option,
        options=evolve_options,
    shell:
        "{resources.mpi} -n {resources.tasks} python -m propulate evolve "
        "--objective {params.objective} --space {input.space} {params.task} "
        "--out {output} --method {wildcards.method} --seed {wildcards.seed} "
        "{params.options} > {log} 2>&1"
