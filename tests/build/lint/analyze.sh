#!/usr/bin/env bash
# tests/build/lint/analyze.sh BUILD_DIR: static analysis of the library's, the apps' and the Python
# binding's sources (python/, when the build has it) with clang-tidy-14 and the checks of
# .clang-tidy, over BUILD_DIR/compile_commands.json (tests/lint.cmake makes CMake write it). Zero findings pass; any finding fails and is printed with its path.
# Exit 77 when clang-tidy-14 is not installed. JOBS: parallel clang-tidy processes (default 2).
set -euo pipefail
src=$(cd "$(dirname "$0")/../../.." && pwd)
build=${1:?usage: $0 BUILD_DIR}
build=$(cd "$build" && pwd)
JOBS=${JOBS:-2}
CLANG_TIDY=${CLANG_TIDY:-clang-tidy-14}
RUN_CLANG_TIDY=${RUN_CLANG_TIDY:-run-clang-tidy-14}
FOLDERS='base|topology|shard|transport|client|source|collectives|runtime|apps|python' # the layers, the apps, the binding

for tool in "$CLANG_TIDY" "$RUN_CLANG_TIDY"; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "SKIP: $tool not found (Debian: apt-get install clang-tidy-14)"
    exit 77
  fi
done
db=$build/compile_commands.json
if [ ! -f "$db" ]; then
  echo "FAIL: $db is missing (configure with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)" >&2
  exit 1
fi
# The regex run-clang-tidy matches against the files of the database (absolute paths).
src_re=$(printf '%s' "$src" | sed 's/[][\.*^$+?(){}|/]/\\&/g')
files_re="^$src_re/($FOLDERS)/"
nfiles=$(grep -cE "\"file\": \"$src_re/($FOLDERS)/" "$db" || true)
if [ "$nfiles" -eq 0 ]; then
  echo "FAIL: no source of $src/{${FOLDERS//|/,}} in $db" >&2
  exit 1
fi

log=$(mktemp) out=$(mktemp)
trap 'rm -f "$log" "$out"' EXIT
t0=$SECONDS
rc=0
"$RUN_CLANG_TIDY" -clang-tidy-binary "$(command -v "$CLANG_TIDY")" -j "$JOBS" -p "$build" -quiet \
  "$files_re" >"$log" 2>&1 || rc=$?
# Keep the diagnostics (with their notes and source lines); drop the progress noise and colour.
sed -r 's/\x1b\[[0-9;]*m//g' "$log" \
  | grep -vE '^[^ ]*clang-tidy[^ ]* |^[0-9]+ warnings? (and [0-9]+ errors? )?generated\.$|^Suppressed [0-9]+ warnings|^Use -header-filter|^[0-9]+ warnings? treated as errors' \
  >"$out" || true
findings=$({ grep -E ': (warning|error):' "$out" || true; } | sort -u | wc -l)
if [ "$rc" -ne 0 ] || [ "$findings" -ne 0 ]; then
  cat "$out"
  echo "FAIL: clang-tidy: $findings finding(s) in $nfiles files ($((SECONDS - t0))s); fix them," \
       "or silence a false positive on its line with a comment saying why (see .clang-tidy)"
  exit 1
fi
echo "clang-tidy: no findings in $nfiles files ($((SECONDS - t0))s, -j $JOBS)"
