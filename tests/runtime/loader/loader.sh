#!/bin/sh
# loader.sh MPIEXEC TEST_LOADER MODE: run a loader test mode in a fresh directory (removed after).
# "resume" runs resume-a on 4 ranks, then resume-b on 2 ranks from the cursor it saved.
set -eu
mpiexec=$1; exe=$2; mode=$3
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/ingot-loader.XXXXXX")
trap 'rm -rf "$dir"' EXIT
run() { "$mpiexec" --oversubscribe -np "$1" "$exe" "$2" "$dir"; }
case "$mode" in
  resume) run 4 resume-a && run 2 resume-b ;;
  *) run 4 "$mode" ;;
esac
echo "loader $mode: ok"
