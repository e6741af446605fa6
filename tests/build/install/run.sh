#!/bin/sh
# Install the build into a throwaway prefix, then build and run consumers against it with
# find_package(ingot) (CMake) and with pkg-config (ingot.pc).
# usage: run.sh BUILD_DIR SOURCE_DIR
set -eu
build=$1; src=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ingot-consumer.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
test -f "$tmp/prefix/lib/cmake/ingot/ingotConfig.cmake"
test -f "$tmp/prefix/include/ingot/ingot.h"
test -f "$tmp/prefix/include/ingot/version.h"
test -x "$tmp/prefix/bin/ingot-info"
ls "$tmp"/prefix/lib/libingot.so.0* >/dev/null
# The umbrella header includes every public header (main.c then uses one symbol of each).
for h in "$tmp"/prefix/include/ingot/*.h; do
    n=${h##*/}
    [ "$n" = ingot.h ] || grep -q "^#include <ingot/$n>" "$tmp/prefix/include/ingot/ingot.h" ||
        { echo "ingot.h does not include <ingot/$n>" >&2; exit 1; }
done
cmake -S "$src" -B "$tmp/cmake-build" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/cmake-build" >/dev/null
LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/cmake-build/consumer" | grep -q "consumer: ingot"
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"
cc "$src/main.c" -o "$tmp/pc-consumer" $(pkg-config --cflags --libs ingot)
LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/pc-consumer" | grep -q "consumer: ingot"
echo "find_package(ingot) and pkg-config ingot consumers built and ran"
