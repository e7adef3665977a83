# The tuning database (results/<name>/tuning.sqlite, docs/tuning-database.md): updated from
# every run of the campaign. A scheduled run (`snakemake scheduled`, or
# workflow/scripts/scheduled_run.sh from cron or scrontab) transfers to the tasks of the
# config's new_tasks_file with TLA2, updates the database, and re-validates the stored
# configurations when the machine changed. The rules' outputs are JSON records of what each
# step did: the database itself is no Snakemake output, since Snakemake deletes a job's outputs
# before running it and the database keeps every version.

from propulate.runs.fingerprint import config_hash

TUNING_UPDATE = C.path("tuningdb", "update.json")
REVALIDATED = C.path("tuningdb", "revalidate.json")
FILE_TLA2 = [C.path("transfer", t, "tla2", DONE) for t in C.file_ids]


# A campaign without tasks (or a suite) has no model to transfer with: no database.
if not C.taskless:

    # Not a local rule: each row keeps the fingerprint its run's summary recorded, and runs
    # without one get this job's machine, so on a cluster it runs on a compute node like them.
    rule tuningdb_update:
        input:
            space=CAMPAIGN,
            model=MODEL,
            runs=ALL_INPUTS + FILE_TLA2,
            # where the paired rounds found another configuration faster than the tuning's
            # pick, the database stores that one with the evidence (propulate.remeasure.verdict)
            paired=C.paired_files,
        output:
            TUNING_UPDATE,
        log:
            f"{LOGS}/tuningdb_update.log",
        conda:
            ENV
        threads: 1
        params:
            db=campaign_root,
            runs=run_dirs,
            seed=C.transfer.seed,
            transfer_model=C.transfer.model,
            # the space itself, also when `parameters` names a space file
            config_hash=config_hash(
                {
                    **config,
                    "parameters": C.parameters,
                    "constraint": C.constraint,
                    **({"forbidden": list(C.forbidden)} if C.forbidden else {}),
                }
            ),
        shell:
            "python -m propulate tuningdb update --db {params.db} --campaign {input.space} "
            "--runs {params.runs} --model {input.model} --seed {params.seed} "
            "--transfer-model {params.transfer_model} --config-hash {params.config_hash} "
            "--paired {input.paired} > {output} 2> {log}"

    # Re-measures the configurations stored from another machine (on the machine this job runs
    # on), records their drift and re-tunes the drifted tasks with TLA2. Cheap when nothing was
    # measured elsewhere; the scheduled-run script forces it on every run.
    rule tuningdb_revalidate:
        input:
            updated=TUNING_UPDATE,
            model=MODEL,
        output:
            REVALIDATED,
        log:
            f"{LOGS}/tuningdb_revalidate.log",
        conda:
            ENV
        threads: C.evaluation_cores
        resources:
            **MEASURING,
        params:
            db=campaign_root,
            retune=lambda wildcards, output: str(
                Path(campaign_root(wildcards, output), "retune")
            ),
            repeats=C.revalidate.repeats,
            threshold=C.revalidate.threshold,
            budget=C.transfer.tla2_budget,
            seed=C.transfer.seed,
        shell:
            "python -m propulate tuningdb revalidate --db {params.db} --repeats {params.repeats} "
            "--threshold {params.threshold} --retune-dir {params.retune} "
            "--budget {params.budget} --seed {params.seed} > {output} 2> {log}"

    # The target of a scheduled run: the new-tasks file's tasks transferred, the database updated
    # and re-validated; the campaign's other results are left as they are.
    rule scheduled:
        input:
            updated=TUNING_UPDATE,
            revalidated=REVALIDATED,
        localrule: True
