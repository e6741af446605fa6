#!/bin/bash
# A real single-node Slurm cluster on this machine, for any test (../shared/notes/slurm-local.md):
# Debian's slurm-wlm (22.05) and munge, started from scratch under WORK_DIR and stopped again.
#
# usage: cluster.sh WORK_DIR -- COMMAND [ARGS...]
#   Starts munged (as the munge user, with its own key, socket, pid, seed and log files under
#   WORK_DIR/munge), writes WORK_DIR/slurm.conf (one node: this host, CPUs=$(nproc), its memory
#   less a margin; one partition "debug", oversubscribed, the default), starts slurmctld and slurmd
#   in the foreground as children of this script, waits (30 s at most) until sinfo shows the node
#   idle, then runs COMMAND with
#     SLURM_CONF             the cluster's slurm.conf (every Slurm command reads it)
#     SLURM_CLUSTER_DIR      WORK_DIR
#     SLURM_CLUSTER_NODE     the node's name (the short host name)
#   When COMMAND ends (or this script is interrupted) the jobs left are cancelled, slurmd,
#   slurmctld and munged are stopped by their pids, WORK_DIR is removed, and COMMAND's status is
#   returned. The daemons' logs are printed when COMMAND or the start fails.
#   Exits 77 (skipped) when not root or when slurmctld, slurmd, munged or sbatch is missing.
#   Knobs: SLURM_CLUSTER_PORT (first port tried for slurmctld; slurmd takes the next; default
#   16817, moved up past ports in use), SLURM_CLUSTER_TIMEOUT (seconds COMMAND may run, 600),
#   SLURM_CLUSTER_TASK_PLUGIN (task/none; task/affinity makes srun --cpu-bind bind tasks).
#   Tests using it share the ctest RESOURCE_LOCK slurm.
set -u
work=${1:?usage: cluster.sh WORK_DIR -- COMMAND [ARGS...]}; shift
[ "${1:-}" = "--" ] && shift
[ $# -gt 0 ] || { echo "usage: cluster.sh WORK_DIR -- COMMAND [ARGS...]" >&2; exit 2; }
skip() { echo "skipped: $*"; exit 77; }
PATH=$PATH:/usr/sbin:/sbin # the daemons, for a PATH without sbin (a user's, some sudo setups)
[ "$(id -u)" = 0 ] || skip "a private Slurm cluster needs root (munged as munge, slurmd as root)"
for c in slurmctld slurmd munged munge sbatch srun sinfo scontrol squeue scancel timeout setpriv; do
    command -v $c > /dev/null || skip "$c is not installed (Debian: slurm-wlm munge util-linux)"
done
getent passwd munge > /dev/null || skip "no munge user (the munge package creates it)"
work=$(realpath -m "$work")
node=$(hostname -s)

d=$work # the path the daemons are given to WORK_DIR (below: a short link to it, if need be)
pids=() # started daemons, in start order: stopped in reverse
cleanup_done=
log_tails() {
    for f in "$work"/log/*.log "$work"/munge/munged.log; do
        [ -s "$f" ] || continue
        echo "--- last lines of $f"
        tail -n 40 "$f"
    done
}
stop_pid() { # stop_pid PID NAME: SIGTERM, then SIGKILL after 10 s; reaps it
    local pid=$1 name=$2 i
    kill -0 "$pid" 2> /dev/null || { wait "$pid" 2> /dev/null; return; }
    kill -TERM "$pid" 2> /dev/null
    for ((i = 0; i < 100; i++)); do
        # A child that exited stays a zombie until reaped: test its state, not kill -0.
        [ "$(awk '{print $3}' "/proc/$pid/stat" 2> /dev/null)" = Z ] && break
        [ -e "/proc/$pid" ] || break
        sleep 0.1
    done
    if [ -e "/proc/$pid" ] && [ "$(awk '{print $3}' "/proc/$pid/stat" 2> /dev/null)" != Z ]; then
        echo "cluster.sh: $name ($pid) ignored SIGTERM for 10 s: SIGKILL" >&2
        kill -KILL "$pid" 2> /dev/null
    fi
    wait "$pid" 2> /dev/null
}
descendants() { # descendants PID: the pids of PID's children, grandchildren, ...
    local c
    for c in $(pgrep -P "$1"); do
        echo "$c"
        descendants "$c"
    done
}
stop_tree() { # stop_tree PID: PID (our child) and all its descendants, which run in process
    # groups of their own (`timeout` makes one): SIGTERM, SIGKILL for those left after 5 s
    local tree p i
    tree=$(descendants "$1")
    kill -TERM $tree 2> /dev/null
    stop_pid "$1" COMMAND
    for ((i = 0; i < 50; i++)); do
        for p in $tree; do [ -e "/proc/$p" ] && break; done
        [ -e "/proc/${p:-0}" ] || return
        sleep 0.1
    done
    kill -KILL $tree 2> /dev/null
}
cleanup() {
    [ -n "$cleanup_done" ] && return
    cleanup_done=1
    # Interrupted: COMMAND and what it started (an sbatch --wait, a poll loop) end first.
    [ -n "${cmd_pid:-}" ] && stop_tree "$cmd_pid"
    if [ -n "${slurmd_pid:-}" ]; then
        # Jobs still known to this cluster are cancelled first: their slurmstepd processes are
        # not children of slurmd (they daemonise), so stopping slurmd alone would leave them.
        timeout 10 scancel --full --quiet --partition=debug 2> /dev/null
        local i
        for ((i = 0; i < 30; i++)); do
            [ -z "$(timeout 5 squeue -h -t running,completing,configuring -o %i 2> /dev/null)" ] &&
                break
            sleep 0.5
        done
    fi
    local k
    for ((k = ${#pids[@]} - 1; k >= 0; k--)); do
        stop_pid "${pids[$k]%%:*}" "${pids[$k]#*:}"
    done
    [ -n "${keep_logs:-}" ] && log_tails
    [ "$d" != "$work" ] && rm -f "$d"
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
fail() { echo "cluster.sh: $*" >&2; keep_logs=1; exit 1; }

rm -rf "$work"
mkdir -p "$work"/{state,spool,log,run,tmp,munge} || exit 1
chmod 755 "$work"
# Unix socket paths are limited to 107 bytes, and the daemons make sockets under WORK_DIR (munge's;
# slurmd's spool/NODE_JOB.STEP and spool/stepd.slurm.pmix.JOB.STEP): a long WORK_DIR is reached
# through a short symbolic link in /tmp instead (the files stay in WORK_DIR).
if [ $((${#work} + ${#node} + 40)) -gt 100 ]; then
    d=$(mktemp -u /tmp/ingot-slurm.XXXXXX) && ln -s "$work" "$d" || exit 1
fi

# --- munge: a private daemon with its own key, so nothing system-wide is read or changed.
# munged refuses insecure paths: its directory belongs to munge, is writable by munge alone and
# open to all (every user's clients reach the socket there).
chown munge:munge "$d/munge" && chmod 755 "$d/munge" || exit 1
msock=$d/munge/munge.socket
as_munge() { setpriv --reuid=munge --regid=munge --init-groups "$@"; }
if command -v mungekey > /dev/null; then
    as_munge mungekey --create --keyfile="$d/munge/munge.key" 2> "$d/munge/mungekey.err" ||
        fail "mungekey: $(cat "$d/munge/mungekey.err")"
else # munge < 0.5.14: the system key, which the package created
    [ -r /etc/munge/munge.key ] || skip "no mungekey and no /etc/munge/munge.key"
    install -o munge -g munge -m 600 /etc/munge/munge.key "$d/munge/munge.key" || exit 1
fi
# setpriv itself, not a shell function: it execs munged, so $! is munged's pid.
setpriv --reuid=munge --regid=munge --init-groups munged --foreground --socket="$msock" \
    --key-file="$d/munge/munge.key" --pid-file="$d/munge/munged.pid" \
    --log-file="$d/munge/munged.log" --seed-file="$d/munge/munged.seed" \
    > "$d/munge/munged.out" 2>&1 &
pids+=("$!:munged")
ok=
for ((i = 0; i < 50; i++)); do
    if [ -S "$msock" ] && timeout 5 munge -S "$msock" -n 2> /dev/null |
        timeout 5 unmunge -S "$msock" > /dev/null 2>&1; then
        ok=1; break
    fi
    kill -0 "${pids[0]%%:*}" 2> /dev/null || break
    sleep 0.2
done
[ -n "$ok" ] || fail "munged did not start: $(cat "$d/munge/munged.out")"

# --- slurm.conf
cpus=$(nproc)
mem_mib=$(awk '/^MemTotal:/ {print int($2 / 1024)}' /proc/meminfo)
# A margin: slurmd drains a node that reports less memory than configured.
margin=$((mem_mib / 10 > 512 ? mem_mib / 10 : 512))
mem_mib=$((mem_mib - margin > 256 ? mem_mib - margin : 256))
port_free() { ! ss -Htln "sport = :$1" 2> /dev/null | grep -q .; }
port=${SLURM_CLUSTER_PORT:-16817}
for ((i = 0; i < 50; i++)); do
    port_free $port && port_free $((port + 1)) && break
    port=$((port + 2))
done
cat > "$d/slurm.conf" << EOF
# Generated by tests/slurm/cluster.sh: a private single-node cluster under $work.
ClusterName=ingot-test
# The loopback address: nothing depends on how (or whether) the host name resolves.
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
# Our munged's socket; a short credential lifetime, which is also how long a requeued job waits
# before it may start again (default 120 s).
AuthInfo=socket=$msock,cred_expire=5
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool
SlurmctldPidFile=$d/run/slurmctld.pid
SlurmdPidFile=$d/run/slurmd.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
TmpFS=$d/tmp
# No cgroup plugins here: processes are tracked through /proc, tasks are not confined (nor bound,
# unless SLURM_CLUSTER_TASK_PLUGIN=task/affinity: then srun --cpu-bind binds them).
ProctrackType=proctrack/linuxproc
TaskPlugin=${SLURM_CLUSTER_TASK_PLUGIN:-task/none}
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
# Pending jobs (a requeued one past its begin time) are looked at every 2 s, not every 60 s.
SchedulerParameters=sched_interval=2,bf_interval=2
ReturnToService=2
# Quick ends: 5 s from SIGTERM to SIGKILL; finished jobs stay visible to scontrol for 300 s.
KillWait=5
MinJobAge=300
InactiveLimit=0
MailProg=/bin/true
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mib State=UNKNOWN
PartitionName=debug Nodes=$node OverSubscribe=YES Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$d/slurm.conf SLURM_CLUSTER_DIR=$work SLURM_CLUSTER_NODE=$node

# --- the daemons, in the foreground (-D) so that they are our children and their pids are ours.
slurmctld -D -c -f "$SLURM_CONF" > "$d/log/slurmctld.out" 2>&1 &
pids+=("$!:slurmctld")
slurmd -D -f "$SLURM_CONF" -N "$node" > "$d/log/slurmd.out" 2>&1 &
slurmd_pid=$!
pids+=("$slurmd_pid:slurmd")
state=
for ((i = 0; i < 60; i++)); do
    state=$(timeout 5 sinfo -h -N -n "$node" -o %t 2> /dev/null)
    [ "$state" = idle ] && break
    for p in "${pids[@]}"; do
        kill -0 "${p%%:*}" 2> /dev/null ||
            fail "${p#*:} exited while starting: $(tail -n 5 "$d/log/${p#*:}.out" 2> /dev/null)"
    done
    sleep 0.5
done
[ "$state" = idle ] || fail "node $node not idle after 30 s (state: '${state:-no answer}')"

# In the background, so that a SIGTERM to this script is handled at once (cleanup stops it too);
# stdin stays COMMAND's (`cluster.sh DIR -- bash` is an interactive shell on the cluster: timeout
# then keeps it in the terminal's foreground).
tflags=()
[ -t 0 ] && tflags=(--foreground)
timeout "${tflags[@]}" -k 10 "${SLURM_CLUSTER_TIMEOUT:-600}" "$@" <&0 &
cmd_pid=$!
wait $cmd_pid
rc=$?
cmd_pid=
[ $rc = 124 ] && echo "cluster.sh: COMMAND ran past ${SLURM_CLUSTER_TIMEOUT:-600} s" >&2
[ $rc = 0 ] || [ $rc = 77 ] || keep_logs=1
exit $rc
