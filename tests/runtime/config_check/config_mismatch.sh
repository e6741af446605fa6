#!/bin/sh
# Job-wide config checks across 4 ranks (MPMD launch gives one rank a different environment):
#  1. rank 3 has another INGOT_TIMEOUT: init fails on every rank; rank 0 names the variable,
#     its value and rank 3; rank 3 names its own value.
#  2. rank 2 has an invalid INGOT_SPIN: init fails on every rank (nobody hangs); rank 2 names it,
#     and only rank 2: the others' last error says rank 2 failed.
#  3. INGOT_CHECK_CONFIG=n: the same mismatch only warns, init succeeds.
# usage: config_mismatch.sh MPIEXEC TEST_INIT_EXE
set -eu
mpiexec=$1; exe=$2
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/ingot-mismatch.XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; for f in "$dir"/*; do echo "== $f"; cat "$f"; done; exit 1; }
export INGOT_LOG_FILE="$dir/log.%r"

"$mpiexec" --oversubscribe -np 3 "$exe" expect-config-error \
    : -np 1 env INGOT_TIMEOUT=10s "$exe" expect-config-error || fail "case 1 exit status"
grep -q "job-wide variable INGOT_TIMEOUT differs across ranks: rank 0 has '5m', rank(s) 3 (1 of 4)" \
    "$dir/log.0" || fail "case 1: rank 0 does not name the variable and rank 3"
grep -q "INGOT_TIMEOUT='10s' on rank 3, but rank 0 has '5m'" "$dir/log.3" \
    || fail "case 1: rank 3 does not name its value"
rm -f "$dir"/log.*

"$mpiexec" --oversubscribe -np 2 "$exe" expect-config-error \
    : -np 1 env INGOT_SPIN=10abc "$exe" expect-config-error \
    : -np 1 "$exe" expect-config-error 2>"$dir/stderr" || fail "case 2 exit status"
# Logging honours INGOT_LOG_FILE from the first line on, so rank 2's own log names the value.
grep -q ":2\] INGOT error .*INGOT_SPIN='10abc': not a duration" "$dir/log.2" \
    || fail "case 2: rank 2 message"
# The others know why (their last error names rank 2) without an error line of their own: the
# fault is said once, by the rank that found it.
grep -q "rank 0 last error: ingot_init: configuration failed on rank 2: " "$dir/stderr" ||
    fail "case 2: rank 0 does not know that rank 2 failed"
! grep -q "INGOT error" "$dir/log.0" || fail "case 2: rank 0 logged an error of its own"
rm -f "$dir"/log.* "$dir/stderr"

INGOT_CHECK_CONFIG=n "$mpiexec" --oversubscribe -x INGOT_CHECK_CONFIG -np 3 "$exe" ok \
    : -np 1 env INGOT_TIMEOUT=10s "$exe" ok || fail "case 3: init should succeed"
grep -q "differs across ranks" "$dir/log.0" || fail "case 3: no warning"
echo "config mismatch checks passed"
