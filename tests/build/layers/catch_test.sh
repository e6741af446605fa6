#!/usr/bin/env bash
# Tests of the layering tests: each checker (includes, symbols, URLs) must fail, naming the place,
# on a deliberate violation; and the build itself refuses an upward include: a file compiled with a
# layer's include roots (as cmake/layers.cmake gives them) cannot find a header of a layer above
# (or beside) it.
# usage: catch_test.sh SRC_DIR WORK_DIR [BUILD_DIR CC]
set -euo pipefail
src=$1; work=$2/layers-catch; build=${3:-}; cc=${4:-cc}
rm -rf "$work"; mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
expect_fail() { # expect_fail OUTPUT_FILE PATTERN... -- CMD...: non-zero exit, every pattern shown
  local out=$1; shift; local pats=()
  while [ "$1" != -- ]; do pats+=("$1"); shift; done; shift
  if "$@" >"$out" 2>&1; then cat "$out"; fail "'$*' passed on a violation"; fi
  for p in "${pats[@]}"; do grep -qF -- "$p" "$out" || { cat "$out"; fail "no '$p' in the output"; }; done
}

# A tree with one violation of each kind (and one clean include of each kind, which must pass).
t=$work/tree
mkdir -p $t/base $t/topology $t/shard $t/transport $t/client $t/source $t/runtime $t/apps \
  $t/include/ingot
printf '#include "base/b.h"\n#include "runtime/context_impl.h"\n' >$t/base/a.c
printf '#include "topology/topo.h"\n#include "runtime/context_impl.h"\n#include "shard/tar.h"\n' \
  >$t/transport/w.c
printf '#include "transport/transport.h"\n#include "shard/codec.h"\n#include "runtime/loader_impl.h"\n' \
  >$t/source/c.c
printf '#include "base/log.h"\n#include "source/source.h"\n' >$t/shard/t.c
printf '#include "base/log.h"\n#include "topology/topo.h"\n' >$t/shard/s.c
printf '#include "base/uri.h"\n#include "source/source.h"\n#include "transport/transport.h"\n' \
  >$t/client/u.c
printf '#include "client/objstore.h"\n' >$t/shard/c.c
printf '#include "client/objstore.h"\n#include "source/source.h"\n' >$t/runtime/client_ok.c
printf '#include "shard/tar.h"\n#include "topology/topo.h"\n#include "base/log.h"\n' >$t/runtime/ok.c
printf '#include <ingot/ingot.h>\n#include "base/log.h"\n' >$t/apps/app.c
printf '#include <stdint.h>\n#include "base/mem.h"\n' >$t/include/ingot/pub.h
printf '#include "base/q.h"\n' >$t/base/p.c
printf '#include "base/p.h"\n' >$t/base/q.c
expect_fail $work/includes.out \
  'base/a.c:2: #include "runtime/context_impl.h": runtime is above base' \
  'transport/w.c:2: #include "runtime/context_impl.h": runtime is above transport' \
  'transport/w.c:3: #include "shard/tar.h": shard is beside transport' \
  'source/c.c:3: #include "runtime/loader_impl.h": runtime is above source' \
  'shard/t.c:2: #include "source/source.h": source is above shard' \
  'shard/s.c:2: #include "topology/topo.h": topology is beside shard' \
  'client/u.c:2: #include "source/source.h": source is above client' \
  'client/u.c:3: #include "transport/transport.h": transport is beside client' \
  'shard/c.c:1: #include "client/objstore.h": client is beside shard' \
  'apps/app.c:2: #include "base/log.h": apps use the public API only' \
  'include/ingot/pub.h:2: #include "base/mem.h": a public header includes an internal header' \
  'include cycle between base modules: p -> q -> p' \
  '12 layering violation(s)' \
  -- python3 "$src/tests/build/layers/check_includes.py" $t
grep -Eq 'runtime/(ok|client_ok).c' $work/includes.out && fail "a downward include was reported"
grep -Eq 'transport/w.c:1|source/c.c:[12]:|client/u.c:1' $work/includes.out &&
  fail "a downward include was reported"

# URLs told apart outside the one parser (base/location.c): named; the parser itself, comments,
# longer strings that hold a scheme, the tests and the apps are not.
u=$work/urls
mkdir -p $u/base $u/shard $u/runtime/store $u/client $u/tests/x $u/apps
printf 'static const char *s[] = {"s3://", "http://"};\n' >$u/base/location.c
printf '/* a path or "s3://BUCKET/KEY" */\nint is(const char *p) { return strncmp(p, "s3://", 5) == 0; }\n' \
  >$u/shard/fds.c
printf 'int f(const char *d)\n{\n    return !strncasecmp(d, "HTTP", 4);\n}\n' >$u/runtime/store/x.c
printf 'const char *m = "bad \\"s3://\\" URL";\nchar *e = strstr(u, "://");\n' >$u/client/o.c
printf 'const char *doc = "expected s3://BUCKET/KEY";\n' >$u/client/ok.c
printf 'int t = strncmp(p, "s3://", 5);\n' >$u/tests/x/t.c
printf 'int a = strncmp(p, "s3://", 5);\n' >$u/apps/a.c
expect_fail $work/urls.out \
  'shard/fds.c:2: strncmp(p, "s3://"' \
  'runtime/store/x.c:3: strncasecmp(d, "HTTP"' \
  'client/o.c:2: strstr(u, "://"' \
  '3 URL test(s) outside the parser' \
  -- python3 "$src/tests/build/layers/check_urls.py" $u
grep -Eq '^(base/location.c|shard/fds.c:1|client/ok.c|client/o.c:1|tests/|apps/)' $work/urls.out &&
  { cat $work/urls.out; fail "an allowed place was reported"; }

# A library with globals that lack the prefix.
printf 'int leaked_counter;\nvoid helper_without_prefix(void) {}\nint ingot_fine(void) { return 0; }\n' \
  >$work/bad.c
cc -c -fPIC -o $work/bad.o $work/bad.c
ar rcs $work/libbad.a $work/bad.o
cc -shared -o $work/libbad.so $work/bad.o
expect_fail $work/symbols.out 'libbad.a: 2 global symbol(s)' 'leaked_counter' 'helper_without_prefix' \
  'libbad.so: 2 global symbol(s)' -- bash "$src/tests/build/layers/check_symbols.sh" $work/libbad.a $work/libbad.so
grep -q 'ingot_fine' $work/symbols.out && fail "a prefixed symbol was reported"
# The build: compile a probe in a layer with that layer's include roots (its own and those of the
# layers below it); an include of a layer above (or beside) it must not resolve.
if [ -n "$build" ]; then
  probe() { # probe LAYER "ROOTS" HEADER: 0 when HEADER resolves from LAYER
    local flags=(-I"$src/include" -I"$build/include")
    for r in $2; do flags+=(-I"$build/layers/$r"); done
    printf '#include "%s"\n' "$3" > "$work/probe.c"
    "$cc" -E "${flags[@]}" "$work/probe.c" -o /dev/null 2> "$work/probe.err"
  }
  roots_base="base" roots_transport="base topology transport" roots_client="base client"
  roots_shard="base shard" roots_source="base topology shard transport client source"
  for bad in "base topology/topo.h" "base transport/transport.h" "base runtime/context_impl.h" \
             "transport runtime/context_impl.h" "transport source/source.h" \
             "transport shard/tar.h" "source runtime/loader_impl.h" "source collectives/coll.h" \
             "base client/objstore.h" "shard client/objstore.h" "transport client/objstore.h" \
             "client source/source.h" "client transport/transport.h" "client shard/manifest.h" \
             "client runtime/store/store.h"; do
    read -r layer header <<< "$bad"
    roots_var=roots_$layer
    if probe "$layer" "${!roots_var}" "$header"; then
      fail "$layer/ compiles #include \"$header\": the build does not refuse it"
    fi
    grep -q "No such file" "$work/probe.err" || { cat "$work/probe.err"; fail "$layer -> $header: not refused as missing"; }
  done
  probe transport "$roots_transport" "base/log.h" || fail "transport cannot include base/log.h"
  probe source "$roots_source" "shard/tar.h" ||
    { cat "$work/probe.err"; fail "source cannot include shard/tar.h"; }
  probe source "$roots_source" "client/objstore.h" ||
    { cat "$work/probe.err"; fail "source cannot include client/objstore.h"; }
  probe client "$roots_client" "base/uri.h" ||
    { cat "$work/probe.err"; fail "client cannot include base/uri.h"; }
  echo "the build refuses upward and sideways includes from base, shard, transport, client and source"
fi
echo "the three checkers fail on deliberate violations, naming them"
