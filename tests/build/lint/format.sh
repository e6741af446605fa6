#!/usr/bin/env bash
# tests/build/lint/format.sh --check | --apply: the C sources against .clang-format (clang-format-14).
#
#   --check  exit 1 naming every file that formatting would change, each with a short diff
#            (ctest -L lint runs this); exit 77 when clang-format-14 is not installed
#   --apply  format those files in place
#
# Files: the git-tracked *.c and *.h under the source folders (all of them there without git),
# fixtures and fuzz corpora left out.
# The version is pinned: another clang-format release formats differently. CLANG_FORMAT overrides.
set -euo pipefail
cd "$(dirname "$0")/../../.."
mode=${1:-}
case "$mode" in
  --check|--apply) ;;
  *) echo "usage: $0 --check|--apply" >&2; exit 2 ;;
esac
CLANG_FORMAT=${CLANG_FORMAT:-clang-format-14}
DIFF_LINES=${DIFF_LINES:-20} # diff lines shown per file by --check

if ! command -v "$CLANG_FORMAT" >/dev/null 2>&1; then
  echo "SKIP: $CLANG_FORMAT not found (Debian: apt-get install clang-format-14)"
  exit 77
fi
FOLDERS=(base topology shard transport client source collectives runtime apps include tests python)
list_files() { # git's list; without git (a tarball, a checkout git deems unsafe): find
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -- "${FOLDERS[@]}"
  else
    find "${FOLDERS[@]}" -type f | sort
  fi | grep -E '\.[ch]$' | grep -Ev '^tests/(fixtures|fuzz/corpus)/'
}

files=()
while IFS= read -r f; do
  [ -f "$f" ] && files+=("$f")
done < <(list_files)
if [ ${#files[@]} -eq 0 ]; then
  echo "no files to check" >&2
  exit 1
fi

if [ "$mode" = --apply ]; then
  "$CLANG_FORMAT" -i --style=file "${files[@]}"
  echo "formatted ${#files[@]} files with $("$CLANG_FORMAT" --version)"
  exit 0
fi

bad=0 changed=0
for f in "${files[@]}"; do
  if ! out=$("$CLANG_FORMAT" --style=file "$f"); then
    echo "$f: $CLANG_FORMAT failed" >&2
    exit 1
  fi
  if d=$(diff -u --label "$f" --label "$f (formatted)" "$f" - <<<"$out"); then
    continue
  fi
  bad=$((bad + 1))
  n=$(tail -n +3 <<<"$d" | grep -c '^-' || true)
  changed=$((changed + n))
  echo "not formatted: $f ($n lines would change)"
  head -n "$DIFF_LINES" <<<"$d" | sed 's/^/    /'
  [ "$(wc -l <<<"$d")" -le "$DIFF_LINES" ] || echo "    ..."
done
if [ $bad -ne 0 ]; then
  echo "FAIL: $bad of ${#files[@]} files are not formatted ($changed lines);" \
       "run tests/build/lint/format.sh --apply"
  exit 1
fi
echo "all ${#files[@]} files formatted ($("$CLANG_FORMAT" --version))"
