#!/bin/bash
# An uneven launch across two hosts: network namespaces made here act as nodes (own hostname,
# network, IPC, /dev/shm and PIDs; ../shared/notes/two-nodes-on-one-machine.md), with 2 ranks on
# one and 1 on the other. Every rank must make the same collective calls whatever its node's
# rank count: the node-shared manifest once made 3 job-wide agreements on a node of several
# ranks and 1 on a node of one, and such a job hung. Here ingot-bench must run to the end,
# bounded by a timeout, and name both hosts.
# usage: uneven_nodes.sh MPIEXEC INGOT_BENCH WORK_DIR    (root and iproute2; else exit 77)
set -u
mpiexec=$1; bench=$2; work=$3/uneven-nodes
skip() { echo "skipped: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "network namespaces need root"
command -v ip > /dev/null && command -v unshare > /dev/null || skip "iproute2 or unshare missing"
tag=$$; br=br-ig$tag; n1=ig${tag}a; n2=ig${tag}b; net=10.231.7
cleanup() {
    ip netns del $n1 2> /dev/null; ip netns del $n2 2> /dev/null; ip link del $br 2> /dev/null
    rm -rf "$work"
}
trap cleanup EXIT
rm -rf "$work"; mkdir -p "$work"
ip link add $br type bridge 2> "$work/ip.err" || skip "cannot create a bridge: $(cat "$work/ip.err")"
ip addr add $net.1/24 dev $br && ip link set $br up || exit 1
k=10
for n in $n1 $n2; do
    k=$((k + 1))
    ip netns add $n && ip link add v$n type veth peer name eth0 netns $n &&
        ip link set v$n master $br up && ip netns exec $n ip addr add $net.$k/24 dev eth0 &&
        ip netns exec $n ip link set eth0 up && ip netns exec $n ip link set lo up || exit 1
done
cat > "$work/agent.sh" << 'AGENT'
#!/bin/sh
host=$1; shift
exec ip netns exec "$host" unshare --uts --ipc --mount --pid --fork --mount-proc \
  sh -c "hostname $host; mount -t tmpfs -o size=1g tmpfs /dev/shm; $*"
AGENT
chmod +x "$work/agent.sh"
printf '%s slots=2\n%s slots=1\n' $n1 $n2 > "$work/hosts"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
rc=0
timeout 120 "$mpiexec" --hostfile "$work/hosts" -np 3 --mca plm_rsh_agent "$work/agent.sh" \
    --mca oob_tcp_if_include $net.0/24 --mca btl_tcp_if_include $net.0/24 -x INGOT_TIMEOUT=20s \
    "$bench" --no-progress --generate "$work/data" --samples 960 --sample-size 16KiB \
    --batch 48 --epochs 1 > "$work/out" 2>&1 || rc=$?
cat "$work/out"
[ $rc = 0 ] || { echo "FAIL: ingot-bench across uneven nodes: exit $rc (124: it hung)"; exit 1; }
grep -q "0->$n1:host 1->$n1:host 2->$n2:host" "$work/out" ||
    { echo "FAIL: ranks not placed 2 + 1 on the two hosts"; exit 1; }
echo "uneven nodes: ok"
