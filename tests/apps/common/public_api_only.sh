#!/bin/sh
# Apps stand on the public API (as zstd's programs/): the internal headers of the layers are out
# of the apps' include path, so a probe including one fails to compile with the apps' flags (the
# flags ctest passes here). What apps/ itself includes is checked by build.layers.includes.
# usage: public_api_only.sh CC "DIR;DIR;..." (the include directories apps get)
set -eu
cc=$1; dirs=$2
fail() { echo "FAIL: $*"; exit 1; }
T=$(mktemp -d "${TMPDIR:-/tmp}/ingot-apps-api.XXXXXX")
trap 'rm -rf "$T"' EXIT
flags=""
IFS=';'
for d in $dirs; do flags="$flags -I$d"; done
unset IFS
printf '#include <ingot/pack.h>\nint main(void) { return 0; }\n' > "$T/ok.c"
$cc $flags -fsyntax-only "$T/ok.c" || fail "a public header does not compile with the apps' flags"
for h in base/log.h shard/tar.h topology/topo.h runtime/loader_impl.h; do
    printf '#include "%s"\nint main(void) { return 0; }\n' "$h" > "$T/probe.c"
    if $cc $flags -fsyntax-only "$T/probe.c" 2> /dev/null; then fail "\"$h\" compiles in an app"; fi
done
echo "apps: public API only"
