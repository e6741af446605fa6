#!/usr/bin/env bash
# ABI check: every global symbol a library defines starts with ingot_ (a static archive's
# globals may collide with the application's; a shared library's exports are its ABI).
# usage: check_symbols.sh LIB...   (.a: nm -g; .so: nm -D)   exit 0 when clean, 1 naming each
set -euo pipefail
bad=0
for lib in "$@"; do
  case $lib in
    *.so*) opts=(-D --defined-only) ;;
    *)     opts=(-g --defined-only) ;;
  esac
  # Defined globals have an upper-case type letter (T, D, B, R, W, V, ...); U is undefined.
  syms=$(nm "${opts[@]}" "$lib" | awk 'NF == 3 && $2 ~ /^[A-TV-Z]$/ { print $3 }' \
         | grep -v '^ingot_' | sort -u || true)
  if [ -n "$syms" ]; then
    n=$(wc -l <<<"$syms")
    echo "$lib: $n global symbol(s) without the ingot_ prefix:"
    sed 's/^/  /' <<<"$syms"
    bad=1
  else
    echo "$lib: every global symbol starts with ingot_"
  fi
done
exit $bad
