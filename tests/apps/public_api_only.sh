#!/bin/sh
# Apps stand on the public API (as zstd's programs/): every `#include "..."` under apps/ names a
# file of apps/ itself, and the internal headers of the layers are out of the apps' include path,
# so a probe including one fails to compile with the apps' flags (the flags ctest passes here).
# usage: public_api_only.sh APPS_DIR CC "DIR;DIR;..." (the include directories apps get)
set -eu
apps=$1; cc=$2; dirs=$3
fail() { echo "FAIL: $*"; exit 1; }
find "$apps" -name '*.[ch]' | while read -r f; do
    sed -n 's/^#include "\(.*\)".*/\1/p' "$f" | while read -r inc; do
        [ -f "$apps/$inc" ] || fail "$f includes \"$inc\", not a file of apps/"
    done
done
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
