#!/bin/sh
# topo_cli.sh INGOT_TOPO FIXTURES MPIRUN_SH MPIEXEC: ingot-topo's table, its JSON (parsed by
# Python and checked against the issue's "done when"), its bad input, and `mpirun -np 4
# ingot-topo` on this machine.
set -eu
topo=$1; fx=$2; mpirun_sh=$3; mpiexec=$4
py=${TEST_PYTHON:-/usr/bin/python3}
check=$(dirname "$0")/topo_json_check.py
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
# Plans for the fixtures' nodes: this machine's CUDA_VISIBLE_DEVICES names none of their GPUs.
fixture() { env -u CUDA_VISIBLE_DEVICES "$topo" "$@"; }

# The DGX-like node, 8 ranks: own GPU, a NIC behind the same switch, CPUs of the GPU's locality.
fixture --xml "$fx/dgx-h100.xml" --ranks-per-node 8 --json > "$tmp/dgx.json"
"$py" "$check" dgx "$tmp/dgx.json"

# CPU-only node, 4 ranks: 2 per NUMA node.
fixture --xml "$fx/cpu-2s.xml" --ranks-per-node 4 --json > "$tmp/cpu.json"
"$py" "$check" cpu "$tmp/cpu.json"

# The table: a header and one row per rank.
fixture --xml "$fx/gpu4-nic1.xml" --ranks-per-node 4 > "$tmp/table.txt"
grep -q "^rank  gpu  pci_busid" "$tmp/table.txt" || fail "no table header"
[ "$(grep -c '^[0-3] .*mlx5_0' "$tmp/table.txt")" = 4 ] || fail "table rows: $(cat "$tmp/table.txt")"

# Bad input: exit status and a message naming what was expected and found.
if fixture --xml /nonexistent.xml --ranks-per-node 1 2> "$tmp/err"; then fail "missing XML accepted"; fi
grep -qF "'/nonexistent.xml': cannot open" "$tmp/err" || fail "missing XML: $(cat "$tmp/err")"
if INGOT_GPUS=0,9 fixture --xml "$fx/dgx-h100.xml" --ranks-per-node 1 2> "$tmp/err"; then fail "GPU 9 accepted"; fi
grep -q "'9' names no GPU" "$tmp/err" || fail "GPU 9: $(cat "$tmp/err")"
if INGOT_GPU_SHARING=error fixture --xml "$fx/dgx-h100.xml" --ranks-per-node 9 2> "$tmp/err"; then
  fail "9 ranks on 8 GPUs accepted with INGOT_GPU_SHARING=error"
fi
grep -q "INGOT_GPU_SHARING=share" "$tmp/err" || fail "9 ranks: $(cat "$tmp/err")"
# Sharing is the default: 9 ranks on 8 GPUs plan, two of them on one GPU.
fixture --xml "$fx/dgx-h100.xml" --ranks-per-node 9 --json > "$tmp/dgx9.json"
"$py" -c 'import json,sys,collections; r=json.load(open(sys.argv[1]))["plan"]["ranks"]
c=collections.Counter(x["gpu"] for x in r); assert len(r)==9 and len(c)==8 and max(c.values())==2, c' "$tmp/dgx9.json" ||
  fail "9 ranks on 8 GPUs: $(cat "$tmp/dgx9.json")"
rc=0; "$topo" --ranks-per-node 0 2> "$tmp/err" || rc=$?
[ "$rc" = 2 ] || fail "--ranks-per-node 0 exited $rc, expected 2"
grep -qF -- "--ranks-per-node '0': expected an integer >= 1" "$tmp/err" ||
  fail "--ranks-per-node 0: $(cat "$tmp/err")"

# mpirun -np 4 on this machine: a sane CPU-only plan (or GPU plan where there are GPUs).
"$mpirun_sh" "$mpiexec" 4 "$topo" --json > "$tmp/mpi.json"
"$py" "$check" mpi "$tmp/mpi.json"

# A 1-GPU workstation (the DGX fixture with INGOT_GPUS=0), 4 launched ranks: by default they
# share its GPU with one warning for the node; INGOT_GPU_SHARING=error stops every rank at init.
one_gpu() { env -u CUDA_VISIBLE_DEVICES INGOT_TOPOLOGY_XML="$fx/dgx-h100.xml" INGOT_GPUS=0 "$@"; }
one_gpu "$mpirun_sh" "$mpiexec" 4 "$topo" --json > "$tmp/share.json" 2> "$tmp/share.err" ||
  fail "4 ranks on 1 GPU: $(cat "$tmp/share.err")"
[ "$(grep -c '4 local ranks share 1 GPU on dgx-h100-01 (up to 4 ranks per GPU)' "$tmp/share.err")" = 1 ] ||
  fail "sharing warning (once per node): $(cat "$tmp/share.err")"
"$py" -c 'import json,sys; r=json.load(open(sys.argv[1]))["plan"]["ranks"]
assert [x["gpu"] for x in r] == [0]*4, r' "$tmp/share.json" || fail "4 ranks on 1 GPU: $(cat "$tmp/share.json")"
if one_gpu INGOT_GPU_SHARING=error "$mpirun_sh" "$mpiexec" 4 "$topo" --json > /dev/null 2> "$tmp/err"; then
  fail "4 ranks on 1 GPU accepted with INGOT_GPU_SHARING=error"
fi
grep -q "4 local ranks but 1 usable GPU" "$tmp/err" || fail "sharing=error: $(cat "$tmp/err")"

# INGOT_BIND=cpu binds each launched rank; a launcher binding away from the plan is reported.
INGOT_BIND=cpu "$mpirun_sh" "$mpiexec" 2 "$topo" --json > "$tmp/bind.json"
grep -q '"flags": \["bound"\]\|"bound"\]' "$tmp/bind.json" || fail "INGOT_BIND=cpu: $(cat "$tmp/bind.json")"
if [ "$(nproc)" -ge 2 ]; then
  "$mpirun_sh" "$mpiexec" 1 --bind-to core "$topo" --cpuset 1 > "$tmp/conflict.txt" 2>&1
  grep -q "conflict: the launcher bound this process to CPUs 0, the plan gives it 1" "$tmp/conflict.txt" ||
    fail "launcher conflict not reported: $(cat "$tmp/conflict.txt")"
fi
echo "cli ok"
