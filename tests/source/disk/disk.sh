#!/bin/bash
# The node's disk tier through the loader (tests/source/disk/test_disk.c), job after job on one
# folder, on 1 to 4 ranks:
#   disk.sh MPIEXEC TEST_DISK WORK_DIR CASE [ARG]
# CASE:
#   jobs TLS     job 1 (4 ranks) fills, jobs 2 (4 ranks), 3 (2 ranks) and 4 (1 rank) read nothing
#                from storage; UCX_TLS=TLS (default, tcp,self or posix,cma,self: the pushes)
#   nodes        two emulated nodes (tests/netns): 2 x 2 fills, then 2 x 1 and 2 x 2 over
#                tcp,self read nothing from storage (pieces read from their home node)
#   parts        INGOT_DISK_CACHE_FILL: a cold epoch of pieces read whole, then one of pieces
#                assembled from the misses' own bytes: pieces assembled, entries of format
#                version 2, no temporary left; three epochs complete them, and the next jobs (either
#                mode) read nothing from storage; sealed again under another layout (as another
#                manifest would find them), they are misses in either mode, never bad, every
#                sample right
#   small        a budget of half the dataset, 4 epochs: evictions, no failure, usage in budget
#   enospc       every write of an entry after the second fails with ENOSPC: said once, the job
#                goes on from storage, the budget in effect shrinks (to nothing, the disk taking
#                back what each eviction frees): a few failed fills, not one per miss
#   room         (root: a 60 MiB tmpfs) a 1 GiB budget on it, two jobs in a row over a dataset
#                twice its size: the budget in effect is the filesystem's room, said once; the
#                second job fails at most 10 fills, and hits no less than two jobs with
#                INGOT_DISK_CACHE_BYTES=60MiB (the filesystem's size); then another file takes
#                the rest of it: the next job finds the folder full, serves what it holds; and
#                with the folder emptied and the disk full, a job tries no fill at all
#   enospc_mid   the 20th write of an entry fails with ENOSPC: said once, the budget in effect
#                shrinks to what the folder holds, later fills evict to stay within it
#   edquot       the same with EDQUOT (a quota reached)
#   erofs        every write of an entry from the 20th fails with EROFS (a folder remounted
#                read-only): fills off, said once; the entries there go on serving reads
#   erofs_mount  (root) the same with a real read-only bind remount of the folder mid-job; then,
#                writable again, a next job
#   readonly     a read-only folder (a read-only bind mount, or the fault site where mounts are
#                not allowed): said once naming it, storage read as without the tier
#   nfs          a folder on NFS (fault site of statfs): said once naming it, as readonly
#   missing      a folder that cannot be made (its parent is a file): said once naming it, as
#                readonly; a missing folder that can be made is made (every other case starts
#                without one)
#   corrupt      entries truncated, damaged, deleted and of an older format behind the tier's
#                back: caught, said once, read again from storage; the next job reads none
#   kill         a rank killed -9 mid-fill, and temporaries of a dead writer and of a live one:
#                the next job serves nothing corrupt, removes the orphan, keeps the live one;
#                then every rank of a job killed -9 mid-fill: the next job serves nothing corrupt
#                and leaves no temporary
#   kill_keeper  the keeper stopped at its 5th entry, before its rename (fault site), then killed
#                -9: the job ends; its temporaries, locked while it was stopped, unlocked once it
#                is dead; the next job's scan removes them, finds its published entries to serve,
#                no lock waited on, nothing bad, no temporary left
#   scan_mid_fill  a job's start-up scan while another job's written fills wait on the ledger (its
#                lock held by the script, that job's keeper stopped meanwhile): each entry counted
#                once
#   two_jobs     two jobs filling the same pieces at once (met at a gate, their reads overlapping):
#                both right, each entry published once, no temporary left, a third job reads
#                nothing from storage
#   budgets      ranks of one node giving different budgets: refused, naming them
#   budget_piece a budget smaller than one entry (a piece and its header): refused at create,
#                naming INGOT_DISK_CACHE_BYTES, its value and the piece's size; one of exactly
#                that size is taken
#   modes        a folder made under umask 000: its missing parent, itself and its fan-out
#                folders 0700, its entries and ledger 0600; a next job takes it
#   folder_group, folder_world, folder_link_own, folder_link_else, folder_fanout, folder_foreign:
#                a folder that is not the user's to trust (writable by its group, by others; a
#                symbolic link to a folder of the user's, to one elsewhere; a fan-out folder
#                writable by its group, a symbolic link, another user's; root: another user's
#                folder, both ways, as setpriv runs the job as nobody, and the issue's own case:
#                nobody made the default-named folder 0777 under a sticky world-writable parent):
#                one warning in the whole job, naming the folder, what is wrong, its owner and
#                mode; every epoch read from storage alone, nothing admitted, nothing written
#                into the folder (nor where a link points)
#   shared       (root) INGOT_DISK_CACHE_SHARED: another user's set-group-ID folder refused
#                without it; with it, filled under umask 022 with folders 2770 and entries 0660 of
#                its group, then read whole by nobody (in that group) without storage; still
#                refused writable by others, as a symbolic link, and to a user not in its group
#   busy_keeper  the keeper's lock held 3 s by one admission (fault site disk_hold), past the
#                peers' INGOT_PEER_TIMEOUT of 2 s: the progress thread answers its peers "busy"
#                rather than waiting, no rank gives the keeper up, nothing fails; and the same
#                with the peer cache on under INGOT_PEER_FAILURE=abort: the job ends well
# Every job checks every byte and label it delivers (test_disk.c); after every job that ran alone
# and ended, each folder's ledger counts exactly its entries' bytes (ledger_exact); fault cases
# run with INGOT_TIMEOUT=5s.
set -u
mpiexec=$1; exe=$2; case_=$4; arg=${5:-}
work=$3/disk-$case_${arg:+-$arg}
work=${work//,/_}
if [ "$case_" = nodes ] && [ -z "${NODES_HOSTS:-}" ]; then
    exec "$(dirname "$0")/../../netns/nodes.sh" "$work" 2,2 -- "$0" "$@"
fi
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
# shellcheck source=tests/common/wait.sh
. "$(dirname "$0")/../../common/wait.sh" # locked, hold_lock
# shellcheck source=tests/common/folder.sh
. "$(dirname "$0")/../../common/folder.sh" # whose, need_nobody, as_nobody
mkdir -p "$work"
rm -rf "$work/cache"
[ "$case_" = nodes ] || [ -n "${DISK_KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
cache=$work/cache
fail() { echo "FAIL: $*"; exit 1; }
export INGOT_DISK_CACHE_DIR=$cache INGOT_DISK_CACHE_PIECE=16KiB INGOT_DISK_CACHE_BYTES=64MiB
[ "$case_" = nodes ] && INGOT_DISK_CACHE_DIR=$cache-%h # a folder per emulated node
export INGOT_TIMEOUT=${INGOT_TIMEOUT:-30s} INGOT_LOG_LEVEL=warn
launch=(--oversubscribe)
[ "$case_" = nodes ] && launch=($NODES_MPIRUN_ARGS)
# job NAME NP EXPECT [mpirun args...]: run test_disk (as the user "${as[@]}" makes it), its
# output in $work/NAME.out
as=()
job() {
    local name=$1 np=$2 expect=$3; shift 3
    local rc=0
    TEST_DISK_EXPECT=$expect "${as[@]}" timeout 120 "$mpiexec" "${launch[@]}" -np "$np" \
        -x TEST_DISK_EXPECT -x INGOT_DISK_CACHE_DIR -x INGOT_DISK_CACHE_PIECE \
        -x INGOT_DISK_CACHE_BYTES -x INGOT_TIMEOUT -x INGOT_LOG_LEVEL "$@" \
        "$exe" "$work" 0 > "$work/$name.out" 2>&1 || rc=$?
    sed "s/^/[$name] /" "$work/$name.out" | grep -v "^\[$name\] rank [0-9]* pid" | tail -12
    return $rc
}
# ledger_exact WHAT [FOLDER...] (default $cache): each folder's ledger ("INGOTDL1", then its usage
# as a host-endian u64: source/disk/folder.c) counts exactly the bytes of its published entries
# (the files of its fan-out folders, temporaries aside), as a start-up scan would count them. An
# empty ledger is a new one, 0 bytes to the tier (a folder made on a full disk has one). Only
# where no job runs on the folder: a job between a rename and its count, or killed there, is
# behind until the next scan.
ledger() { od -An -t u8 -j 8 -N 8 "$1/ledger" | tr -d ' '; }
held_all() {
    find "$1" -mindepth 2 -maxdepth 2 -type f -path "$1/??/*" ! -name '*.fill' ! -name '.*' \
        -printf '%s\n' | awk '{s += $1} END {print s + 0}'
}
ledger_exact() {
    local what=$1 f; shift
    [ $# -gt 0 ] || set -- "$cache"
    for f in "$@"; do
        [ -f "$f/ledger" ] || fail "$what: $f has no ledger"
        if [ ! -s "$f/ledger" ]; then
            [ "$(held_all "$f")" = 0 ] || fail "$what: the ledger of $f is empty, its entries hold $(held_all "$f")"
            continue
        fi
        [ "$(head -c 8 "$f/ledger")" = INGOTDL1 ] || fail "$what: the ledger of $f is damaged"
        [ "$(ledger "$f")" = "$(held_all "$f")" ] ||
            fail "$what: the ledger of $f says $(ledger "$f") bytes, its entries hold $(held_all "$f")"
    done
}
# the folders a job's tier writes in: none where it takes no file (cases readonly, nfs, missing)
tier_folders() {
    case "$case_" in
    readonly | nfs | missing) ;;
    nodes) ls -d "$cache"-* ;;
    *) echo "$INGOT_DISK_CACHE_DIR" ;; # the job's (a case may give another)
    esac
}
# ok JOB NP EXPECT [mpirun args...]: job, which must succeed; then (no other job running) the
# ledger of every folder it used is exact (none when it refused its folder as not the user's)
ok() {
    job "$@" || fail "job $1 ($2 ranks, expect $3): exit $?"
    grep -q "is not this user's to trust" "$work/$1.out" && return
    local folders; mapfile -t folders < <(tier_folders)
    [ ${#folders[@]} = 0 ] || ledger_exact "$1" "${folders[@]}"
}
counter() { grep -o "disk counters.* $2 [0-9]*" "$work/$1.out" | awk '{print $NF}'; }
# said JOB PATTERN [MIN [MAX]]: the job's output has the line MIN to MAX times (default 1)
said() {
    local n; n=$(grep -c "$2" "$work/$1.out")
    [ "$n" -ge "${3:-1}" ] && [ "$n" -le "${4:-${3:-1}}" ] || fail "$1: '$2' said $n times"
}
entries() { find "$cache" -name '*-14-*' ! -name '*.fill' 2> /dev/null | wc -l; }
held() { find "$cache" -type f -name '*-14-*' ! -name '*.fill' -printf '%s\n' | awk '{s+=$1} END {print s+0}'; }
skip() { echo "skipped: $*"; exit 77; }
# locked_fills: how many temporaries a live writer holds locked
locked_fills() {
    local f n=0
    while read -r f; do locked "$f" && n=$((n + 1)); done < <(find "$cache" -name '*.fill')
    echo $n
}
# stopped PID: every thread of process PID is stopped (one in a system call stops when the call
# returns)
stopped() {
    [ -d "/proc/$1" ] && ! sed 's/.*) //' /proc/"$1"/task/*/stat 2> /dev/null |
        cut -d' ' -f1 | grep -qv '^T$'
}
# jobs_as_nobody [GROUPS]: the next jobs run as user nobody (group nogroup, supplementary GROUPS
# or none); jobs_as_root: as root again
jobs_as_nobody() {
    as=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
    [ -z "${1:-}" ] || as[3]=--groups=$1
}
jobs_as_root() { as=(); }
# refused JOB FOLDER WHAT [SEEN]: the job's one warning (its only one) that FOLDER is not the
# user's to trust, saying WHAT is wrong and whose it is (SEEN: the path whose owner and mode,
# the folder by default); every epoch read from storage alone and nothing admitted
refused() {
    local line; line="folder '$2' is not this user's to trust: $3 ($(whose "${4:-$2}"))"
    [ "$(grep -cF "$line" "$work/$1.out")" = 1 ] || fail "$1: not said once: $line"
    [ "$(grep -c "INGOT warn .*disk tier" "$work/$1.out")" = 1 ] ||
        fail "$1: $(grep -c "INGOT warn .*disk tier" "$work/$1.out") warnings of the disk tier, not one"
    [ "$(grep -c "^disk epoch [0-9]* storage [1-9][0-9]* disk 0 " "$work/$1.out")" = 3 ] ||
        fail "$1: not every epoch read from storage alone: $(grep "^disk epoch" "$work/$1.out")"
    [ "$(counter "$1" admitted)" = 0 ] || fail "$1: $(counter "$1" admitted) pieces admitted"
}
# untouched DIR [N]: DIR holds N files and folders (0 by default): the tier wrote nothing there
untouched() {
    local n; n=$(find "$1" -mindepth 1 | wc -l)
    [ "$n" = "${2:-0}" ] || fail "'$1' holds $n files and folders, not ${2:-0}: $(find "$1" -mindepth 1 | head -5)"
}
# effect JOB: the keeper's budget in effect, from the report
effect() { grep -o "bytes per node, in effect [0-9]*" "$work/$1.out" | awk '{print $NF}'; }
# hits JOB: the share of the job's record bytes read from the disk tier
hits() { awk '/^disk epoch/ {d += $7; t += $5 + $7 + $9 + $11} END {printf "%.4f\n", t ? d / t : 0}' "$work/$1.out"; }
# after_failed_writes JOB FAILED_MAX: the failed fills bounded, every entry admitted and not
# evicted still there (the counters are read before the fills still queued are written, at
# destroy: those may add a few), no temporary left, the folder within the budget in effect, and
# a next job finds no entry bad
after_failed_writes() {
    local admitted evicted
    admitted=$(counter "$1" admitted) evicted=$(counter "$1" evictions)
    [ "$(counter "$1" failed)" -ge 1 ] && [ "$(counter "$1" failed)" -le "$2" ] ||
        fail "$1: $(counter "$1" failed) failed fills, not 1 to $2"
    [ "$(entries)" -ge $((admitted - evicted)) ] ||
        fail "$1: $(entries) entries left, fewer than $admitted admitted less $evicted evicted"
    [ -z "$(find "$cache" -name '*.fill')" ] || fail "$1: temporaries left"
    [ "$(held)" -le "$(effect "$1")" ] || fail "$1: the folder holds $(held) bytes, over its budget in effect $(effect "$1")"
    ok "$1-after" 4 any
    grep -q "bad 0 failed 0" "$work/$1-after.out" || fail "the job after $1 found bad entries or failed fills"
}

case "$case_" in
jobs)
    tls=(); [ "$arg" = default ] || tls=(-x "UCX_TLS=$arg")
    ok fill 4 cold "${tls[@]}"
    ok again 4 warm "${tls[@]}"
    ok two 2 warm "${tls[@]}"
    ok one 1 warm
    ;;
nodes)
    ok fill 4 cold
    [ "$(tier_folders | wc -l)" = 2 ] || fail "not a folder per node: $(tier_folders)"
    [ "$(counter fill remote)" -gt 0 ] || fail "no piece read from its home node"
    ok half 2 warm -npernode 1
    ok again 4 warm -x UCX_TLS=tcp,self
    [ "$(counter again remote)" -gt 0 ] || fail "no piece read from its home node over tcp"
    ;;
parts)
    # the same cold epoch with pieces read whole, then assembled from the misses' own bytes
    # (prefetch off: the prefetcher reads whole pieces, in either mode)
    export INGOT_DISK_PREFETCH=0 TEST_DISK_EPOCHS=1
    opts=(-x INGOT_DISK_PREFETCH -x INGOT_DISK_CACHE_FILL -x TEST_DISK_EPOCHS)
    INGOT_DISK_CACHE_FILL=whole ok whole 4 cold "${opts[@]}"
    grep -q "fill whole," "$work/whole.out" || fail "whole: not the mode asked for"
    rm -rf "$cache"
    INGOT_DISK_CACHE_FILL=parts ok parts 4 cold "${opts[@]}"
    grep -q "fill parts," "$work/parts.out" || fail "parts: not the mode asked for"
    w=$(counter whole below) p=$(counter parts below)
    # (which reads less below is measured, tests/perf/disk_perf.sh: here samples of a few KiB in
    # 16 KiB pieces, runs of neighbours reading their tar headers too, both vary by +-10%)
    echo "bytes read below in a cold epoch: $w with whole pieces, $p assembled"
    grep -q "assembled [1-9]" "$work/parts.out" || fail "parts: no piece assembled"
    first=$(find "$cache" -name '*-14-*' ! -name '*.fill' | head -1)
    [ -n "$first" ] && [ "$(od -An -t u4 -j 8 -N 4 "$first" | tr -d ' ')" = 2 ] ||
        fail "parts: entry '$first' is not an assembled one (format version 2)"
    [ -z "$(find "$cache" -name '*.fill')" ] || fail "parts: temporaries left (the assembly file)"
    # three epochs complete what one left unfinished; the next jobs read nothing from storage,
    # in either mode (an entry's format is the reader's to take, whichever mode wrote it)
    export TEST_DISK_EPOCHS=3
    INGOT_DISK_CACHE_FILL=parts ok complete 4 any "${opts[@]}"
    INGOT_DISK_CACHE_FILL=parts ok again 4 warm "${opts[@]}"
    INGOT_DISK_CACHE_FILL=whole ok whole_again 2 warm "${opts[@]}"
    # the same entries as a manifest laying the pieces out otherwise finds them (sealed again
    # under another layout): misses, in either mode, never their zeros served nor an entry
    # taken for bad; every sample right (test_disk checks each byte)
    n=$("$exe" relayout "$cache" | awk '{print $2}')
    [ "${n:-0}" -gt 0 ] || fail "relayout: no assembled entry to seal again"
    for fill in whole parts; do
        INGOT_DISK_CACHE_FILL=$fill ok "other_$fill" 2 any "${opts[@]}"
        grep -q "^disk epoch 0 storage [1-9]" "$work/other_$fill.out" ||
            fail "other_$fill: entries of another layout served, not missed"
        [ "$(counter "other_$fill" bad)" = 0 ] || fail "other_$fill: entries of another layout taken for bad"
    done
    ;;
small)
    export INGOT_DISK_CACHE_BYTES=1536KiB TEST_DISK_EPOCHS=4 # about half of the 3 MiB of pieces
    ok small 4 any -x TEST_DISK_EPOCHS
    [ "$(counter small evictions)" -gt 0 ] || fail "no eviction under half a budget"
    [ "$(counter small failed)" = 0 ] || fail "failed fills"
    used=$(find "$cache" -type f -name '*-14-*' -printf '%s\n' | awk '{s+=$1} END {print s+0}')
    [ "$used" -le $((1536 * 1024)) ] || fail "the folder holds $used bytes, over its budget"
    ;;
enospc)
    ok full 4 any -x INGOT_FAULT=disk_write:3+:ENOSPC
    said full "a piece was not cached.*the disk is full"
    [ "$(counter full admitted)" = 2 ] && [ "$(counter full failed)" -gt 0 ] ||
        fail "expected 2 pieces admitted, then failed fills"
    # the disk refuses every write: each eviction for a newcomer is taken back by a refusal,
    # until the budget in effect holds nothing (the pieces in flight, at most DISK_WRITERS, and
    # the two admitted ones give a few failed fills, not one per miss)
    after_failed_writes full 10
    [ "$(effect full)" -lt $((64 << 20)) ] || fail "the budget in effect did not shrink"
    ;;
room)
    [ "$(id -u)" = 0 ] || skip "mounting a 60 MiB tmpfs needs root"
    fs=$work/fs
    mkdir -p "$fs"
    mount -t tmpfs -o size=60m tmpfs "$fs" 2> "$work/mount.err" || skip "no tmpfs here: $(cat "$work/mount.err")"
    trap 'umount "$fs"; rm -rf "$work"' EXIT
    cache=$fs/cache
    # about 125 MB of shards, 2 epochs, 4 ranks: fills, evictions and (before) failed writes
    export INGOT_DISK_CACHE_DIR=$cache TEST_DISK_SAMPLES=36000 TEST_DISK_BATCH=400 TEST_DISK_EPOCHS=2
    shape=(-x TEST_DISK_SAMPLES -x TEST_DISK_BATCH -x TEST_DISK_EPOCHS)
    for budget in 1GiB 60MiB; do
        rm -rf "$cache"
        for j in first second; do
            INGOT_DISK_CACHE_BYTES=$budget ok "$j-$budget" 4 any "${shape[@]}"
            said "$j-$budget" "the budget in effect shrinks" 0 1
            [ "$(effect "$j-$budget")" -le $((60 << 20)) ] || fail "$j-$budget: budget in effect $(effect "$j-$budget")"
        done
    done
    # said once per job, with both numbers: room = free + held - margin (5% of 60 MiB), and the
    # budget in effect the smaller of it and INGOT_DISK_CACHE_BYTES
    for j in first-1GiB second-1GiB first-60MiB second-60MiB; do
        line="warn .*folder '$cache': INGOT_DISK_CACHE_BYTES is [0-9]* bytes, its filesystem has room for [0-9]* ([0-9]* bytes free and [0-9]* held by the folder, less a margin of 3145728 of its 62914560): the budget in effect is [0-9]* bytes$"
        said "$j" "$line"
        grep "$line" "$work/$j.out" | sed 's/.*INGOT_DISK_CACHE_BYTES is //' | tr -c '0-9\n' ' ' |
            awk '{exit !($2 == $3 + $4 - $5 && $7 == ($1 < $2 ? $1 : $2))}' ||
            fail "$j: the room or the budget in effect does not add up: $(grep "$line" "$work/$j.out")"
    done
    [ "$(counter second-1GiB failed)" -le 10 ] || fail "the second job failed $(counter second-1GiB failed) fills"
    a=$(hits second-1GiB) b=$(hits second-60MiB)
    echo "second job's hits: $a with INGOT_DISK_CACHE_BYTES=1GiB, $b with 60MiB; failed fills $(counter second-1GiB failed) and $(counter second-60MiB failed)"
    awk -v a="$a" -v b="$b" 'BEGIN {exit !(a > 0.2 && a >= b - 0.03)}' || fail "the second job hit $a of its bytes, against $b under a budget of the disk's size"
    # another file takes the rest of the filesystem: a job finds its folder full at start, serves
    # what it holds and fills within what is left of it
    dd if=/dev/zero of="$fs/ballast" bs=64k 2> /dev/null
    INGOT_DISK_CACHE_BYTES=1GiB ok full 4 any "${shape[@]}"
    said full "warn .*its filesystem has room for [0-9]* (0 bytes free and [0-9]* held by the folder"
    [ "$(counter full failed)" -le 10 ] || fail "the job on a full disk failed $(counter full failed) fills"
    c=$(hits full)
    echo "on a full disk: hits $c, failed fills $(counter full failed)"
    awk -v c="$c" -v b="$b" 'BEGIN {exit !(c >= b - 0.05)}' || fail "the job on a full disk hit $c of its bytes"
    # the folder emptied and its room taken too: no piece fits, none is read whole or written
    rm -rf "$cache"
    dd if=/dev/zero of="$fs/ballast2" bs=64k 2> /dev/null
    INGOT_DISK_CACHE_BYTES=1GiB ok none 4 any "${shape[@]}"
    said none "warn .*the budget in effect is 0 bytes; no piece fits: this node's folder serves what it holds and takes no fill"
    [ "$(counter none admitted)" = 0 ] && [ "$(counter none failed)" = 0 ] && [ "$(counter none prefetched)" = 0 ] ||
        fail "fills tried where none fits: $(grep "disk counters" "$work/none.out")"
    ;;
enospc_mid | edquot)
    err=ENOSPC text="No space left on device"
    [ "$case_" = edquot ] && err=EDQUOT text="Disk quota exceeded"
    ok full 4 any -x INGOT_FAULT=disk_write:20:$err
    said full "warn .*a piece was not cached in '$cache' (.*: write failed: $text: the disk is full or the folder's quota reached): the budget in effect shrinks from 67108864 to [0-9]* bytes"
    after_failed_writes full 1
    [ "$(effect full)" -gt 0 ] && [ "$(effect full)" -lt $((64 << 20)) ] || fail "budget in effect $(effect full)"
    [ "$(counter full evictions)" -gt 0 ] || fail "no eviction under the shrunk budget"
    ;;
erofs | erofs_mount)
    if [ "$case_" = erofs ]; then
        ok ro 4 any -x INGOT_FAULT=disk_write:20+:EROFS
    else
        [ "$(id -u)" = 0 ] || skip "a read-only bind remount needs root"
        mkdir -p "$cache"
        mount --bind "$cache" "$cache" 2> "$work/mount.err" || skip "no bind mount here: $(cat "$work/mount.err")"
        trap 'umount "$cache" 2> /dev/null; rm -rf "$work"' EXIT
        # paced, no prefetcher, three times the samples (780 pieces): pieces are filled as they
        # are read, most after the remount
        export TEST_DISK_STEP_MS=10 INGOT_DISK_PREFETCH=0 TEST_DISK_SAMPLES=3600
        job ro 4 any -x TEST_DISK_STEP_MS -x INGOT_DISK_PREFETCH -x TEST_DISK_SAMPLES &
        runner=$!
        for _ in $(seq 200); do
            grep -q "rank 0 pid [0-9]* step 0$" "$work/ro.out" 2> /dev/null && break
            sleep 0.05
        done
        # a fill's temporary open for writing makes the remount busy for a moment: try again
        for try in $(seq 100); do
            mount -o remount,bind,ro "$cache" 2> "$work/mount.err" && break
            sleep 0.02
        done
        echo "(remounted read-only after $try tries, at $(grep -c "rank 0 pid [0-9]* step" "$work/ro.out") of rank 0's steps)"
        wait $runner || fail "the job failed"
        touch "$cache/x" 2> /dev/null && skip "the folder could not be remounted read-only mid-job: $(cat "$work/mount.err")"
        unset TEST_DISK_STEP_MS INGOT_DISK_PREFETCH TEST_DISK_SAMPLES
    fi
    said ro "warn .*folder '$cache' takes no more fills (.*Read-only file system): this node's fills are off"
    grep -q "in effect [0-9]* bytes, fills off" "$work/ro.out" || fail "the report does not say fills are off"
    # the fills in flight when it turned (one per writer thread) fail; the rest are never tried
    [ "$(counter ro failed)" -ge 1 ] && [ "$(counter ro failed)" -le 4 ] || fail "$(counter ro failed) failed fills"
    [ "$(entries)" -gt 0 ] && [ "$(entries)" = "$(counter ro admitted)" ] || fail "$(entries) entries, $(counter ro admitted) admitted"
    [ "$case_" = erofs_mount ] || [ "$(entries)" = 19 ] || fail "$(entries) entries, not the 19 written before"
    grep -q "disk epoch 2 storage [0-9]* disk [1-9]" "$work/ro.out" || fail "the entries there served no read in the last epoch"
    if [ "$case_" = erofs_mount ]; then
        # the folder writable again: a next job counts what it finds and fills (its ledger
        # checked by ok; the read-only job's own counts after the remount were refused)
        umount "$cache" || fail "the read-only bind mount could not be undone"
        TEST_DISK_SAMPLES=3600 ok after 4 any -x TEST_DISK_SAMPLES
    fi
    ;;
readonly | nfs)
    mkdir -p "$cache"
    fault=disk_statfs:*:fail
    if [ "$case_" = readonly ]; then
        fault=none
        mount --bind "$cache" "$cache" 2> /dev/null && mount -o remount,bind,ro "$cache" 2> /dev/null ||
            { umount "$cache" 2> /dev/null; fault=disk_folder:*:EROFS; echo "(no bind mount here: fault site)"; }
        trap 'umount "$cache" 2> /dev/null; rm -rf "$work"' EXIT
    fi
    ok pass 4 any -x INGOT_FAULT=$fault
    grep -q "disk epoch 0 storage [1-9][0-9]* disk 0 " "$work/pass.out" || fail "storage not read as without the tier"
    if [ "$case_" = readonly ]; then said pass "folder '$cache' takes no file: Read-only file system"
    else said pass "folder '$cache' is on NFS, a filesystem shared between nodes"; fi
    ;;
missing)
    : > "$work/file"
    INGOT_DISK_CACHE_DIR=$work/file/cache ok pass 4 any
    grep -q "disk epoch 0 storage [1-9][0-9]* disk 0 " "$work/pass.out" || fail "storage not read as without the tier"
    said pass "folder '$work/file/cache' cannot be used: Not a directory"
    ;;
corrupt)
    ok fill 2 cold
    mapfile -t files < <(find "$cache" -name '*-14-*' ! -name '*.fill' | sort | head -4)
    [ ${#files[@]} = 4 ] || fail "job 1 left ${#files[@]} entries"
    truncate -s 6000 "${files[0]}"                                          # torn
    printf 'X' | dd of="${files[1]}" bs=1 seek=9000 conv=notrunc 2> /dev/null # damaged
    rm -f "${files[2]}"                                                     # deleted
    printf '\0' | dd of="${files[3]}" bs=1 seek=8 conv=notrunc 2> /dev/null   # format 0
    # the tier's own checks, not the loader's; at info level every finding names its entry
    INGOT_LOG_LEVEL=info ok bad 2 bad -x INGOT_VERIFY=off
    said bad "warn .*disk tier: entry .* is bad" 1 2 # by the rank that removed it, once per rank
    # the three entries damaged in place, each found (counters sum findings over ranks: one entry
    # found by two ranks counts twice), and nothing else
    found=$(grep -o "disk tier: entry [^ ]* is bad" "$work/bad.out" | awk '{print $4}' | sort -u)
    damaged=$(printf '%s\n' "${files[0]}" "${files[1]}" "${files[3]}" | sort)
    [ "$found" = "$damaged" ] || fail "entries found bad: [$found], damaged: [$damaged]"
    ok warm 2 warm
    # With the loader's verify on, this node's entries are read without their block hashes (the
    # loader hashes every sample as it lands: the bytes are hashed once): an entry damaged all
    # through is found by a sample's hash instead, read again from storage and removed (a later
    # epoch may write it anew); every sample still delivered right (test_disk checks each byte).
    mapfile -t files < <(find "$cache" -name '*-14-*' ! -name '*.fill' | sort | head -1)
    for off in $(seq 4200 700 20000); do
        printf 'X' | dd of="${files[0]}" bs=1 seek="$off" conv=notrunc 2> /dev/null
    done
    INGOT_LOG_LEVEL=info ok rehash 2 any
    grep -q "disk tier: entry ${files[0]} is bad (a sample read from it failed its hash)" \
        "$work/rehash.out" || fail "the entry damaged all through was not found by a sample's hash"
    ;;
kill)
    export TEST_DISK_STEP_MS=20
    orphan=$cache/ab/ab00000000000001-14-0.fill live=$cache/ab/ab00000000000002-14-0.fill
    mkdir -p "$cache/ab"
    # writers holding a temporary's lock (one process each), both there and locked; then one dies
    hold_lock "$orphan" || fail "the writer never held $orphan"; dead=$holder
    hold_lock "$live" || fail "the writer never held $live"; held=$holder
    kill -9 "$dead"; wait "$dead" 2> /dev/null
    [ -e "$orphan" ] && ! locked "$orphan" || fail "$orphan is not an unlocked orphan"
    job victim 4 any -x TEST_DISK_STEP_MS &
    runner=$!
    for _ in $(seq 200); do
        pid=$(grep -m1 -o "rank 1 pid [0-9]* step [3-9]" "$work/victim.out" 2> /dev/null | awk '{print $4}')
        [ -n "$pid" ] && break
        sleep 0.1
    done
    [ -n "$pid" ] || fail "rank 1 never reached step 3"
    kill -9 "$pid"
    wait $runner && fail "the job went on without rank 1"
    unset TEST_DISK_STEP_MS
    ok after 4 any
    [ -e "$orphan" ] && fail "the orphan of a dead writer is still there"
    [ -e "$live" ] || fail "the temporary of a live writer was removed"
    grep -q "bad 0 failed 0" "$work/after.out" || fail "the next job found bad entries"
    kill $held; wait $held 2> /dev/null
    # the whole job killed -9 mid-fill (a fresh folder; no prefetcher and pieces of about two
    # samples: fills go with the reads)
    rm -rf "$cache"
    export TEST_DISK_STEP_MS=20 INGOT_DISK_PREFETCH=0 INGOT_DISK_CACHE_PIECE=4KiB
    job whole 4 any -x TEST_DISK_STEP_MS -x INGOT_DISK_PREFETCH &
    runner=$!
    pids=()
    for _ in $(seq 200); do
        mapfile -t pids < <(grep -o "rank [0-9]* pid [0-9]* step [1-9]" "$work/whole.out" 2> /dev/null |
            awk '{print $4}' | sort -u)
        [ ${#pids[@]} = 4 ] && break
        sleep 0.1
    done
    [ ${#pids[@]} = 4 ] || fail "the ranks never all reached step 1"
    kill -9 "${pids[@]}"
    wait $runner && fail "the job went on with every rank killed"
    unset TEST_DISK_STEP_MS INGOT_DISK_PREFETCH
    ok after_whole 4 any
    grep -q "disk epoch 0 storage [1-9]" "$work/after_whole.out" || fail "the killed job had filled everything"
    grep -q "bad 0 failed 0" "$work/after_whole.out" || fail "the job after a killed one found bad entries"
    [ -z "$(find "$cache" -name '*.fill')" ] || fail "temporaries of the killed job left"
    export INGOT_DISK_CACHE_PIECE=16KiB
    ;;
kill_keeper)
    # the keeper (rank 0, the node's lowest: the one writer of its entries) stopped by the fault
    # site at its 5th entry, written and synced, before its rename, holding its lock; then killed
    # -9. Its other writers stop where they are: any of their temporaries is there too, locked or
    # (made, not yet locked) not.
    export TEST_DISK_STEP_MS=20
    job kk 4 any -x TEST_DISK_STEP_MS -x INGOT_FAULT=disk_publish:5:fail &
    runner=$!
    await_line "$work/kk.out" "^rank 0 pid [0-9]+$" 60 $runner || fail "rank 0 never said its pid"
    pid=$(grep -m1 -E "^rank 0 pid [0-9]+$" "$work/kk.out" | awk '{print $4}')
    # a failed check leaves no stopped rank behind (its death ends the job)
    trap 'kill -9 "$pid" 2> /dev/null; [ -n "${DISK_KEEP:-}" ] || rm -rf "$work"' EXIT
    for _ in $(seq 1200); do
        stopped "$pid" || ! kill -0 $runner 2> /dev/null && break
        sleep 0.05
    done
    stopped "$pid" || fail "the keeper (pid $pid) never stopped at its 5th entry"
    mapfile -t fills < <(find "$cache" -name '*.fill')
    [ "$(locked_fills)" -ge 1 ] || fail "no temporary locked by the stopped keeper, of ${#fills[@]}"
    before=$(entries)
    [ "$before" -ge 4 ] || fail "$before entries published before the 5th, not 4"
    kill -9 "$pid"
    t0=$(now)
    for _ in $(seq 600); do kill -0 $runner 2> /dev/null || break; sleep 0.05; done
    ! kill -0 $runner 2> /dev/null || fail "the job without its keeper still runs 30 s after its death"
    rc=0; wait $runner || rc=$?
    [ $rc != 0 ] && [ $rc != 124 ] || fail "the job without its keeper: exit $rc (124: it hung)"
    echo "(the job ended $(seconds_since "$t0") s after its keeper's death, exit $rc)"
    for f in "${fills[@]}"; do
        [ -e "$f" ] && ! locked "$f" || fail "$f is not an unlocked orphan"
    done
    unset TEST_DISK_STEP_MS
    INGOT_LOG_LEVEL=info ok after_kk 4 any
    # its scan removed the orphans and found the entries published, each this job's to serve
    said after_kk "disk tier: $cache holds $before entries ([0-9]* bytes; $before of this job's [0-9]* pieces homed here), ${#fills[@]} orphans removed, 0 fills of live writers"
    [ -z "$(find "$cache" -name '*.fill')" ] || fail "temporaries left"
    grep -q "bad 0 failed 0" "$work/after_kk.out" || fail "the job after the keeper's death found bad entries or failed fills"
    said after_kk "stayed locked" 0 0
    ;;
scan_mid_fill)
    # another job's start-up scan while this job's written fills wait on the ledger: the script
    # holds the ledger's lock while the first job fills, stops that job's keeper, lets a second
    # job's scan have the lock, then continues the first; each entry counted once
    "$mpiexec" --oversubscribe -np 1 "$exe" "$work" 0 pack || fail "packing the dataset"
    export TEST_DISK_STEP_MS=20 INGOT_DISK_PREFETCH=0
    job filler 2 any -x TEST_DISK_STEP_MS -x INGOT_DISK_PREFETCH & a=$!
    await_line "$work/filler.out" "^rank 0 pid [0-9]+ step 0$" 60 $a || fail "the first job never took a step"
    pid=$(grep -m1 -E "^rank 0 pid [0-9]+$" "$work/filler.out" | awk '{print $4}')
    (exec 9< "$cache/ledger" && flock 9 && : > "$work/held" && exec sleep 60) > /dev/null 2>&1 &
    holder=$!
    trap 'kill -CONT "$pid" 2> /dev/null; kill "$holder" 2> /dev/null; [ -n "${DISK_KEEP:-}" ] || rm -rf "$work"' EXIT
    for _ in $(seq 200); do [ -e "$work/held" ] && break; sleep 0.05; done
    [ -e "$work/held" ] || fail "the script never held the ledger's lock"
    # a fill of the first job waiting on the ledger: published and not counted, or its temporary
    # written (locked) and not published; then a moment for the writes under way to end
    waiting() {
        [ "$(held_all "$cache")" -gt "$(ledger "$cache")" ] && return 0
        [ "$(locked_fills)" -gt 0 ]
    }
    # (up to 30 s: under a loaded machine, as in ctest -j2 beside an object-store test, the first
    # job's first fill came later than 10 s once)
    for _ in $(seq 600); do waiting && break; sleep 0.05; done
    waiting || fail "no fill of the first job waited on the ledger"
    sleep 1
    kill -STOP "$pid"
    for _ in $(seq 200); do stopped "$pid" && break; sleep 0.05; done
    stopped "$pid" || fail "the first job's keeper (pid $pid) did not stop"
    echo "(the first job stopped with $(($(held_all "$cache") - $(ledger "$cache"))) bytes published and not counted, $(find "$cache" -name '*.fill' | wc -l) temporaries)"
    INGOT_LOG_LEVEL=info job scanner 2 any & b=$!
    kill "$holder"
    await_line "$work/scanner.out" "disk tier: $cache holds" 60 $b || fail "the second job never scanned"
    kill -CONT "$pid"
    wait $a || fail "the first job failed"
    wait $b || fail "the second job failed"
    unset TEST_DISK_STEP_MS INGOT_DISK_PREFETCH
    said filler "stayed locked" 0 0
    grep -o "holds .* fills of live writers" "$work/scanner.out"
    ledger_exact "filler and scanner"
    ;;
two_jobs)
    "$mpiexec" --oversubscribe -np 1 "$exe" "$work" 0 pack || fail "packing the dataset"
    # the jobs meet before their loaders (test_disk.c's gate), then read for about 1.8 s each,
    # paced, with no prefetcher: each fills as it reads, the two at once
    export TEST_DISK_GATE=$work/gate TEST_DISK_PARTIES=2 TEST_DISK_STEP_MS=20 INGOT_DISK_PREFETCH=0
    mkdir -p "$TEST_DISK_GATE"
    gated=(-x TEST_DISK_GATE -x TEST_DISK_PARTIES -x TEST_DISK_STEP_MS -x INGOT_DISK_PREFETCH)
    job first 2 any "${gated[@]}" & a=$!
    job second 2 any "${gated[@]}" & b=$!
    wait $a || fail "the first of two jobs failed"
    wait $b || fail "the second of two jobs failed"
    unset TEST_DISK_GATE TEST_DISK_PARTIES TEST_DISK_STEP_MS INGOT_DISK_PREFETCH
    at() { grep -o "rank 0 $2 step at [0-9]*" "$work/$1.out" | awk '{print $NF}'; }
    for j in first second; do
        [ -n "$(at $j first)" ] && [ -n "$(at $j last)" ] || fail "$j: no time of its first or last step"
    done
    [ "$(at first first)" -lt "$(at second last)" ] && [ "$(at second first)" -lt "$(at first last)" ] ||
        fail "the jobs' reads did not overlap: first $(at first first) to $(at first last), second $(at second first) to $(at second last)"
    for j in first second; do
        grep -q "disk epoch 0 storage [1-9]" "$work/$j.out" || fail "$j read nothing from storage: the other had filled it all"
    done
    # each entry published by one keeper alone (the other's fill of it found it there); the
    # counters are read before the last queued fills are written, at destroy
    [ "$(entries)" -ge $(($(counter first admitted) + $(counter second admitted))) ] ||
        fail "$(entries) entries, fewer than $(counter first admitted) + $(counter second admitted) admitted"
    ledger_exact "first and second"
    [ -z "$(find "$cache" -name '*.fill')" ] || fail "temporaries left"
    ok third 2 warm
    ;;
budgets)
    rc=0
    TEST_DISK_EXPECT=any timeout 60 "$mpiexec" --oversubscribe -x INGOT_DISK_CACHE_DIR \
        -x INGOT_DISK_CACHE_PIECE -x INGOT_TIMEOUT -np 1 -x INGOT_DISK_CACHE_BYTES=1MiB "$exe" \
        "$work" 0 : -np 1 -x INGOT_DISK_CACHE_BYTES=2MiB "$exe" "$work" 0 > "$work/b.out" 2>&1 ||
        rc=$?
    cat "$work/b.out" | tail -5
    [ $rc != 0 ] || fail "differing budgets were accepted"
    grep -q "ranks of node 0 (host .*) give different values: rank 0 (1048576 bytes), rank 1 (2097152 bytes)" \
        "$work/b.out" || fail "the ranks and their budgets are not named"
    ;;
budget_piece)
    # a piece of 16 KiB and its header of 4 KiB: 20 KiB is one entry, a byte less none
    rc=0; INGOT_DISK_CACHE_BYTES=20479 job small 2 any || rc=$?
    [ $rc != 0 ] || fail "a budget smaller than one entry was taken"
    said small "INGOT_DISK_CACHE_BYTES=20479 is smaller than one entry: a piece (INGOT_DISK_CACHE_PIECE=16384) and its header (4096 bytes) take 20480 bytes"
    INGOT_DISK_CACHE_BYTES=20480 ok one 2 any
    ;;
modes)
    # a fresh folder and its missing parent, made under umask 000: the modes asked for, not the
    # umask's
    cache=$work/made/cache
    (umask 000 && INGOT_DISK_CACHE_DIR=$cache job fill 2 cold) || fail "the job that fills it"
    [ "$(find "$cache" -mindepth 1 -type d | wc -l)" -gt 1 ] && [ "$(entries)" -gt 1 ] && [ -f "$cache/ledger" ] ||
        fail "no fan-out folders, entries or ledger made"
    other=$(find "$work/made" \( -type d ! -perm 0700 \) -o \( -type f ! -perm 0600 \) -printf '%m %p\n')
    [ -z "$other" ] || fail "made with other modes: $(echo "$other" | head -5)"
    INGOT_DISK_CACHE_DIR=$cache ok again 2 warm
    ;;
folder_group | folder_world)
    mkdir -p "$cache"
    mode=0770 what="writable by its group"
    [ "$case_" = folder_world ] && mode=0777 what="writable by its group, writable by others"
    chmod $mode "$cache"
    ok pass 2 any
    refused pass "$cache" "it is $what"
    untouched "$cache"
    ;;
folder_link_own | folder_link_else)
    # a folder of this user's, 0700 (the tier would take it by its own name), or one elsewhere
    # (world-writable, sticky: a /tmp)
    there=$work/mine mode=0700
    [ "$case_" = folder_link_else ] && there=$work/elsewhere mode=1777
    mkdir -p "$there" && chmod $mode "$there"
    ln -s "$there" "$cache"
    ok pass 2 any
    refused pass "$cache" "it is a symbolic link to '$there'" "$cache"
    untouched "$there"
    # the user's folder itself, by its own name, is taken
    [ "$case_" = folder_link_else ] || INGOT_DISK_CACHE_DIR=$there ok own 2 cold
    ;;
folder_fanout)
    # fan-out folders another user could write into, or that lead elsewhere: the folder refused
    mkdir -p "$cache/ab" "$work/elsewhere" && chmod 0700 "$cache" && chmod 0770 "$cache/ab"
    ok grp 2 any
    refused grp "$cache" "its fan-out folder 'ab' is writable by its group" "$cache/ab"
    untouched "$cache" 1
    rmdir "$cache/ab" && ln -s "$work/elsewhere" "$cache/cd"
    ok link 2 any
    refused link "$cache" "its fan-out folder 'cd' is a symbolic link" "$cache/cd"
    untouched "$cache" 1
    untouched "$work/elsewhere"
    if [ "$(id -u)" = 0 ] && id -u nobody > /dev/null 2>&1; then
        rm "$cache/cd" && mkdir -m 0700 "$cache/ef" && chown nobody "$cache/ef"
        ok foreign 2 any
        refused foreign "$cache" "its fan-out folder 'ef' is owned by another user" "$cache/ef"
        untouched "$cache" 1
    fi
    ;;
folder_foreign)
    need_nobody
    chmod 1777 "$work" # a /var/tmp: anyone makes folders in it, the dataset read by anyone
    "$mpiexec" --oversubscribe -np 1 "$exe" "$work" 0 pack > "$work/pack.out" 2>&1 || fail "packing the dataset"
    # nobody's folder, refused by root's job
    as_nobody mkdir -m 0700 "$cache" || fail "nobody's mkdir"
    ok theirs 2 any
    refused theirs "$cache" "it is owned by another user"
    untouched "$cache"
    # root's folder (0755: nobody reads it), refused by nobody's job
    mine=$work/root-cache
    mkdir -m 0755 "$mine"
    jobs_as_nobody
    INGOT_DISK_CACHE_DIR=$mine ok root 2 any
    refused root "$mine" "it is owned by another user"
    untouched "$mine"
    jobs_as_root
    # the issue's case: the default's name (/var/tmp/ingot-cache-%u) made beforehand by another
    # user with mode 0777
    as_nobody mkdir -m 0777 "$work/ingot-cache-root" ||
        fail "nobody's mkdir of root's default-named folder"
    INGOT_DISK_CACHE_DIR=$work/ingot-cache-%u ok default 2 any
    refused default "$work/ingot-cache-root" "it is owned by another user, writable by its group, writable by others"
    untouched "$work/ingot-cache-root"
    ;;
shared)
    need_nobody
    "$mpiexec" --oversubscribe -np 1 "$exe" "$work" 0 pack > "$work/pack.out" 2>&1 || fail "packing the dataset"
    # a team's folder: nobody's, of root's group, set-group-ID and writable by the group
    mkdir "$cache" && chown nobody:0 "$cache" && chmod 2770 "$cache"
    ok alone 2 any
    refused alone "$cache" "it is owned by another user, writable by its group"
    untouched "$cache"
    share=(-x INGOT_DISK_CACHE_SHARED=y)
    (umask 022 && job fill 2 cold "${share[@]}") || fail "root's job filling the shared folder"
    [ "$(entries)" -gt 1 ] && [ "$(find "$cache" -mindepth 1 -type d | wc -l)" -gt 1 ] || fail "nothing made in it"
    other=$(find "$cache" -mindepth 1 \( \( -type d ! -perm 2770 \) -o \( -type f ! -perm 0660 \) -o ! -group 0 \) -printf '%m %g %p\n')
    [ -z "$other" ] || fail "made with other modes or groups: $(echo "$other" | head -5)"
    jobs_as_nobody 0 # nobody, in root's group, reads what root wrote
    ok reader 2 warm "${share[@]}"
    jobs_as_root
    chmod 2777 "$cache"
    ok world 2 any "${share[@]}"
    refused world "$cache" "it is writable by others"
    chmod 2770 "$cache" && ln -s "$cache" "$work/team"
    INGOT_DISK_CACHE_DIR=$work/team ok link 2 any "${share[@]}"
    refused link "$work/team" "it is a symbolic link to '$cache'"
    jobs_as_nobody # nobody's own folder, but writable by a group nobody is not in
    ok stranger 2 any "${share[@]}"
    refused stranger "$cache" "it is writable by a group this user is not in"
    ;;
busy_keeper)
    export TEST_DISK_STEP_MS=10 INGOT_PEER_TIMEOUT=2s
    hold=(-x TEST_DISK_STEP_MS -x INGOT_PEER_TIMEOUT -x INGOT_FAULT=disk_hold:10:fail)
    ok busy 4 cold "${hold[@]}"
    ! grep "failed a disk-tier request\|did not answer" "$work/busy.out" || fail "a rank gave its keeper up while it held its lock"
    grep -q "bad 0 failed 0" "$work/busy.out" || fail "bad entries or failed fills"
    busy=$(grep -o "keeper busy [0-9]*" "$work/busy.out" | awk '{print $NF}')
    [ "${busy:-0}" -gt 0 ] || fail "no peer found the keeper busy: the hold missed the pushes"
    rm -rf "$cache"
    ok busy_abort 4 cold "${hold[@]}" -x INGOT_CACHE_BYTES=64MiB -x INGOT_PEER_FAILURE=abort
    ! grep "failed a disk-tier request\|did not answer" "$work/busy_abort.out" || fail "a rank gave its keeper up"
    ;;
*) fail "unknown case $case_" ;;
esac
echo "disk $case_ $arg: ok"
