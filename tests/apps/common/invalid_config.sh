#!/bin/sh
# An app must refuse an invalid INGOT_* value: exit status 1 and a message naming the variable
# (and the value), for INGOT_LOG_LEVEL=bogus and INGOT_TIMEOUT=abc. The same command line must
# succeed without them, so the failure is the variable's and nothing else's.
# usage: invalid_config.sh APP ARGS...   (@TMP@ in ARGS: a fresh directory holding src/a.txt)
set -eu
app=$1; shift
T=$(mktemp -d "${TMPDIR:-/tmp}/ingot-badcfg.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $(basename "$app"): $*"; exit 1; }
mkdir "$T/src" && echo hello > "$T/src/a.txt"
n=$#
while [ "$n" -gt 0 ]; do # replace @TMP@ in every argument, keeping their boundaries
    a=$1; shift; n=$((n - 1))
    case $a in *@TMP@*) a="${a%%@TMP@*}$T${a#*@TMP@}" ;; esac
    set -- "$@" "$a"
done
cd "$T"

"$app" "$@" > "$T/run.log" 2>&1 || { cat "$T/run.log"; fail "the command fails without a bad variable"; }
for bad in INGOT_LOG_LEVEL=bogus INGOT_TIMEOUT=abc; do
    var=${bad%%=*}; val=${bad#*=}
    rc=0
    env "$bad" "$app" "$@" > "$T/bad.out" 2> "$T/bad.err" || rc=$?
    [ "$rc" = 1 ] || { cat "$T/bad.err"; fail "$bad: exit status $rc, expected 1"; }
    grep -qF "$var='$val'" "$T/bad.err" || { cat "$T/bad.err"; fail "$bad: the message does not name $var"; }
done
echo "$(basename "$app"): invalid INGOT_* values refused"
