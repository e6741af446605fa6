#!/bin/sh
# ingot-info: summary sections, -c lists every variable with doc and scope, -t lists UCX
# transports, and a garbage INGOT_* value makes it fail with a message naming the variable.
set -eu
info=$1
out=$("$info")
echo "$out" | grep -q "CUDA paths compiled:" || { echo "no build options"; exit 1; }
echo "$out" | grep -q "UCX memory types:" || { echo "no UCX memory types"; exit 1; }
echo "$out" | grep -Eq "gradient all-reduce: +(mpi|nccl) on 1 rank" || { echo "no backend"; exit 1; }
echo "$out" | grep -Eq "why: +(mpi|nccl): " || { echo "no reason for the backend"; exit 1; }
cfg=$("$info" -c)
n_vars=$("$info" -d | grep -c '^INGOT_')
n_docs=$(echo "$cfg" | grep -c '^# scope:')
[ "$n_vars" -gt 5 ] && [ "$n_vars" = "$n_docs" ] || { echo "vars $n_vars, docs $n_docs"; exit 1; }
echo "$cfg" | grep -q '^INGOT_TIMEOUT=5m$' || { echo "effective TIMEOUT missing"; exit 1; }
INGOT_TIMEOUT=250ms "$info" -C | grep -q '^INGOT_TIMEOUT=250ms$' || { echo "env not applied"; exit 1; }
"$info" -t | grep -q ' tcp ' || { echo "no tcp transport listed"; exit 1; }
if err=$(INGOT_HUGEPAGES=maybe "$info" -C 2>&1); then echo "garbage accepted"; exit 1; fi
echo "$err" | grep -q "INGOT_HUGEPAGES='maybe': not a boolean" || { echo "bad message: $err"; exit 1; }
if "$info" -Z >/dev/null 2>&1; then echo "bad option accepted"; exit 1; fi
echo "ingot-info checks passed"
