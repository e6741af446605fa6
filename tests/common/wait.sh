# shellcheck shell=bash
# Waiting on events rather than for fixed times, for the test scripts (sourced by bash scripts;
# it sets seen_at, holder and stall_watcher for them):
# a timing is measured from the event it is about (a line a job prints, a process that stopped
# itself, a lock a writer holds), and a wait ends when the event comes, bounded only against a
# hang; a timing's bound allows for the time the whole machine stalled. On a loaded machine a
# fixed sleep is too short and a measurement that includes a launcher's start or teardown too long.

now() { date +%s.%N; }

# seconds_since T0 [T1]: T1 (default now) minus T0, two decimals
seconds_since() { awk -v a="${2:-$(now)}" -v b="$1" 'BEGIN { printf "%.2f", a - b }'; }

# in_seconds S: the time S seconds from now; before T: now is before time T
in_seconds() { awk -v t="$(now)" -v s="$1" 'BEGIN { printf "%.2f", t + s }'; }
before() { awk -v t="$(now)" -v e="$1" 'BEGIN { exit !(t < e) }'; }

# await_line FILE ERE SECONDS [PID]: wait until FILE has a line matching ERE (grep -E), looking
# every 0.05 s, for at most SECONDS, or until process PID has ended without the line. Sets
# seen_at to the time the line was first seen; returns 1 when it never came.
await_line() {
    local file=$1 ere=$2 end pid=${4:-}
    end=$(in_seconds "$3")
    seen_at=
    while :; do
        if grep -Eq -- "$ere" "$file" 2> /dev/null; then seen_at=$(now); return 0; fi
        if [ -n "$pid" ] && ! kill -0 "$pid" 2> /dev/null; then
            grep -Eq -- "$ere" "$file" 2> /dev/null && { seen_at=$(now); return 0; }
            return 1
        fi
        before "$end" || return 1
        sleep 0.05
    done
}

# stopped PID: process PID is stopped by a signal (state T in /proc/PID/stat)
stopped() {
    local stat
    stat=$(sed 's/.*) //' "/proc/$1/stat" 2> /dev/null) && [ "${stat%% *}" = T ]
}

# await_stopped PID SECONDS: wait until process PID is stopped (a test program that stops itself
# at a point of its own, so the script times from a point it is sure of), looking every 0.05 s,
# for at most SECONDS. Sets seen_at to the time it was first seen stopped; returns 1 when it ended
# or never stopped.
await_stopped() {
    local end
    end=$(in_seconds "$2")
    seen_at=
    while :; do
        if stopped "$1"; then seen_at=$(now); return 0; fi
        kill -0 "$1" 2> /dev/null && before "$end" || return 1
        sleep 0.05
    done
}

# Stalls of the whole machine: on a shared VM every process at times stops at once, for seconds
# (seen: a process sleeping 0.1 s woke 22 s later), which no bound on a product's timing absorbs.
# stall_watch FILE starts a watcher (its pid in stall_watcher) that notes the time every 0.1 s;
# stalled T0 T1 says for how long within [T0, T1] it was kept from running (its gaps over 0.5 s,
# less the 0.1 s it slept). A bound allows for that much more: nothing was timed while nothing ran.
stall_watch() {
    stall_file=$1
    (while :; do echo "$EPOCHREALTIME"; sleep 0.1; done) > "$stall_file" 2> /dev/null &
    stall_watcher=$!
}
stalled() {
    awk -v a="$1" -v b="$2" '
        p != "" { lo = p > a ? p : a; hi = $1 < b ? $1 : b
                  if ($1 - p > 0.5 && hi > lo) s += hi - lo - 0.1 }
        { p = $1 }
        END { printf "%.2f", (s > 0 ? s : 0) }' "$stall_file"
}
# allowing T0 T1 BOUND: BOUND plus how long the machine stalled within [T0, T1]
allowing() { awk -v b="$3" -v s="$(stalled "$1" "$2")" 'BEGIN { print b + s }'; }

# locked FILE: FILE exists and a process holds its flock (flock -n fails)
locked() { [ -e "$1" ] && ! flock -n "$1" true; }

# hold_lock FILE: a process (its pid in holder) that creates FILE, holds its flock and sleeps
# 30 s, as a writer of a disk-tier temporary does; returns once the lock is held (fails after
# 10 s)
hold_lock() {
    (exec 9> "$1" && flock 9 && exec sleep 30) > /dev/null 2>&1 &
    holder=$!
    for _ in $(seq 200); do
        locked "$1" && return 0
        sleep 0.05
    done
    return 1
}
