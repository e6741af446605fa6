#!/bin/sh
# usage: static_tables.sh SOURCE_DIR BINARY LAYER_FOLDER...
# BINARY links libingot statically and prints every table it carries (ingot_config_print). Each
# INGOT_CONFIG_MODULE of the library's sources must be there, named: a table a static link drops
# is a table whose variables silently do nothing.
set -eu
src=$1 bin=$2; shift 2
[ $# -gt 0 ] || { echo "usage: $0 SOURCE_DIR BINARY LAYER_FOLDER..."; exit 2; }
fail() { echo "FAIL: $*"; exit 1; }
if ldd "$bin" 2>/dev/null | grep -q 'libingot\.so'; then fail "$bin links libingot dynamically"; fi
out=$("$bin") || fail "$bin exited $?"
want=$(cd "$src" && grep -rhoE '^INGOT_CONFIG_MODULE\([a-z_]+, "[a-z_]+"' \
         "$@" | sed 's/.*"\(.*\)"/\1/' | sort)
[ -n "$want" ] || fail "no INGOT_CONFIG_MODULE found under $src"
have=$(printf '%s\n' "$out" | sed -n 's/^# ---- //p' | sort)
missing=$(printf '%s\n' "$want" | grep -vxF "$have" || true)
[ -z "$missing" ] || fail "tables missing from a static link: $(echo $missing)"
extra=$(printf '%s\n' "$have" | grep -vxF "$want" || true)
[ -z "$extra" ] || fail "tables printed that no source defines: $(echo $extra)"
n=$(printf '%s\n' "$want" | wc -l)
vars=$(printf '%s\n' "$out" | grep -c '^INGOT_[A-Z0-9_]*=')
echo "static link: all $n tables ($vars variables): $(echo $want)"
