#!/usr/bin/env bash
# A throw-away single-node Slurm cluster from Debian's packages, for trying the cluster
# recipe on one machine and for `make test-slurm`. Needs root (munged and slurmd run as root
# here, which a real cluster would not do).
#
#   deploy/slurm/local-cluster.sh run -- CMD ...   start, run CMD with SLURM_CONF set, stop
#   deploy/slurm/local-cluster.sh start DIR        start under DIR, print `export SLURM_CONF=...`
#   deploy/slurm/local-cluster.sh stop DIR         stop the daemons started under DIR
#
# Everything lives under one directory (config, munge key and socket, state, spool, logs,
# pid files); daemons run in the foreground as children of this script's subshells and are
# stopped by the pids recorded at start, never by name, so other Slurm or munge processes on
# the machine are left alone. `run` stops them on every exit path (trap), failure included.
# Missing packages are installed with apt-get (slurm-wlm, munge) when SLURM_APT=1 or when
# running non-interactively as root with no slurmctld on PATH.
set -euo pipefail

die() { echo "local-cluster: $*" >&2; exit 1; }

install_packages() {
    if command -v slurmctld >/dev/null && command -v munged >/dev/null; then return; fi
    [ "$(id -u)" = 0 ] || die "slurmctld/munged missing and not root: apt-get install slurm-wlm munge"
    echo "local-cluster: installing slurm-wlm and munge with apt-get" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge >/dev/null \
        || { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge >/dev/null; } \
        || die "apt-get install slurm-wlm munge failed"
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

stop_cluster() {
    local dir=$1 pid name
    for name in slurmd slurmctld munged; do
        [ -f "$dir/pids/$name" ] || continue
        pid=$(cat "$dir/pids/$name")
        if kill -0 "$pid" 2>/dev/null; then
            kill "$pid" 2>/dev/null || true
            for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
            kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
        fi
        rm -f "$dir/pids/$name"
    done
}

start_cluster() {
    local dir=$1
    install_packages
    [ "$(id -u)" = 0 ] || die "the local cluster runs its daemons as root; run as root"
    mkdir -p "$dir"/{etc,munge,state,spool,log,pids,run}
    chmod 700 "$dir/munge"
    local host cpus mem ctld_port d_port
    host=$(hostname -s)
    cpus=$(nproc)
    # RealMemory a little under the total so slurmd's own check never drains the node.
    mem=$(awk '/MemTotal/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)
    ctld_port=$(free_port)
    d_port=$(free_port)
    while [ "$d_port" = "$ctld_port" ]; do d_port=$(free_port); done

    # A fresh munge key per cluster.
    dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
    chmod 400 "$dir/munge/munge.key"
    munged --foreground --force --key-file="$dir/munge/munge.key" \
        --socket="$dir/munge/munge.socket" --pid-file="$dir/run/munged.pid" \
        --log-file="$dir/log/munged.log" --seed-file="$dir/munge/munged.seed" \
        >>"$dir/log/munged.out" 2>&1 &
    echo $! >"$dir/pids/munged"
    for _ in $(seq 100); do [ -S "$dir/munge/munge.socket" ] && break; sleep 0.1; done
    [ -S "$dir/munge/munge.socket" ] || die "munged did not start (see $dir/log/munged.log)"

    cat >"$dir/etc/slurm.conf" <<CONF
# Written by deploy/slurm/local-cluster.sh: one node, everything under $dir.
ClusterName=tracer-local
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
SchedulerType=sched/backfill
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=300
KillWait=5
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=local Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
    export SLURM_CONF="$dir/etc/slurm.conf"
    slurmctld -D -i -f "$SLURM_CONF" >>"$dir/log/slurmctld.out" 2>&1 &
    echo $! >"$dir/pids/slurmctld"
    for _ in $(seq 100); do scontrol ping >/dev/null 2>&1 && break; sleep 0.2; done
    scontrol ping 2>/dev/null | grep -q UP || die "slurmctld did not come up (see $dir/log/slurmctld.log)"
    slurmd -D -f "$SLURM_CONF" -N "$host" >>"$dir/log/slurmd.out" 2>&1 &
    echo $! >"$dir/pids/slurmd"
    local state=""
    for _ in $(seq 150); do
        state=$(sinfo -h -N -o '%T' 2>/dev/null | head -1)
        case "$state" in idle*|mixed*|allocated*) break ;; esac
        sleep 0.2
    done
    case "$state" in
        idle*|mixed*|allocated*) ;;
        *) die "node $host is '$state', not idle (see $dir/log/slurmd.log)" ;;
    esac
    echo "local-cluster: up: node $host ($cpus CPUs, $mem MB), slurmctld port $ctld_port, state in $dir" >&2
}

cmd=${1:-}
case "$cmd" in
    start)
        dir=${2:?usage: local-cluster.sh start DIR}
        dir=$(mkdir -p "$dir" && cd "$dir" && pwd)
        trap 'stop_cluster "$dir"' ERR
        start_cluster "$dir"
        trap - ERR
        echo "export SLURM_CONF=$dir/etc/slurm.conf"
        ;;
    stop)
        dir=${2:?usage: local-cluster.sh stop DIR}
        stop_cluster "$dir"
        ;;
    run)
        shift
        [ "${1:-}" = "--" ] && shift
        [ $# -gt 0 ] || die "usage: local-cluster.sh run -- CMD ..."
        dir=$(mktemp -d "${TMPDIR:-/tmp}/tracer-slurm.XXXXXX")
        trap 'stop_cluster "$dir"; [ -n "${KEEP_CLUSTER_DIR:-}" ] || rm -rf "$dir"' EXIT
        start_cluster "$dir"
        "$@"
        ;;
    *)
        echo "usage: local-cluster.sh run -- CMD ... | start DIR | stop DIR" >&2
        exit 2
        ;;
esac
