/*
 * Fault injection for tests (compiled in only with -DINGOT_FAULT_INJECTION=ON).
 * INGOT_FAULT="site:nth:action[,site:nth:action...]" makes the nth call (1-based; "N+" = the nth
 * and every later one; "*" = every one) at a site fail with the action's errno.
 * Sites: malloc, mmap, mlock, cuda_pin, open, pread, thread, cuda_malloc; and three that
 * damage instead of failing: cache_fill (the nth sample put into this rank's cache window gets
 * one byte flipped), peer_key (the packed memory key this rank sends is cut to one byte),
 * peer_read (the nth read from a peer skips the requester's bounds check and asks past the
 * window's end, so the owner must refuse it; under INGOT_PEER_PROTOCOL=put the nth put asks the
 * owner to write past the requester's registered buffer). The disk tier's: disk_write (each
 * write of an entry: ENOSPC, EDQUOT, EROFS, EIO), disk_folder (the folder's writability probe: EROFS, EACCES)
 * and disk_statfs (the nth statfs of a folder reports a filesystem shared between nodes, NFS).
 * arrival: the nth arrival of this process at a barrier that names who never came (arrival.h)
 * stops it (SIGSTOP) once it has arrived, as a rank a debugger or a freezer stops there.
 * part_fetch: the nth part this process fetches for its node's part cache stops it (SIGSTOP)
 * with the part's GET out: the node's other ranks that need the part wait on a silent fetcher.
 * disk_publish: the nth disk-tier entry written stops its process (SIGSTOP) once the fill is
 * written and synced, before its rename: a keeper stopped, or then killed, mid-fill.
 * disk_hold: the nth fill the node's keeper admits holds the keeper's lock for 3 s, as a long
 * eviction or an epoch's trace rebuild would.
 * Actions: an errno name (ENOMEM, EIO, EAGAIN, EPERM, ENOSPC, EINVAL, ENOENT, EACCES, EROFS,
 * EDQUOT) or
 * "fail" (the site's natural errno).
 */
#ifndef INGOT_BASE_FAULT_H
#define INGOT_BASE_FAULT_H

#include <ingot/status.h>

typedef enum ingot_fault_site {
    INGOT_FAULT_MALLOC,
    INGOT_FAULT_MMAP,
    INGOT_FAULT_MLOCK,
    INGOT_FAULT_CUDA_PIN,
    INGOT_FAULT_OPEN,
    INGOT_FAULT_PREAD,
    INGOT_FAULT_THREAD,
    INGOT_FAULT_CUDA_MALLOC,
    INGOT_FAULT_CACHE_FILL,
    INGOT_FAULT_PEER_KEY,
    INGOT_FAULT_PEER_READ,
    INGOT_FAULT_DISK_WRITE,
    INGOT_FAULT_DISK_FOLDER,
    INGOT_FAULT_DISK_STATFS,
    INGOT_FAULT_ARRIVAL,
    INGOT_FAULT_PART_FETCH,
    INGOT_FAULT_DISK_PUBLISH,
    INGOT_FAULT_DISK_HOLD,
    INGOT_FAULT_SITE_LAST
} ingot_fault_site_t;

/** Check a fault spec's syntax without arming it (INGOT_ERR_CONFIG with the reason in err). */
ingot_status_t ingot_fault_validate(const char *spec, char *err, size_t errlen);

/** Parse and arm a fault spec (replaces any previous one). INGOT_ERR_CONFIG with a message
 *  naming the bad part; "none" disarms everything. */
ingot_status_t ingot_fault_arm(const char *spec, char *err, size_t errlen);

#ifdef INGOT_FAULT_INJECTION
/** 0, or the errno this call at @p site must fail with. Thread-safe, counts every call. */
int ingot_fault_check(ingot_fault_site_t site);
#    define INGOT_FAULT_ENABLED 1
#else
static inline int ingot_fault_check(ingot_fault_site_t site)
{
    (void)site;
    return 0;
}
#    define INGOT_FAULT_ENABLED 0
#endif

#endif
