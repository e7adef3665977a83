#!/usr/bin/env bash
# Start a real single-node Slurm cluster on this machine, for tests.
#
# Run as root. Idempotent: packages, munge key, slurm.conf and daemons are only
# installed/written/started when missing or not running, so calling it twice is
# harmless. No systemd, no cgroups, no slurmdbd: the daemons are started by hand
# with PID files so ci/slurm/stop.sh can stop them again.
#
# Environment knobs (all optional):
#   SLURM_START_TIMEOUT  seconds to wait for the node to become idle (default 60)
set -euo pipefail

SLURM_CONF=/etc/slurm/slurm.conf
SLURMCTLD_PID=/run/slurmctld.pid
SLURMD_PID=/run/slurmd.pid
MUNGE_PID=/run/munge/munged.pid
LOG_DIR=/var/log/slurm
TIMEOUT=${SLURM_START_TIMEOUT:-60}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
T0=$SECONDS

log() { echo "[slurm-start +$((SECONDS - T0))s] $*"; }

# Print the daemons' log tails: a bare "exit 1" in CI would leave no clue.
dump_logs() {
    local f
    for f in "$LOG_DIR/slurmctld.log" "$LOG_DIR/slurmd.log" /var/log/munge/munged.log; do
        if [[ -f $f ]]; then
            echo "----- tail of $f -----"
            tail -n 40 "$f" || true
        fi
    done
}

die() {
    echo "[slurm-start] ERROR: $*" >&2
    dump_logs >&2
    exit 1
}

# True if the PID file names a live process whose command is $2: a stale PID
# file from a previous machine boot may point at an unrelated process.
running() {
    local pidfile=$1 name=$2 pid
    [[ -s $pidfile ]] || return 1
    pid=$(<"$pidfile")
    [[ $pid =~ ^[0-9]+$ ]] || return 1
    [[ -r /proc/$pid/comm && $(<"/proc/$pid/comm") == "$name" ]]
}

# The daemons fork into the background and write their PID file a moment
# later: wait (bounded) for it rather than racing it.
wait_started() {
    local pidfile=$1 name=$2 i
    for ((i = 0; i < 100; i++)); do
        running "$pidfile" "$name" && return 0
        sleep 0.1
    done
    die "$name did not come up (no live process in $pidfile after 10 s)"
}

[[ $EUID -eq 0 ]] || die "must run as root (it installs packages and starts daemons)"

# ---------------------------------------------------------------- packages
PKGS=(slurmctld slurmd slurm-client munge)
missing=()
for p in "${PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
    log "installing ${missing[*]} (apt-get)"
    export DEBIAN_FRONTEND=noninteractive
    # Keep the packages' init scripts from starting daemons during install: we
    # start them ourselves below, with our config and PID files. Docker-like
    # images already ship such a policy-rc.d; only add (and remove) our own.
    policy_added=0
    if [[ ! -e /usr/sbin/policy-rc.d ]]; then
        printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
        chmod 755 /usr/sbin/policy-rc.d
        policy_added=1
        trap 'rm -f /usr/sbin/policy-rc.d' EXIT
    fi
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${PKGS[@]}" >/dev/null
    if ((policy_added)); then
        rm -f /usr/sbin/policy-rc.d
        trap - EXIT
    fi
    log "packages installed"
else
    log "packages already installed"
fi

# ---------------------------------------------------------------- munge
# munged refuses to start unless its dirs exist with strict owners/modes.
install -d -o munge -g munge -m 0755 /run/munge
install -d -o munge -g munge -m 0700 /etc/munge /var/lib/munge /var/log/munge
if [[ ! -s /etc/munge/munge.key ]]; then
    log "creating munge key"
    dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
fi
chown munge:munge /etc/munge/munge.key
chmod 0400 /etc/munge/munge.key

if running "$MUNGE_PID" munged; then
    log "munged already running (pid $(<"$MUNGE_PID"))"
else
    log "starting munged"
    # A socket left by a killed munged would make the new one refuse to start.
    rm -f /run/munge/munge.socket.2 /run/munge/munge.socket.2.lock
    runuser -u munge -- /usr/sbin/munged --pid-file="$MUNGE_PID" ||
        die "munged failed to start"
    wait_started "$MUNGE_PID" munged
fi
# Round-trip a credential: proves the key and socket work before Slurm needs them.
for _ in $(seq 1 20); do
    if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then break; fi
    sleep 0.5
done
munge -n | unmunge >/dev/null || die "munge credential round-trip failed"

# ---------------------------------------------------------------- slurm.conf
HOST=$(hostname -s)
# The hardware line comes from slurmd itself, so CPUs/cores/memory match what
# slurmd will report at registration (a mismatch would drain the node).
# Only the first line (NodeName=...) is config; "UpTime=" is not.
NODE_LINE=$(slurmd -C 2>/dev/null | grep '^NodeName=') || die "slurmd -C printed no NodeName line"
# Use the short hostname (what slurmd registers as) and talk over loopback, so
# nothing depends on DNS or /etc/hosts naming this machine.
NODE_LINE=$(sed -E "s/^NodeName=[^ ]+/NodeName=$HOST NodeAddr=127.0.0.1/" <<<"$NODE_LINE")
# The Debian packages create a `slurm` system user; fall back to root if not.
SLURM_USER=slurm
id -u slurm >/dev/null 2>&1 || SLURM_USER=root

mkdir -p /etc/slurm
new_conf=$(mktemp)
cat >"$new_conf" <<EOF
# Written by ci/slurm/start.sh: single-node test cluster. Do not edit by hand.
ClusterName=ci
SlurmctldHost=$HOST(127.0.0.1)
SlurmUser=$SLURM_USER
AuthType=auth/munge
CredType=cred/munge

# No cgroups or systemd here: track processes via /proc, bind nothing.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
# The mpich PyPI wheel forms one MPI world under srun only via PMI2.
MpiDefault=pmi2

# Cores are the consumable; memory is not, so two 1-CPU jobs always fit at once.
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill

# No slurmdbd: no accounting (so sacct does not work), no job accounting gather.
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none

# Keep finished jobs visible to squeue/scontrol for 5 min: without sacct, that
# is the only way a client (e.g. the Snakemake executor plugin) sees their end
# state. Must stay well above the plugin's status-check delay.
MinJobAge=300
# A node that comes back (e.g. after a restart) returns to service by itself.
ReturnToService=2
SlurmdTimeout=300
InactiveLimit=0
KillWait=5
Waittime=0

SlurmctldPort=6817
SlurmdPort=6818
SlurmctldPidFile=$SLURMCTLD_PID
SlurmdPidFile=$SLURMD_PID
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldLogFile=$LOG_DIR/slurmctld.log
SlurmdLogFile=$LOG_DIR/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info

$NODE_LINE State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF

if [[ -f $SLURM_CONF ]] && cmp -s "$new_conf" "$SLURM_CONF"; then
    rm -f "$new_conf"
    log "$SLURM_CONF unchanged"
else
    log "writing $SLURM_CONF"
    install -m 0644 "$new_conf" "$SLURM_CONF"
    rm -f "$new_conf"
    # Daemons running with an older config: restart them so it takes effect
    # (scontrol reconfigure cannot change node definitions).
    if running "$SLURMCTLD_PID" slurmctld || running "$SLURMD_PID" slurmd; then
        log "config changed while Slurm was running: restarting Slurm daemons"
        SLURM_STOP_KEEP_MUNGE=1 bash "$HERE/stop.sh"
    fi
fi

install -d -o "$SLURM_USER" -g "$SLURM_USER" -m 0755 /var/spool/slurmctld "$LOG_DIR"
install -d -m 0755 /var/spool/slurmd

# ---------------------------------------------------------------- daemons
# Both daemonize themselves and write their PID files (paths from slurm.conf).
if running "$SLURMCTLD_PID" slurmctld; then
    log "slurmctld already running (pid $(<"$SLURMCTLD_PID"))"
else
    log "starting slurmctld"
    /usr/sbin/slurmctld -f "$SLURM_CONF" || die "slurmctld failed to start"
    wait_started "$SLURMCTLD_PID" slurmctld
fi
if running "$SLURMD_PID" slurmd; then
    log "slurmd already running (pid $(<"$SLURMD_PID"))"
else
    log "starting slurmd"
    /usr/sbin/slurmd -f "$SLURM_CONF" || die "slurmd failed to start"
    wait_started "$SLURMD_PID" slurmd
fi

# ---------------------------------------------------------------- wait for idle
log "waiting up to ${TIMEOUT}s for node $HOST to be idle"
deadline=$((SECONDS + TIMEOUT))
state=""
while ((SECONDS < deadline)); do
    running "$SLURMCTLD_PID" slurmctld || die "slurmctld died"
    running "$SLURMD_PID" slurmd || die "slurmd died"
    state=$(timeout 10 sinfo -h -n "$HOST" -o %T 2>/dev/null | head -n1) || state=""
    case $state in
    idle | mixed | allocated)
        # "mixed"/"allocated": jobs from an earlier start are still running.
        log "node $HOST is $state; cluster ready"
        timeout 10 sinfo || true
        exit 0
        ;;
    down | drained | draining | drain)
        # Without the asterisk the node responds but was marked down/drained,
        # e.g. by saved state from a previous run: put it back into service.
        log "node $HOST is $state; resuming it"
        timeout 10 scontrol update nodename="$HOST" state=resume || true
        ;;
    esac
    sleep 1
done
die "node $HOST not idle after ${TIMEOUT}s (last state: '${state:-none}')"
