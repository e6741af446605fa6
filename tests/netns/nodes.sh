#!/bin/bash
# Emulated nodes on this machine, for any test: network namespaces act as hosts (own hostname,
# network, IPC, /dev/shm and PIDs; ../shared/notes/two-nodes-on-one-machine.md) on one bridge,
# and Open MPI launches on them as real nodes through an rsh-style agent. UCX and Open MPI then
# pick shared memory within a node and tcp between nodes, by their own selection.
#
# usage: nodes.sh WORK_DIR SLOTS[,SLOTS...] -- COMMAND [ARGS...]
#   Makes one host per SLOTS entry (that many ranks each), runs COMMAND with
#     NODES_MPIRUN_ARGS  the mpirun options that launch on them (hostfile, agent, interfaces)
#     NODES_HOSTS        the host names, in order, space-separated
#   and removes every namespace, link and file it made when COMMAND ends (its status is
#   returned). Exits 77 (skipped) where namespaces cannot be made: not root, no iproute2 or
#   unshare, no bridge support. Tests using it share the ctest RESOURCE_LOCK netns.
set -u
work=$1; slots=$2; shift 2
[ "${1:-}" = "--" ] && shift
skip() { echo "skipped: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "network namespaces need root"
command -v ip > /dev/null && command -v unshare > /dev/null || skip "iproute2 or unshare missing"
tag=$$; br=br-ig$tag; net=10.231.$((tag % 200 + 20))
hosts=()
IFS=, read -r -a counts <<< "$slots"
for i in "${!counts[@]}"; do hosts+=("ig${tag}n$i"); done
cleanup() {
    for h in "${hosts[@]}"; do ip netns del "$h" 2> /dev/null; done
    ip link del "$br" 2> /dev/null
    rm -rf "$work"
}
trap cleanup EXIT
rm -rf "$work"; mkdir -p "$work"
ip link add "$br" type bridge 2> "$work/ip.err" || skip "cannot create a bridge: $(cat "$work/ip.err")"
ip addr add $net.1/24 dev "$br" && ip link set "$br" up || exit 1
k=10
: > "$work/hosts"
for i in "${!hosts[@]}"; do
    n=${hosts[$i]}; k=$((k + 1))
    ip netns add "$n" && ip link add "v$n" type veth peer name eth0 netns "$n" &&
        ip link set "v$n" master "$br" up && ip netns exec "$n" ip addr add $net.$k/24 dev eth0 &&
        ip netns exec "$n" ip link set eth0 up && ip netns exec "$n" ip link set lo up || exit 1
    echo "$n slots=${counts[$i]}" >> "$work/hosts"
done
cat > "$work/agent.sh" << 'AGENT'
#!/bin/sh
host=$1; shift
exec ip netns exec "$host" unshare --uts --ipc --mount --pid --fork --mount-proc \
  sh -c "hostname $host; mount -t tmpfs -o size=1g tmpfs /dev/shm; $*"
AGENT
chmod +x "$work/agent.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export NODES_HOSTS="${hosts[*]}"
export NODES_MPIRUN_ARGS="--hostfile $work/hosts --mca plm_rsh_agent $work/agent.sh --mca oob_tcp_if_include $net.0/24 --mca btl_tcp_if_include $net.0/24"
"$@"
