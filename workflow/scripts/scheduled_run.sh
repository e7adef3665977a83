#!/usr/bin/env bash
# A scheduled run of a campaign: transfer to the tasks appended to its new_tasks_file (TLA2),
# update its tuning database, and re-validate the stored configurations when the machine
# changed. Two scheduled runs of one campaign never overlap: the second finds the lock taken,
# says so and exits with status 0.
#
#     workflow/scripts/scheduled_run.sh CONFIG [SNAKEMAKE OPTIONS...]
#
# e.g. from cron (every night at 02:00):
#     0 2 * * * /path/to/propulate/workflow/scripts/scheduled_run.sh config/config.yaml
# or from scrontab on Slurm (the job itself holds the cores; see config/README.md):
#     #SCRON --time=02:00:00 --cpus-per-task=2
#     0 2 * * * /path/to/propulate/workflow/scripts/scheduled_run.sh config/config.yaml
#
# Environment: SNAKEMAKE (default: snakemake next to PYTHON, else on the PATH), PYTHON
# (default: python3; must import yaml), CORES (default: 2), WORKDIR (where results/ is;
# default: the repository). The lock is results/<name>/scheduled.lock, the log
# results/<name>/logs/scheduled.log.
set -euo pipefail

if [[ $# -lt 1 ]]; then
    echo "usage: $0 CONFIG [SNAKEMAKE OPTIONS...]" >&2
    exit 2
fi
config=$1
shift
if [[ ! -f $config ]]; then
    echo "scheduled_run: error: config file $config not found" >&2
    exit 2
fi
config=$(cd "$(dirname "$config")" && pwd)/$(basename "$config")
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "${WORKDIR:-$repo}"
python=${PYTHON:-python3}
snakemake=${SNAKEMAKE:-$(dirname "$(command -v "$python")")/snakemake}
[[ -x $snakemake ]] || snakemake=snakemake
name=$("$python" -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["name"])' \
    "$config") || { echo "scheduled_run: error: $config has no campaign name" >&2; exit 2; }

mkdir -p "results/$name/logs"
exec 9>"results/$name/scheduled.lock"
if ! flock --nonblock 9; then
    echo "scheduled_run: $(date -u +%FT%TZ) a scheduled run of $name is still running; skipped" >&2
    exit 0
fi
echo "scheduled_run: $(date -u +%FT%TZ) $name started" >>"results/$name/logs/scheduled.log"
status=0
# The target comes first: --forcerun takes every word that follows it.
"$snakemake" scheduled --snakefile "$repo/Snakefile" --configfile "$config" \
    --cores "${CORES:-2}" --rerun-incomplete "$@" --forcerun tuningdb_revalidate \
    >>"results/$name/logs/scheduled.log" 2>&1 || status=$?
echo "scheduled_run: $(date -u +%FT%TZ) $name ended with status $status" \
    >>"results/$name/logs/scheduled.log"
exit "$status"
