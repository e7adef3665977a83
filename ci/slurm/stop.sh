#!/usr/bin/env bash
# Stop the test Slurm cluster started by ci/slurm/start.sh.
#
# Stops slurmd, slurmctld and munged (in that order: the Slurm daemons need
# munge to talk while shutting down) via their PID files. Idempotent and never
# fails when a daemon is not running, so it is safe in an EXIT trap.
#
# SLURM_STOP_KEEP_MUNGE=1 leaves munged running (start.sh uses it to restart
# only the Slurm daemons after a config change).
set -uo pipefail # no -e: a stop step that fails must not skip the others

log() { echo "[slurm-stop] $*"; }

# stop_daemon NAME PIDFILE: SIGTERM, wait up to 15 s, then SIGKILL.
stop_daemon() {
    local name=$1 pidfile=$2 pid i
    if [[ ! -s $pidfile ]]; then
        log "$name: no PID file, not running"
        return 0
    fi
    pid=$(<"$pidfile")
    # Only signal the PID if it really is that daemon: a stale PID file could
    # otherwise make us kill an unrelated process that reused the PID.
    if ! [[ $pid =~ ^[0-9]+$ && -r /proc/$pid/comm && $(<"/proc/$pid/comm") == "$name" ]]; then
        log "$name: stale PID file ($pid), removing"
        rm -f "$pidfile"
        return 0
    fi
    log "$name: stopping pid $pid"
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 150; i++)); do
        [[ -d /proc/$pid ]] || break
        sleep 0.1
    done
    if [[ -d /proc/$pid ]]; then
        log "$name: still alive after 15 s, SIGKILL"
        kill -KILL "$pid" 2>/dev/null || true
        for ((i = 0; i < 50; i++)); do
            [[ -d /proc/$pid ]] || break
            sleep 0.1
        done
    fi
    rm -f "$pidfile"
    log "$name: stopped"
}

stop_daemon slurmd /run/slurmd.pid
stop_daemon slurmctld /run/slurmctld.pid
if [[ ${SLURM_STOP_KEEP_MUNGE:-0} != 1 ]]; then
    stop_daemon munged /run/munge/munged.pid
fi
exit 0
