#!/usr/bin/env bash
# Tests of the layering tests: each checker must fail, naming the place, on a deliberate
# violation. usage: catch_test.sh SRC_DIR WORK_DIR
set -euo pipefail
src=$1; work=$2/layers-catch
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
mkdir -p $t/base $t/topology $t/shard $t/runtime $t/apps $t/include/ingot
printf '#include "base/b.h"\n#include "runtime/context_impl.h"\n' >$t/base/a.c
printf '#include "base/log.h"\n#include "topology/topo.h"\n' >$t/shard/s.c
printf '#include "shard/tar.h"\n#include "topology/topo.h"\n#include "base/log.h"\n' >$t/runtime/ok.c
printf '#include <ingot/ingot.h>\n#include "base/log.h"\n' >$t/apps/app.c
printf '#include <stdint.h>\n#include "base/mem.h"\n' >$t/include/ingot/pub.h
printf '#include "base/q.h"\n' >$t/base/p.c
printf '#include "base/p.h"\n' >$t/base/q.c
expect_fail $work/includes.out \
  'base/a.c:2: #include "runtime/context_impl.h": runtime is above base' \
  'shard/s.c:2: #include "topology/topo.h": topology is beside shard' \
  'apps/app.c:2: #include "base/log.h": apps use the public API only' \
  'include/ingot/pub.h:2: #include "base/mem.h": a public header includes an internal header' \
  'include cycle between base modules: p -> q -> p' \
  '5 layering violation(s)' \
  -- python3 "$src/tests/layers/check_includes.py" $t
grep -q 'runtime/ok.c' $work/includes.out && fail "a downward include was reported"

# A library with globals that lack the prefix.
printf 'int leaked_counter;\nvoid helper_without_prefix(void) {}\nint ingot_fine(void) { return 0; }\n' \
  >$work/bad.c
cc -c -fPIC -o $work/bad.o $work/bad.c
ar rcs $work/libbad.a $work/bad.o
cc -shared -o $work/libbad.so $work/bad.o
expect_fail $work/symbols.out 'libbad.a: 2 global symbol(s)' 'leaked_counter' 'helper_without_prefix' \
  'libbad.so: 2 global symbol(s)' -- bash "$src/tests/layers/check_symbols.sh" $work/libbad.a $work/libbad.so
grep -q 'ingot_fine' $work/symbols.out && fail "a prefixed symbol was reported"
echo "both checkers fail on deliberate violations, naming them"
