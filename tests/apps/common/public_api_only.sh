#!/bin/sh
# Apps stand on the public API (as zstd's programs/): the internal headers of the layers are out
# of the apps' include path, so a probe including one fails to compile with the apps' flags (the
# flags ctest passes here), and fails for that reason only: the compiler says the header was not
# found. Each probed header must exist in the source tree (a renamed header fails here rather than
# leaving a probe that passes for the wrong reason), and compiles once the source root is on the
# path. What apps/ itself includes is checked by build.layers.includes.
# usage: public_api_only.sh CC SRCDIR "DIR;DIR;..." (the include directories apps get)
set -eu
cc=$1; src=$2; dirs=$3
fail() { echo "FAIL: $*"; exit 1; }
T=$(mktemp -d "${TMPDIR:-/tmp}/ingot-apps-api.XXXXXX")
trap 'rm -rf "$T"' EXIT
flags=""
IFS=';'
for d in $dirs; do flags="$flags -I$d"; done
unset IFS
printf '#include <ingot/pack.h>\nint main(void) { return 0; }\n' > "$T/ok.c"
$cc $flags -fsyntax-only "$T/ok.c" || fail "a public header does not compile with the apps' flags"
# One internal header per layer (and the loader's own, the deepest).
probes="base/log.h topology/topo.h shard/tar.h transport/transport.h source/source.h
        runtime/loader/loader_impl.h"
for h in $probes; do
    [ -f "$src/$h" ] || fail "the probe names $h, which is not in the source tree $src"
    printf '#include "%s"\nint main(void) { return 0; }\n' "$h" > "$T/probe.c"
    # The control: with the source root on the path the header compiles (-D as the layers').
    $cc $flags -I"$src" -D_GNU_SOURCE -DINGOT_BUILDING_LIBRARY -fsyntax-only "$T/probe.c" \
        2> "$T/control.err" || { cat "$T/control.err"; fail "\"$h\" does not compile even from $src"; }
    if $cc $flags -fsyntax-only "$T/probe.c" 2> "$T/probe.err"; then
        fail "\"$h\" compiles in an app"
    fi
    # gcc: "base/log.h: No such file or directory"; clang: "'base/log.h' file not found".
    if ! grep -Fq -e "$h: No such file or directory" -e "'$h' file not found" "$T/probe.err"; then
        cat "$T/probe.err"
        fail "\"$h\" was refused for another reason than not being on the apps' include path"
    fi
done
echo "apps: public API only ($(echo $probes | wc -w) internal headers refused as not found)"
