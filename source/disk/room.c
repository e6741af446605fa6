/*
 * The budget in effect at a node's keeper: the smaller of INGOT_DISK_CACHE_BYTES and what the
 * folder's filesystem can hold (the bytes free to this user, plus what the folder already holds,
 * less a margin). Decided once at start, after the scan, and said once with both numbers. When
 * the filesystem refuses a fill for want of room (ENOSPC, EDQUOT: something else took it), the
 * budget shrinks to what the folder holds then, or to the filesystem's room when that is less
 * still (measured again); the keeper evicts down to it. It never grows back within a job: a disk
 * that filled once fills again; the next job measures afresh. A folder that refuses a fill for
 * good (EROFS: remounted read-only; EACCES, EPERM) turns this node's fills off; its entries go on
 * serving reads, each checked as it is read (docs/tiers.md says why).
 *
 * Only the keeper uses the budget (the node's other ranks ask it), so the node's ranks cannot
 * disagree on it; the configured budgets are what home.c gathers and compares.
 */
#include "source/disk/disk_impl.h"
#include "base/log.h"
#include "base/status.h"
#include <inttypes.h>
#include <string.h>

/* The margin left free on the folder's filesystem: 5% of it (ext4 reserves as much for root by
 * default), at most 64 MiB (5% of a large disk would waste tens of GB). It covers what the ledger
 * does not count: entries rounded up to the filesystem's blocks, the fan-out folders, other jobs'
 * temporaries being written, and other users' writes between two looks. */
#define ROOM_MARGIN_PCT 5
#define ROOM_MARGIN_MAX (64ull << 20)

static uint64_t room_margin(const ingot_disk_fs_t *fs)
{
    uint64_t margin = fs->size * ROOM_MARGIN_PCT / 100;
    return margin < ROOM_MARGIN_MAX ? margin : ROOM_MARGIN_MAX;
}

/* What the folder may hold on @p fs when it holds @p held bytes now. */
static uint64_t room_of(const ingot_disk_fs_t *fs, uint64_t held)
{
    uint64_t can = fs->avail + held, margin = room_margin(fs);
    return can > margin ? can - margin : 0;
}

static uint64_t room_min(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

/* A clause for a budget in which no piece fits, or "". */
static const char *room_nothing_fits(const ingot_disk_t *d, uint64_t budget)
{
    return budget < INGOT_DISK_HEADER_BYTES + d->piece_bytes
               ? "; no piece fits: this node's folder serves what it holds and takes no fill"
               : "";
}

void ingot_disk_room_start(ingot_disk_t *d, uint64_t held)
{
    disk_keeper_t *k = d->keeper;
    ingot_disk_fs_t fs;
    ingot_status_t st = ingot_disk_folder_fs(&d->folder, &fs);
    if (st != INGOT_OK) {
        atomic_store(&k->budget, d->budget);
        ingot_info("disk tier: the filesystem of '%s' cannot be measured (statfs: %s): the "
                   "budget in effect is INGOT_DISK_CACHE_BYTES, %" PRIu64 " bytes",
                   d->dir, ingot_status_string(st), d->budget);
        return;
    }
    uint64_t room = room_of(&fs, held), budget = room_min(room, d->budget);
    atomic_store(&k->budget, budget);
    ingot_log_level_t level = room < d->budget ? INGOT_LOG_LEVEL_WARN : INGOT_LOG_LEVEL_INFO;
    ingot_log(level,
              "disk tier: folder '%s': INGOT_DISK_CACHE_BYTES is %" PRIu64 " bytes, its "
              "filesystem has room for %" PRIu64 " (%" PRIu64 " bytes free and %" PRIu64
              " held by the folder, less a margin of %" PRIu64 " of its %" PRIu64
              "): the budget in effect is %" PRIu64 " bytes%s",
              d->dir, d->budget, room, fs.avail, held, room_margin(&fs), fs.size, budget,
              room_nothing_fits(d, budget));
}

uint64_t ingot_disk_room_shrink(ingot_disk_t *d, uint64_t held, const char *why)
{
    disk_keeper_t *k = d->keeper;
    ingot_disk_fs_t fs = {0};
    uint64_t room = UINT64_MAX;
    if (ingot_disk_folder_fs(&d->folder, &fs) == INGOT_OK) {
        room = room_of(&fs, held);
    }
    uint64_t was = atomic_load(&k->budget), now = room_min(was, room_min(held, room));
    atomic_store(&k->budget, now);
    /* said once as a warning; a later shrink (the disk still filling) at info level */
    ingot_log_level_t level = atomic_exchange(&k->said_full, 1) == 0 ? INGOT_LOG_LEVEL_WARN
                                                                     : INGOT_LOG_LEVEL_INFO;
    ingot_log(level,
              "disk tier: a piece was not cached in '%s' (%s: the disk is full or the folder's "
              "quota reached): the budget in effect shrinks from %" PRIu64 " to %" PRIu64
              " bytes (the folder holds %" PRIu64 "; its filesystem has %" PRIu64
              " bytes free), entries evicted down to it, the job goes on%s (further shrinks are "
              "said at info level)",
              d->dir, why, was, now, held, fs.avail, room_nothing_fits(d, now));
    return now;
}

void ingot_disk_room_off(ingot_disk_t *d, const char *why)
{
    if (atomic_exchange(&d->keeper->fills_off, 1) == 0) {
        ingot_warn("disk tier: folder '%s' takes no more fills (%s): this node's fills are off "
                   "for the rest of the job; the entries it holds still serve reads, each "
                   "checked as it is read; the job goes on from storage",
                   d->dir, why);
    }
}

int ingot_disk_room_fits(const ingot_disk_t *d, uint64_t bytes)
{
    const disk_keeper_t *k = d->keeper;
    return !atomic_load(&k->fills_off) && bytes <= atomic_load(&k->budget);
}
