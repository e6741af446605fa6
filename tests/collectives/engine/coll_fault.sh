#!/bin/sh
# A rank that stops or dies around an all-reduce ends the job in bounded time, never a hang.
# usage: coll_fault.sh MPIEXEC TEST_ALLREDUCE_EXE MODE BOUND_SECONDS PATTERN...
#   MODE: stop | stop-finalize | kill (test_allreduce's fault modes, 4 ranks, INGOT_TIMEOUT=5s)
#   The job must end (non-zero) within BOUND_SECONDS, and its output contain every PATTERN
#   (grep -E). The stopped rank is ended by the launcher with the rest.
set -u
mpiexec=$1; exe=$2; mode=$3; bound=$4; shift 4
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
out=$(mktemp "${TMPDIR:-/tmp}/ingot-collfault.XXXXXX")
trap 'rm -f "$out"' EXIT
export INGOT_TIMEOUT=5s
start=$(date +%s.%N)
# The outer timeout only catches a hang (a failure); the bound is checked below.
timeout -k 5 $((bound * 3)) "$mpiexec" --oversubscribe -np 4 "$exe" "$mode" >"$out" 2>&1
rc=$?
end=$(date +%s.%N)
took=$(echo "$end - $start" | bc)
fail() { echo "FAIL ($mode): $*"; cat "$out"; exit 1; }
[ "$rc" -ne 0 ] || fail "the job succeeded"
[ "$rc" -ne 124 ] || fail "the job hung: killed by the outer timeout after $((bound * 3)) s"
[ "$(echo "$took < $bound" | bc)" = 1 ] || fail "the job took $took s, over the bound $bound s"
for p in "$@"; do
  grep -Eq "$p" "$out" || fail "no line matches '$p'"
done
echo "$mode: the job ended in $took s (bound $bound s, exit $rc)"
