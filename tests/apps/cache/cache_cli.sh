#!/bin/bash
# ingot-cache end to end on a folder one job filled (tests/source/disk/test_disk, 1 rank):
#   cache_cli.sh INGOT_CACHE TEST_DISK WORK_DIR CASE
# CASE:
#   list    the manifest's entries, bytes and hits, the rest, the folder's totals and ledger
#   verify  a good folder passes; a damaged entry is named with why (exit 1), --remove removes
#           it, and the shards left whole still match the manifest
#   evict   --to a size: the folder holds at most that much after, its ledger says so
#   clean   a dead writer's temporary removed, a live writer's kept
#   usage   bad command lines (exit 2, the message naming the command, option, value or folder)
#           and a missing folder (exit 1, named)
#   trust   a folder the tier would not trust (writable by its group, a symbolic link, a fan-out
#           folder writable by others; root: another user's) refused by every command, exit 1,
#           in the tier's words, nothing changed in it; with INGOT_DISK_CACHE_SHARED=y, a
#           set-group-ID folder of the user's group listed and cleaned
set -u
tool=$1; exe=$2; work=$3/cache-cli-$4; case_=$4
rm -rf "$work"; mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; cat "$work/out" 2> /dev/null; exit 1; }
# shellcheck source=tests/common/wait.sh
. "$(dirname "$0")/../../common/wait.sh" # locked, hold_lock
# shellcheck source=tests/common/folder.sh
. "$(dirname "$0")/../../common/folder.sh" # whose, as_nobody
cache=$work/cache m=$work/data/manifest.ingot
fill() {
    INGOT_DISK_CACHE_DIR=$cache INGOT_DISK_CACHE_PIECE=16KiB INGOT_DISK_CACHE_BYTES=64MiB \
        TEST_DISK_EPOCHS=2 INGOT_LOG_LEVEL=warn "$exe" "$work" 0 > "$work/fill" 2>&1 ||
        { cat "$work/fill"; fail "the job that fills the folder"; }
}
entries() { find "$cache" -name '*-14-*' ! -name '*.fill' | wc -l; }
# refuses DIR WHAT [SEEN]: every command refuses DIR (exit 1), saying WHAT is wrong with it and
# whose it is (SEEN: the path whose owner and mode, DIR by default), and leaves it as it was
refuses() {
    local line before; line="disk cache: folder '$1' is not this user's to trust: $2 ($(whose "${3:-$1}"))"
    before=$(find "$1/" -printf '%p %m %s\n' | sort)
    for cmd in list clean "evict --to 0" "verify --manifest $m"; do
        rc=0; "$tool" $cmd "$1" > "$work/out" 2>&1 || rc=$?
        [ $rc = 1 ] && grep -qF "$line" "$work/out" || fail "ingot-cache $cmd: exit $rc, or not '$line'"
    done
    [ "$(find "$1/" -printf '%p %m %s\n' | sort)" = "$before" ] || fail "'$1' changed"
}
case "$case_" in
list)
    fill
    "$tool" list "$cache" --manifest "$m" > "$work/out" || fail "list"
    cat "$work/out"
    n=$(entries)
    grep -Eq "^# folder $cache: $n entries, .* \(its ledger: .*\); 0 orphans, 0 fills in progress" "$work/out" ||
        fail "the folder's line"
    grep -Eq "^$m +$n +[0-9.]+ [KM]iB +[0-9.]+% +[1-9][0-9]*$" "$work/out" || fail "the manifest's row"
    grep -Eq "^\(other entries\) +0 " "$work/out" || fail "the rest's row"
    INGOT_DISK_CACHE_DIR=$cache "$tool" list > "$work/out" || fail "list of INGOT_DISK_CACHE_DIR"
    grep -Eq "^\(all entries\) +$n " "$work/out" || fail "the folder of INGOT_DISK_CACHE_DIR"
    ;;
verify)
    fill
    "$tool" verify "$cache" --manifest "$m" > "$work/out" || fail "a good folder fails"
    grep -q " 0 bad; \([0-9]*\) shards held whole, \1 of them match" "$work/out" || fail "good counts"
    victim=$(find "$cache" -name '*-14-*' ! -name '*.fill' | sort | head -1)
    printf 'X' | dd of="$victim" bs=1 seek=5000 conv=notrunc 2> /dev/null
    rc=0; "$tool" verify "$cache" --manifest "$m" > "$work/out" || rc=$?
    [ $rc = 1 ] || fail "a damaged entry: exit $rc, not 1"
    grep -q "bad entry $victim: block 0 (bytes 0-4096) fails its hash" "$work/out" || fail "not named"
    "$tool" verify "$cache" --manifest "$m" --remove > "$work/out"
    [ -e "$victim" ] && fail "--remove left it"
    "$tool" verify "$cache" --manifest "$m" > "$work/out" || fail "after --remove"
    ;;
evict)
    fill
    "$tool" evict "$cache" --to 1MiB > "$work/out" || fail "evict"
    grep -Eq "[1-9][0-9]* entries \(.*\) evicted, oldest first" "$work/out" || fail "evict's line"
    used=$(find "$cache" -name '*-14-*' -printf '%s\n' | awk '{s+=$1} END {print s+0}')
    [ "$used" -le 1048576 ] || fail "$used bytes left, over 1MiB"
    "$tool" list "$cache" > "$work/out"
    grep -q "(its ledger: $(awk -v b="$used" 'BEGIN{printf (b >= 1048576 ? "%.1f MiB" : "%.1f KiB"), b / (b >= 1048576 ? 1048576 : 1024)}'))" "$work/out" ||
        fail "the ledger does not say what is left ($used bytes)"
    ;;
clean)
    mkdir -p "$cache/ab"
    orphan=$cache/ab/ab00000000000001-14-0.fill live=$cache/ab/ab00000000000002-14-0.fill
    # writers holding a temporary's lock (one process each), both there and locked; then one dies
    hold_lock "$orphan" || fail "the writer never held $orphan"; dead=$holder
    hold_lock "$live" || fail "the writer never held $live"; held=$holder
    kill -9 "$dead"; wait "$dead" 2> /dev/null
    [ -e "$orphan" ] && ! locked "$orphan" || fail "$orphan is not an unlocked orphan"
    "$tool" list "$cache" > "$work/out" || fail "list"
    grep -q "1 orphans, 1 fills in progress" "$work/out" || fail "orphans not told from live fills"
    "$tool" clean "$cache" > "$work/out" || fail "clean"
    grep -q "1 orphans removed, 1 fills of live writers kept" "$work/out" || fail "clean's line"
    [ -e "$orphan" ] && fail "the orphan is still there"
    [ -e "$live" ] || fail "the live writer's temporary was removed"
    kill $held; wait $held 2> /dev/null
    ;;
usage)
    # ARGS|what the message must say (the culprit: the command, option, value or folder)
    for case_ in "|usage: ingot-cache COMMAND" "frobnicate|unknown command 'frobnicate'" \
                 "verify $work|verify takes one --manifest" "evict $work|evict needs --to SIZE" \
                 "evict $work --to 12parsecs|--to '12parsecs' is not a size" \
                 "list $work $work|one folder at most ('$work' is another)" \
                 "list --bogus|unknown or incomplete option '--bogus'"; do
        args=${case_%%|*} want=${case_#*|}
        rc=0; "$tool" $args > "$work/out" 2>&1 || rc=$?
        [ $rc = 2 ] || fail "'ingot-cache $args': exit $rc, not 2"
        grep -qF -- "$want" "$work/out" || fail "'ingot-cache $args': no '$want' ($(head -1 "$work/out"))"
    done
    rc=0; "$tool" list "$work/nowhere" > "$work/out" 2>&1 || rc=$?
    [ $rc = 1 ] && grep -q "folder '$work/nowhere' cannot be used: No such file" "$work/out" ||
        fail "a missing folder: exit $rc, or not named"
    # bad INGOT_DISK_* values: exit 1 naming the variable, the value and what is accepted
    for bad in "INGOT_DISK_CACHE_PIECE=3KiB:not a power of two from 4KiB to 64MiB" \
               "INGOT_DISK_CACHE_BYTES=12parsecs:not a size" \
               "INGOT_DISK_CACHE_POLICY=fifo:unknown value (accepted: one of clairvoyant|lru)" \
               "INGOT_DISK_PREFETCH=101:out of range"; do
        var=${bad%%:*} want=${bad#*:}
        rc=0; env "$var" "$tool" list "$work" > "$work/out" 2>&1 || rc=$?
        [ $rc = 1 ] && grep -qF "${var%%=*}='${var#*=}': $want" "$work/out" ||
            fail "$var: exit $rc, or not named ($(tail -1 "$work/out"))"
    done
    ;;
trust)
    fill
    chmod 0770 "$cache"
    refuses "$cache" "it is writable by its group"
    chmod 0700 "$cache" && ln -s "$cache" "$work/link"
    refuses "$work/link" "it is a symbolic link to '$cache'"
    fan=$(find "$cache" -mindepth 1 -type d | sort | head -1)
    chmod 0703 "$fan"
    refuses "$cache" "its fan-out folder '${fan##*/}' is writable by others" "$fan"
    chmod 0700 "$fan"
    "$tool" list "$cache" > "$work/out" || fail "the folder, set right, is not listed"
    if [ "$(id -u)" = 0 ] && id -u nobody > /dev/null 2>&1; then
        chown -R nobody "$cache"
        refuses "$cache" "it is owned by another user"
        # shared with a group of root's: listed and cleaned when asked for
        chown -R nobody:0 "$cache" && chmod 2770 "$cache"
        refuses "$cache" "it is owned by another user, writable by its group"
        INGOT_DISK_CACHE_SHARED=y "$tool" list "$cache" > "$work/out" || fail "a shared folder, not listed"
        grep -q "^# folder $cache: $(entries) entries" "$work/out" || fail "the shared folder's line"
        INGOT_DISK_CACHE_SHARED=y "$tool" clean "$cache" > "$work/out" || fail "a shared folder, not cleaned"
        chmod 2777 "$cache" # never writable by others, even shared
        INGOT_DISK_CACHE_SHARED=y refuses "$cache" "it is writable by others"
        # to nobody, its own folder, but one a group it is not in writes
        chmod 2770 "$cache"
        rc=0; as_nobody env INGOT_DISK_CACHE_SHARED=y "$tool" list "$cache" > "$work/out" 2>&1 || rc=$?
        [ $rc = 1 ] && grep -qF "folder '$cache' is not this user's to trust: it is writable by a group this user is not in" "$work/out" ||
            fail "nobody's tool on a folder of a group it is not in: exit $rc"
    fi
    ;;
*) fail "unknown case $case_" ;;
esac
echo "ingot-cache $case_: ok"
